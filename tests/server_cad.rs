//! The server's own compare-and-delete (`net::cad`, `net::fast`) against servers that
//! say they have it and then answer otherwise: a fake Valkey 9 whose `DELIFEQ` answers
//! a reply of another shape, or refuses it. The release falls back on its script, and
//! gives the script's answer; a refusal turns the connection's compare-and-delete off.
//! The real servers' side is `php-tests/104-server-cad.phpt`.

use redis::{IntoConnectionInfo, Value};
use redis_lock::config::{TlsFiles, DEFAULT_MAX_REPLY};
use redis_lock::kinds::lock::scripts::{Kick, Release};
use redis_lock::net::cad::Cad;
use redis_lock::net::call::Call;
use redis_lock::net::fast::Fast;
use redis_lock::net::pool;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A fake server, one connection: `HELLO` says Valkey 9.0.0, `DELIFEQ` gets
/// `delifeq`, `EXISTS` `exists`, `EVALSHA` `:1`, anything else `+OK`. Returns its dsn
/// and the names of the commands it was sent, in order.
fn fake_valkey(delifeq: &'static [u8], exists: &'static [u8]) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let dsn = format!("redis://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else { return };
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n) = s.read(&mut chunk) {
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            // Whole commands only: "*<n>\r\n" then n bulk strings.
            while let Some((name, used)) = command(&buf) {
                buf.drain(..used);
                let reply: &[u8] = match name.as_str() {
                    "PING" => b"+PONG\r\n",
                    "HELLO" => {
                        b"*4\r\n$6\r\nserver\r\n$6\r\nvalkey\r\n$7\r\nversion\r\n$5\r\n9.0.0\r\n"
                    }
                    "CONFIG" | "INFO" => b"-ERR unknown command\r\n",
                    "DELIFEQ" => delifeq,
                    "EXISTS" => exists,
                    "EVALSHA" => b":1\r\n",
                    _ => b"+OK\r\n",
                };
                log.lock().unwrap().push(name);
                if s.write_all(reply).is_err() {
                    return;
                }
            }
        }
    });
    (dsn, seen)
}

/// The first whole command in `buf`: its name and how many bytes it took.
fn command(buf: &[u8]) -> Option<(String, usize)> {
    let text = std::str::from_utf8(buf).ok()?;
    let (head, mut rest) = text.strip_prefix('*')?.split_once("\r\n")?;
    let n: usize = head.parse().ok()?;
    let mut name = None;
    for _ in 0..n {
        let (len, after) = rest.strip_prefix('$')?.split_once("\r\n")?;
        let len: usize = len.parse().ok()?;
        let arg = after.get(..len)?;
        name.get_or_insert_with(|| arg.to_ascii_uppercase());
        rest = after.get(len + 2..)?;
    }
    Some((name?, text.len() - rest.len()))
}

fn release_on(dsn: &str) -> (redis::RedisResult<Value>, Cad, Cad) {
    let info = dsn.into_connection_info().unwrap();
    let mut conn = pool::open(
        &info,
        &TlsFiles::default(),
        Duration::from_secs(2),
        Duration::from_secs(2),
        DEFAULT_MAX_REPLY,
        true,
    )
    .unwrap();
    let before = conn.cad();
    let token = b"0123456789abcdef0123456789abcdef";
    let script = Release {
        lock: b"k",
        queue: b"{k}:queue",
        patience: b"{k}:patience",
        fence: b"{k}:fence",
        readers: b"{k}:readers",
        owner: b"{k}:owner",
        token,
        wait: b"5",
        short: false,
    };
    let kick =
        Kick { lock: b"k", queue: b"{k}:queue", fence: b"{k}:fence", readers: b"{k}:readers" };
    let reply = Call::Fast(Fast::Release {
        key: b"k",
        token,
        queue: b"{k}:queue",
        script: &script,
        kick: &kick,
    })
    .run(&mut conn);
    (reply, before, conn.cad())
}

#[test]
fn a_delifeq_reply_of_another_shape_leaves_it_to_the_script() {
    let (dsn, seen) = fake_valkey(b"+WHAT\r\n", b":0\r\n");
    let (reply, before, after) = release_on(&dsn);
    assert_eq!(before, Cad::DelIfEq, "HELLO named Valkey 9");
    assert_eq!(reply.unwrap(), Value::Int(1), "the script's answer");
    assert_eq!(after, Cad::DelIfEq);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(&seen[seen.len() - 3..], ["DELIFEQ", "EXISTS", "EVALSHA"], "{seen:?}");
}

#[test]
fn a_refused_delifeq_turns_it_off_for_the_connection() {
    let (dsn, seen) = fake_valkey(
        b"-NOPERM User app has no permissions to run the 'delifeq' command\r\n",
        b":0\r\n",
    );
    let (reply, before, after) = release_on(&dsn);
    assert_eq!(before, Cad::DelIfEq);
    assert_eq!(reply.unwrap(), Value::Int(1), "the script's answer");
    assert_eq!(after, Cad::None, "refused: the script from now on");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(&seen[seen.len() - 3..], ["DELIFEQ", "EXISTS", "EVALSHA"], "{seen:?}");
}

#[test]
fn a_deleted_key_with_no_queue_needs_no_script() {
    let (dsn, seen) = fake_valkey(b":1\r\n", b":0\r\n");
    let (reply, _, after) = release_on(&dsn);
    assert_eq!(reply.unwrap(), Value::Int(1));
    assert_eq!(after, Cad::DelIfEq);
    std::thread::sleep(Duration::from_millis(100));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(&seen[seen.len() - 2..], ["DELIFEQ", "EXISTS"], "{seen:?}");
}

/// Someone queued during the hold (or the queue could not be asked about): the
/// compare-and-delete freed the lock, and the kick (by its text, unawaited) hands it
/// to the queue's head in the next command.
#[test]
fn a_deleted_key_with_a_queue_is_handed_to_it() {
    for exists in [&b":1\r\n"[..], b"-NOPERM no permissions to run the 'exists' command\r\n"] {
        let (dsn, seen) = fake_valkey(b":1\r\n", exists);
        let (reply, _, after) = release_on(&dsn);
        assert_eq!(reply.unwrap(), Value::Int(1), "released");
        assert_eq!(after, Cad::DelIfEq);
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while !seen.lock().unwrap().iter().any(|c| c == "EVAL") && std::time::Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        let seen = seen.lock().unwrap().clone();
        assert_eq!(&seen[seen.len() - 3..], ["DELIFEQ", "EXISTS", "EVAL"], "{seen:?}");
    }
}
