//! The Lua scripts as build.rs reads them (build/lua.rs): every script of the tree
//! builds, and a script whose header and body disagree does not; and the queue
//! entries and wake messages, written on one side (Rust or Lua), read the same on the
//! other, on a real server.

#[path = "../build/lua.rs"]
#[allow(dead_code)]
mod lua;
mod support;

use redis::Value;
use redis_lock::kinds::core::entry::{self, Mark, Message};
use std::path::Path;
use support::RedisServer;

fn kinds_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/kinds")
}

/// The helpers of the tree, by their path under `src/kinds/`.
fn lib(name: &str) -> Option<String> {
    std::fs::read_to_string(kinds_dir().join(format!("{name}.lua"))).ok()
}

/// Builds `source` as the script `test/sample`, with the tree's helpers.
fn build(source: &str) -> Result<lua::Script, String> {
    lua::build("test/sample", source, &lib)
}

#[test]
fn every_script_of_the_tree_builds_with_its_slots_named() {
    let mut built = 0;
    for kind in ["lock", "semaphore", "multi"] {
        for file in std::fs::read_dir(kinds_dir().join(kind)).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|x| x != "lua") {
                continue;
            }
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            let source = std::fs::read_to_string(&path).unwrap();
            let script = lua::build(&format!("{kind}/{stem}"), &source, &lib)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!script.text.contains("--"), "{kind}/{stem}: a comment was left in");
            assert!(script.text.starts_with("local "), "{kind}/{stem}: no prologue");
            built += 1;
        }
    }
    assert_eq!(
        built,
        redis_lock::kinds::scripts::all().len(),
        "the generated list has every script"
    );
}

#[test]
fn the_prologue_names_every_slot_in_the_headers_order() {
    let s = build(
        "-- sample: a test.\n--\n-- @key lock        the lock\n-- @key owner?      records\n-- @arg token       the token\n-- @flag fair       fair\n-- @arg info?       a record\n--                  going on\n--\n-- Returns 1.\nif fair then return {lock, owner, token, info} end\nreturn 1\n",
    )
    .unwrap();
    assert_eq!(
        s.text,
        "local lock, owner = KEYS[1], KEYS[2]\nlocal token, info = ARGV[1], ARGV[3]\nlocal fair = ARGV[2] == '1'\nif fair then return {lock, owner, token, info} end\nreturn 1\n"
    );
    assert_eq!(s.header.args[2].doc, "a record going on");
    assert!(s.header.keys[1].optional && s.header.args[1].ty == lua::Type::Flag);
    let group = build("-- sample: a group.\n--\n-- @keys lock readers: each key's\n-- @arg token  t\nreturn {n, lock[1], readers[n], token}\n").unwrap();
    assert!(group.text.starts_with("local token = ARGV[1]\nlocal n = #KEYS / 2\nlocal lock, readers = {}, {}\nfor i = 1, n do lock[i], readers[i] = KEYS[2 * i - 1], KEYS[2 * i] end\n"), "{}", group.text);
}

