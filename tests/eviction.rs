//! Eviction's check at connect (`net::evict`, sent with a new connection's `PING` by
//! `net::pool::open`): the replies to `CONFIG GET maxmemory maxmemory-policy` and
//! `INFO memory` read in RESP2's and RESP3's shapes; hostile replies (wrong types,
//! odd lengths, huge or broken numbers, control characters) read as nothing, without
//! a panic and without failing the connection; and real servers: one that can evict
//! is counted once per process, one that cannot never, a RESP3 connection reads the
//! same, and a user refused `CONFIG` is asked `INFO`.

mod support;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis::{IntoConnectionInfo, Value};
use redis_lock::config::{TlsFiles, DEFAULT_MAX_REPLY};
use redis_lock::net::evict::{from_config, from_info, Memory};
use redis_lock::net::pool;
use redis_lock::stats::{self, Figure};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;
use support::RedisServer;

fn bulk(s: &str) -> Value {
    Value::BulkString(s.as_bytes().to_vec())
}

fn memory(policy: &str, maxmemory: u64) -> Option<Memory> {
    Some(Memory { policy: policy.to_string(), maxmemory })
}

/// A reply as redis-rs's own parser reads it (RESP3 maps stay maps, verbatim strings
/// stay verbatim).
fn parsed(bytes: &[u8]) -> Value {
    redis::parse_redis_value(bytes).expect("a valid reply")
}

#[test]
fn config_replies_read_in_resp2_and_resp3_shapes() {
    let flat = Value::Array(vec![
        bulk("maxmemory"),
        bulk("104857600"),
        bulk("maxmemory-policy"),
        bulk("allkeys-lru"),
    ]);
    assert_eq!(from_config(&flat), memory("allkeys-lru", 104_857_600));
    // Either order; names in any case; a value as an integer.
    let swapped = Value::Array(vec![
        bulk("MAXMEMORY-POLICY"),
        bulk("volatile-ttl"),
        bulk("maxmemory"),
        Value::Int(0),
    ]);
    assert_eq!(from_config(&swapped), memory("volatile-ttl", 0));
    // RESP3: a map, as redis-rs reads it.
    let map = parsed(
        b"%2\r\n$9\r\nmaxmemory\r\n$4\r\n4096\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n",
    );
    assert!(matches!(map, Value::Map(_)), "{map:?}");
    assert_eq!(from_config(&map), memory("noeviction", 4096));
    // Other settings beside them (a server that answers more than asked) are passed over.
    let more = Value::Array(vec![
        bulk("maxmemory-samples"),
        bulk("5"),
        bulk("maxmemory"),
        bulk("1"),
        bulk("maxmemory-policy"),
        bulk("allkeys-lfu"),
    ]);
    assert_eq!(from_config(&more), memory("allkeys-lfu", 1));
}

#[test]
fn info_replies_read_in_resp2_and_resp3_shapes() {
    let text = "# Memory\r\nused_memory:1021128\r\nmaxmemory:67108864\r\nmaxmemory_human:64.00M\r\nmaxmemory_policy:allkeys-lru\r\nallocator_frag_ratio:1.0\r\n";
    assert_eq!(from_info(&bulk(text)), memory("allkeys-lru", 67_108_864));
    let verbatim = parsed(format!("={}\r\ntxt:{text}\r\n", text.len() + 4).as_bytes());
    assert!(matches!(verbatim, Value::VerbatimString { .. }), "{verbatim:?}");
    assert_eq!(from_info(&verbatim), memory("allkeys-lru", 67_108_864));
    assert_eq!(
        from_info(&bulk("maxmemory:0\nmaxmemory_policy:noeviction\n")),
        memory("noeviction", 0)
    );
}

#[test]
fn only_noeviction_or_no_limit_keeps_lock_keys() {
    for policy in [
        "allkeys-lru",
        "allkeys-lfu",
        "allkeys-random",
        "volatile-lru",
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
        "a-future-one",
    ] {
        assert!(Memory { policy: policy.into(), maxmemory: 1 << 20 }.can_evict(), "{policy}");
        assert!(
            !Memory { policy: policy.into(), maxmemory: 0 }.can_evict(),
            "{policy} without a limit"
        );
    }
    assert!(!Memory { policy: "noeviction".into(), maxmemory: 1 << 20 }.can_evict());
}

#[test]
fn hostile_replies_read_as_nothing_and_never_panic() {
    let pair = |max: Value, policy: Value| {
        Value::Array(vec![bulk("maxmemory"), max, bulk("maxmemory-policy"), policy])
    };
    let nothing = [
        Value::Nil,
        Value::Int(5),
        Value::Okay,
        Value::SimpleString("maxmemory".into()),
        Value::Array(vec![]),
        Value::Array(vec![bulk("maxmemory"), bulk("1"), bulk("maxmemory-policy")]),
        Value::Array(vec![bulk("maxmemory"), bulk("1")]),
        pair(bulk("-1"), bulk("allkeys-lru")),
        pair(Value::Int(-5), bulk("allkeys-lru")),
        pair(bulk("18446744073709551616"), bulk("allkeys-lru")),
        pair(bulk("1e9"), bulk("allkeys-lru")),
        pair(bulk(""), bulk("allkeys-lru")),
        pair(bulk("1"), Value::Nil),
        pair(bulk("1"), Value::Array(vec![bulk("allkeys-lru")])),
        pair(Value::Array(vec![]), bulk("allkeys-lru")),
        Value::Array(vec![Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4)]),
        Value::Map(vec![(Value::Int(1), bulk("allkeys-lru")), (Value::Nil, bulk("1"))]),
        parsed(b"-NOPERM User app has no permissions to run the 'config|get' command\r\n"),
    ];
    for reply in &nothing {
        assert_eq!(from_config(reply), None, "{reply:?}");
        assert_eq!(from_info(reply), None, "{reply:?}");
    }
    for text in [
        "",
        ":",
        "maxmemory",
        "maxmemory:abc\nmaxmemory_policy:allkeys-lru",
        "maxmemory_policy:allkeys-lru",
        "maxmemory:5",
        "maxmemory:-5\nmaxmemory_policy:x",
    ] {
        assert_eq!(from_info(&bulk(text)), None, "{text:?}");
    }
    // A policy's name goes into a message: control characters and length are cut.
    let evil = format!("allkeys-lru\r\nInjected: {}\0", "x".repeat(10_000));
    let read = from_config(&pair(bulk("1"), bulk(&evil))).expect("a limit and a policy");
    assert_eq!(read.policy.len(), 64);
    assert!(
        read.policy.starts_with("allkeys-lru??injected?")
            && read.policy.chars().all(|c| c.is_ascii_graphic()),
        "{}",
        read.policy
    );
    assert!(read.can_evict());
}

/// A random reply tree, of the shapes a server could send.
fn random_value(rng: &mut StdRng, depth: u32) -> Value {
    let words = [
        "maxmemory",
        "maxmemory-policy",
        "maxmemory_policy",
        "noeviction",
        "allkeys-lru",
        "0",
        "-1",
        "99999999999999999999",
        ":",
        "\r\n",
        "",
    ];
    match rng.random_range(0..if depth > 3 { 5 } else { 8 }) {
        0 => Value::Nil,
        1 => Value::Int(rng.random()),
        2 => bulk(words[rng.random_range(0..words.len())]),
        3 => Value::BulkString((0..rng.random_range(0..40)).map(|_| rng.random()).collect()),
        4 => bulk(
            &(0..rng.random_range(0..6))
                .map(|_| {
                    format!(
                        "{}:{}\n",
                        words[rng.random_range(0..words.len())],
                        words[rng.random_range(0..words.len())]
                    )
                })
                .collect::<String>(),
        ),
        5 | 6 => Value::Array(
            (0..rng.random_range(0..7)).map(|_| random_value(rng, depth + 1)).collect(),
        ),
        _ => Value::Map(
            (0..rng.random_range(0..4))
                .map(|_| (random_value(rng, depth + 1), random_value(rng, depth + 1)))
                .collect(),
        ),
    }
}

#[test]
fn random_replies_never_panic() {
    let mut rng = StdRng::seed_from_u64(0x0e71c7);
    for _ in 0..20_000 {
        let v = random_value(&mut rng, 0);
        for read in [from_config(&v), from_info(&v)].into_iter().flatten() {
            assert!(
                read.policy.len() <= 64 && read.policy.chars().all(|c| c.is_ascii_graphic()),
                "{v:?}: {read:?}"
            );
        }
    }
}

fn evicting_servers() -> u64 {
    match stats::snapshot(false).into_iter().find(|(name, _)| *name == "evicting_servers") {
        Some((_, Figure::Count(n))) => n,
        other => panic!("{other:?}"),
    }
}

fn open(dsn: &str) -> redis::RedisResult<redis_lock::net::wire::Connection> {
    let info = dsn.into_connection_info()?;
    pool::open(
        &info,
        &TlsFiles::default(),
        Duration::from_secs(2),
        Duration::from_secs(2),
        DEFAULT_MAX_REPLY,
        true,
    )
}