#[test]
fn a_script_whose_header_and_body_disagree_does_not_build() {
    let head = "-- sample: a test.\n--\n-- @key lock   the lock\n-- @arg token  the token\n";
    let fails = |body: &str, why: &str| {
        let e = build(&format!("{head}{body}")).err().unwrap_or_else(|| panic!("built: {body}"));
        assert!(e.contains(why), "{body}: {e}");
    };
    // A dead slot: it costs every call its encoding.
    fails("return redis.call('get', lock)\n", "\"token\" is never used");
    // A name in a string, or a field of a table, is no use of the slot.
    fails("return {redis.call('get', lock), 'token', x.token}\n", "\"token\" is never used");
    // The body never says KEYS or ARGV: every slot is named.
    fails("return {lock, token, ARGV[2]}\n", "says ARGV");
    fails("return {lock, token, KEYS[1]}\n", "says KEYS");
    // A helper that is not there, or not in a lib/ folder.
    fails("--@include lib/nothing_by_that_name\nreturn {lock, token}\n", "no helper");
    fails("--@include lock/acquire\nreturn {lock, token}\n", "only files of a lib/ folder");
    // Header errors.
    let bad_header = |source: &str, why: &str| {
        let e = build(source).err().unwrap_or_else(|| panic!("built: {source}"));
        assert!(e.contains(why), "{source}: {e}");
    };
    bad_header("-- other: the wrong name.\n-- @key lock x\nreturn lock\n", "must open with");
    bad_header(
        "-- sample: x.\n-- @key lock? x\n-- @key queue x\nreturn {lock, queue}\n",
        "only the last slots",
    );
    bad_header("-- sample: x.\n-- @arg token x\nreturn token\n", "at least one key");
    bad_header("-- sample: x.\n-- @key lock x\n-- @arg lock x\nreturn lock\n", "named twice");
    bad_header("-- sample: x.\n-- @keys lock nope: x\nreturn lock\n", "LockKeys fields");
    bad_header("-- sample: x.\n-- @key Lock x\nreturn 1\n", "lower-case");
    bad_header("-- sample: x.\n-- @kye lock x\nreturn 1\n", "unknown tag");
    // And the same script, right, builds.
    assert!(build(&format!("{head}return {{lock, token}}\n")).is_ok());
}

/// Runs lib/entry.lua (with its own includes) and `harness` on the server, the
/// entries or messages in ARGV.
fn run_entry_lib(server: &RedisServer, harness: &str, args: &[&[u8]]) -> Value {
    let mut text = String::new();
    lua::expand("test/entry", "--@include lib/entry\n", &lib, &mut text, 0).unwrap();
    text.push_str(harness);
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(text).arg(0);
    for a in args {
        cmd.arg(*a);
    }
    let mut conn = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
    cmd.query(&mut conn).unwrap()
}