/// A server that answers a new connection's `PING` and then each `CONFIG` or `INFO`
/// with the bytes given; one connection.
fn fake(config: &'static [u8], info: &'static [u8]) -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let dsn = format!("redis://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let handle = std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else { return };
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Commands are told apart by their names; enough for what a connection sends.
        let mut answered = 0;
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen).into_owned();
            let names: Vec<&str> = text
                .split("\r\n")
                .filter(|l| matches!(*l, "PING" | "HELLO" | "CONFIG" | "INFO"))
                .collect();
            for name in &names[answered..] {
                let reply: &[u8] = match *name {
                    "PING" => b"+PONG\r\n",
                    "CONFIG" => config,
                    "INFO" => info,
                    _ => b"-ERR unknown command\r\n",
                };
                if s.write_all(reply).is_err() {
                    return;
                }
            }
            answered = names.len();
        }
    });
    (dsn, handle)
}

/// Real servers and fake ones, in one test: the counter is the process's.
#[test]
fn connections_check_their_server_once_per_process() {
    let start = |policy: &str, max: &str| {
        RedisServer::start_free(&["--maxmemory", max, "--maxmemory-policy", policy])
    };
    let lru = start("allkeys-lru", "64mb");
    let safe = start("noeviction", "64mb");
    let unlimited = start("allkeys-lru", "0");
    let resp3 = start("volatile-lru", "64mb");
    let acl = start("allkeys-lfu", "64mb");
    let before = evicting_servers();

    open(&lru.dsn()).unwrap();
    open(&lru.dsn()).unwrap();
    assert_eq!(evicting_servers(), before + 1, "allkeys-lru: counted once, for two connections");
    open(&safe.dsn()).unwrap();
    open(&unlimited.dsn()).unwrap();
    assert_eq!(evicting_servers(), before + 1, "noeviction, maxmemory 0: not counted");
    // RESP3 from the start: CONFIG GET answers a map.
    let mut conn = open(&format!("{}?protocol=resp3", resp3.dsn())).unwrap();
    assert_eq!(evicting_servers(), before + 2, "volatile-lru over RESP3");
    // The connection is in step after the check.
    assert!(
        matches!(redis_lock::net::wire::request(&mut conn, &[b"PING"]), Ok(Value::SimpleString(ref s)) if s == "PONG")
    );

    // A user without CONFIG is asked INFO, on the same connection, then INFO first.
    acl.cmd(&["ACL", "SETUSER", "app", "on", ">pw", "resetkeys", "-@all", "+ping", "+info"])
        .unwrap();
    let app = format!("redis://app:pw@127.0.0.1:{}", acl.port);
    open(&app).unwrap();
    assert_eq!(evicting_servers(), before + 3, "allkeys-lfu, found with INFO");
    open(&app).unwrap();
    let log = format!("{:?}", acl.cmd(&["ACL", "LOG"]).unwrap());
    assert_eq!(log.matches("bulk-string('\"config|get\"')").count(), 1, "one entry: {log}");
    assert!(log.contains("bulk-string('\"count\"'), int(1)"), "CONFIG asked once: {log}");
    let calls = format!("{:?}", acl.cmd(&["INFO", "commandstats"]).unwrap());
    assert!(calls.contains("cmdstat_info:calls=2,"), "INFO asked by both connections: {calls}");

    // Hostile answers to the check: the connection opens, nothing is counted.
    let hostile: [&'static [u8]; 6] = [
        b":5\r\n",
        b"*3\r\n$9\r\nmaxmemory\r\n$1\r\n1\r\n$1\r\nx\r\n",
        b"_\r\n",
        b"%1\r\n*1\r\n:1\r\n$1\r\nx\r\n",
        b"+OK\r\n",
        b"*2\r\n$9\r\nmaxmemory\r\n$20\r\n99999999999999999999\r\n",
    ];
    for reply in hostile {
        let (dsn, server) = fake(reply, b"-ERR unknown command 'INFO'\r\n");
        let conn = open(&dsn);
        assert!(conn.is_ok(), "{:?}: {:?}", String::from_utf8_lossy(reply), conn.err());
        drop(conn);
        server.join().unwrap();
    }
    assert_eq!(evicting_servers(), before + 3, "hostile answers count nothing");
    // CONFIG refused, INFO answered verbatim (RESP3), through our own reply parser.
    let (dsn, server) = fake(
        b"-ERR unknown command 'CONFIG'\r\n",
        b"=63\r\ntxt:# Memory\r\nmaxmemory:4096\r\nmaxmemory_policy:allkeys-random\r\n\r\n",
    );
    open(&dsn).unwrap();
    server.join().unwrap();
    assert_eq!(evicting_servers(), before + 4, "found with INFO, verbatim");
    // A reply to the check that breaks the protocol breaks the connection, as any would.
    let (dsn, server) = fake(b"?what\r\n", b"");
    assert!(open(&dsn).is_err());
    server.join().unwrap();
}