#[test]
fn entries_and_messages_read_the_same_on_both_sides() {
    let server = RedisServer::start();
    let odd = b"a:b=c\x00\xff:".to_vec();
    let mut keys = Vec::new();
    entry::group_key(&mut keys, false, [b"k", b"k:queue", b"k:fence", b"k:readers"]);
    entry::group_key(&mut keys, true, [b"x:y", b"x:y:queue", b"x:y:fence", b"x:y:readers"]);
    let cases: Vec<(Vec<u8>, &str, Vec<u8>)> = vec![
        (
            entry::entry("5000", Mark::Writer(true), "redis_lock:wake:abc:1", b"", &odd),
            "1",
            b"".to_vec(),
        ),
        (
            entry::entry("0", Mark::Writer(false), "redis_lock:wake:{0a}abc:2", b"", b"t"),
            "0",
            b"".to_vec(),
        ),
        (entry::entry("700", Mark::Reader, "c", b"", b"reader"), "r", b"".to_vec()),
        (entry::entry("700", Mark::Permits(12), "c", b"", b"w"), "12", b"".to_vec()),
        (entry::entry("9", Mark::Group(true), "ch", &keys, b"multi"), "m1", keys.clone()),
    ];
    for (sent, mark, list) in &cases {
        // Queued as the scripts queue it: until when, in front (see stamp).
        let mut queued = b"99999999999999:".to_vec();
        queued.extend_from_slice(sent);
        let harness = "local u, lease, mark, ch, rest = split_entry(ARGV[1])\nreturn {tostring(u), lease, mark, ch, rest}\n";
        let Value::Array(parts) = run_entry_lib(&server, harness, &[&queued]) else {
            panic!("no array")
        };
        let parts: Vec<Vec<u8>> = parts
            .into_iter()
            .map(|v| match v {
                Value::BulkString(b) => b,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(parts[0], b"99999999999999");
        let text = String::from_utf8_lossy(sent).to_string();
        let lease = text.split(':').next().unwrap().as_bytes().to_vec();
        assert_eq!(parts[1], lease, "{text}");
        assert!(
            parts[2].starts_with(mark.as_bytes()),
            "{text}: mark {:?}",
            String::from_utf8_lossy(&parts[2])
        );
        let token = &parts[4][list.len()..];
        assert_eq!(&parts[4][..list.len()], &list[..], "{text}: the key list");
        assert!(sent.ends_with(token) && !token.is_empty(), "{text}: the token, whole");
        // A lock's entry also reads through parse (mark 0, 1 or r), timely.
        if ["0", "1", "r"].contains(mark) {
            let harness =
                "local t, lease, mark, ch = parse(ARGV[1])\nreturn {t, lease, mark, ch}\n";
            let Value::Array(p) = run_entry_lib(&server, harness, &[&queued]) else {
                panic!("no array")
            };
            assert_eq!(p[0], Value::BulkString(token.to_vec()));
        }
    }
    // Messages: written by the scripts, read by the waiter.
    let harness = "clock = 1700000000123\nreturn {granted(ARGV[1]), granted(ARGV[1], 42), look_again(15, ARGV[1])}\n";
    let Value::Array(msgs) = run_entry_lib(&server, harness, &[&odd]) else { panic!("no array") };
    let read: Vec<Option<Message>> = msgs
        .iter()
        .map(|m| match m {
            Value::BulkString(b) => entry::message(b, &odd),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(read[0], Some(Message::Grant(None, Some(1_700_000_000_123))));
    assert_eq!(read[1], Some(Message::Grant(Some(42), Some(1_700_000_000_123))));
    assert_eq!(read[2], Some(Message::Notice(std::time::Duration::from_millis(15))));
    // And not for another token.
    if let Value::BulkString(b) = &msgs[0] {
        assert_eq!(entry::message(b, b"a:b=c"), None);
    }
}

/// The holder's state of the key `k` a test set up: the lock's value and lease, its
/// read share's score, and the fencing counter (a number is the holder's to take).
fn holder_state(server: &RedisServer, read: bool, a: &[u8]) -> (Value, bool, Value, Value) {
    let mut conn = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
    let value: Value = redis::cmd("GET").arg("k").query(&mut conn).unwrap();
    let pttl: i64 = redis::cmd("PTTL").arg("k").query(&mut conn).unwrap();
    let share: Value = if read {
        redis::cmd("ZSCORE").arg("{k}:readers").arg(a).query(&mut conn).unwrap()
    } else {
        Value::Nil
    };
    let fence: Value = redis::cmd("GET").arg("{k}:fence").query(&mut conn).unwrap();
    (value, pttl > 25_000, share, fence)
}

/// A token is the whole token, in every script of the tree that takes one: run with
/// a token one byte away from the holder's (a suffix '!', one left off, a generated
/// token's shape and '!', a last byte changed), with every flag off and then on, a
/// script leaves the holder's key as it was (its value, its lease, a reader's share,
/// the fencing counter).
/// A script that took a marked value for its token (issue 56) fails it.
#[test]
fn a_token_one_byte_away_never_touches_a_holders_key() {
    let server = RedisServer::start();
    let mut conn = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
    let hex = b"0123456789abcdef0123456789abcdef".to_vec();
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (b"job!".to_vec(), b"job".to_vec()),
        (b"job".to_vec(), b"job!".to_vec()),
        ([&hex[..], b"!"].concat(), hex.clone()),
        (hex.clone(), [&hex[..], b"!"].concat()),
        (b"job:42\x00".to_vec(), b"job:42\x01".to_vec()),
    ];
    let (mut ran, mut failed) = (0, Vec::new());
    for kind in ["lock", "multi", "semaphore"] {
        for file in std::fs::read_dir(kinds_dir().join(kind)).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|x| x != "lua") {
                continue;
            }
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            let script = lua::build(
                &format!("{kind}/{stem}"),
                &std::fs::read_to_string(&path).unwrap(),
                &lib,
            )
            .unwrap();
            let h = &script.header;
            if !h.args.iter().any(|s| s.name == "token") {
                continue;
            }
            for (a, b) in &pairs {
                for read in [false, true] {
                    for flags in [false, true] {
                        redis::cmd("FLUSHALL").query::<()>(&mut conn).unwrap();
                        let now: i64 = redis::cmd("TIME")
                            .query::<Vec<i64>>(&mut conn)
                            .map(|t| t[0] * 1000 + t[1] / 1000)
                            .unwrap();
                        if read {
                            redis::cmd("SET")
                                .arg("k")
                                .arg("")
                                .arg("PX")
                                .arg(30_000)
                                .query::<()>(&mut conn)
                                .unwrap();
                            redis::cmd("ZADD")
                                .arg("{k}:readers")
                                .arg(now + 30_000)
                                .arg(a)
                                .query::<()>(&mut conn)
                                .unwrap();
                        } else {
                            redis::cmd("SET")
                                .arg("k")
                                .arg(a)
                                .arg("PX")
                                .arg(30_000)
                                .query::<()>(&mut conn)
                                .unwrap();
                        }
                        let before = holder_state(&server, read, a);
                        let mut cmd = redis::cmd("EVAL");
                        let keys: Vec<String> = match &h.each {
                            Some((names, _)) => names
                                .iter()
                                .map(|n| {
                                    if n == "lock" {
                                        "k".to_string()
                                    } else {
                                        format!("{{k}}:{n}")
                                    }
                                })
                                .collect(),
                            None => h
                                .keys
                                .iter()
                                .map(|s| {
                                    if s.name == "lock" {
                                        "k".to_string()
                                    } else {
                                        format!("{{k}}:{}", s.name)
                                    }
                                })
                                .collect(),
                        };
                        cmd.arg(&script.text).arg(keys.len()).arg(&keys);
                        for slot in &h.args {
                            let arg: Vec<u8> = match (slot.name.as_str(), slot.ty) {
                                (_, lua::Type::Flag) => {
                                    if flags {
                                        b"1".to_vec()
                                    } else {
                                        b"0".to_vec()
                                    }
                                }
                                ("token", _) => b.clone(),
                                ("lease", _) => b"20000".to_vec(), // a renewal shows as a shorter lease
                                ("life", _) => b"10000".to_vec(),
                                ("wait", _) => b"5".to_vec(),
                                ("modes", _) => {
                                    if read {
                                        b"r".to_vec()
                                    } else {
                                        b"w".to_vec()
                                    }
                                }
                                ("sent" | "entry", _) => {
                                    [&b"+60000:30000:0:4:chan"[..], b].concat()
                                }
                                ("info", _) => Vec::new(),
                                ("weight", _) => b"1".to_vec(),
                                ("permits", _) => b"2".to_vec(),
                                (other, _) => panic!(
                                    "{kind}/{stem}: an argument this test does not know: {other}"
                                ),
                            };
                            cmd.arg(arg);
                        }
                        let reply: redis::RedisResult<Value> = cmd.query(&mut conn);
                        assert!(
                            reply.is_ok(),
                            "{kind}/{stem} {a:?}/{b:?} read {read} flags {flags}: {reply:?}"
                        );
                        if holder_state(&server, read, a) != before {
                            let show = |t: &[u8]| String::from_utf8_lossy(t).into_owned();
                            failed.push(format!("{kind}/{stem}: {:?} changed the hold of {:?} (read {read}, flags {flags})", show(b), show(a)));
                        }
                        ran += 1;
                    }
                }
            }
        }
    }
    assert!(failed.is_empty(), "{} of {ran} cases:\n{}", failed.len(), failed.join("\n"));
    assert!(ran >= 15 * 20, "ran {ran} cases");
}
