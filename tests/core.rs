//! The pure-Rust core against real redis-server processes.

mod support;

use redis::Value;
use redis_lock::config::{OptValue, Settings, Source};
use redis_lock::error::LockError;
use redis_lock::lock::Lock;
use std::time::{Duration, Instant};
use support::{Relay, RedisServer};

fn settings(dsn: &str) -> Settings {
    let mut s = Settings::default();
    s.set("dsn", &OptValue::Str(dsn.as_bytes().to_vec()), Source::Option).unwrap();
    s
}

fn get(server: &RedisServer, key: &str) -> Option<String> {
    match server.cmd(&["GET", key]).unwrap() {
        Value::BulkString(b) => Some(String::from_utf8(b).unwrap()),
        Value::Nil => None,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn acquire_refuse_release() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut a = Lock::new(b"core:basic", 0.0, 5.0, &s).unwrap();
    let mut b = Lock::new(b"core:basic", 0.0, 5.0, &s).unwrap();
    let token = a.try_acquire().unwrap().expect("free lock");
    assert_eq!(get(&server, "core:basic").as_deref(), Some(token.as_str()));
    assert_eq!(b.try_acquire().unwrap(), None);
    assert!(b.is_locked().unwrap());
    assert!(!b.release(None).unwrap(), "b holds nothing");
    assert!(!b.release(Some(b"not-the-token")).unwrap());
    assert!(a.release(None).unwrap());
    assert!(!a.is_locked().unwrap());
    assert_eq!(a.token(), None);
}

#[test]
fn stale_token_cannot_release_the_next_holder() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut old = Lock::new(b"core:stale", 0.0, 0.05, &s).unwrap();
    let stale = old.try_acquire().unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(80));
    let mut new = Lock::new(b"core:stale", 0.0, 5.0, &s).unwrap();
    let fresh = new.try_acquire().unwrap().expect("expired lock is free");
    assert!(!old.release(Some(stale.as_bytes())).unwrap());
    assert_eq!(get(&server, "core:stale"), Some(fresh));
}

#[test]
fn blocking_acquire_waits_until_free_and_honours_the_deadline() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut holder = Lock::new(b"core:wait", 0.0, 0.2, &s).unwrap();
    holder.try_acquire().unwrap().unwrap();
    let mut short = Lock::new(b"core:wait", 0.05, 5.0, &s).unwrap();
    let t = Instant::now();
    assert_eq!(short.acquire().unwrap(), None);
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(50) && waited < Duration::from_millis(90), "{waited:?}");
    let mut long = Lock::new(b"core:wait", 1.0, 5.0, &s).unwrap();
    assert!(long.acquire().unwrap().is_some(), "acquired once the holder's lease ran out");
}

#[test]
fn release_reloads_a_flushed_script() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:noscript", 0.0, 5.0, &s).unwrap();
    l.try_acquire().unwrap().unwrap();
    server.cmd(&["SCRIPT", "FLUSH"]).unwrap();
    assert!(l.release(None).unwrap());
    assert!(!l.is_locked().unwrap());
}

#[test]
fn the_same_process_recovers_after_a_restart() {
    let mut server = RedisServer::start();
    let port = server.port;
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:restart", 0.0, 5.0, &s).unwrap();
    l.try_acquire().unwrap().unwrap();
    server.kill();
    match l.is_locked() {
        Err(LockError::Connection { addr, .. }) => assert_eq!(addr, format!("redis://127.0.0.1:{port}")),
        other => panic!("expected a connection error, got {other:?}"),
    }
    let _server = RedisServer::start_on(port);
    // The pooled connection was dropped on the error; a new one is made.
    assert!(!l.is_locked().unwrap(), "restarted without persistence: free");
    assert!(l.try_acquire().unwrap().is_some());
}

#[test]
fn stale_pooled_connection_is_replaced_transparently() {
    let mut server = RedisServer::start();
    let port = server.port;
    let s = settings(&server.dsn());
    let l = Lock::new(b"core:stale-conn", 0.0, 5.0, &s).unwrap();
    assert!(!l.is_locked().unwrap()); // a pooled connection now exists
    server.kill();
    let _server = RedisServer::start_on(port);
    // The pooled socket is dead, but the server is back: no error reaches the caller.
    assert!(!l.is_locked().unwrap());
}

#[test]
fn a_lost_set_reply_is_settled_not_guessed() {
    let server = RedisServer::start();
    let relay = Relay::start(server.port);
    let mut s = settings(&relay.dsn());
    s.set("read_timeout", &OptValue::Float(0.2), Source::Option).unwrap();
    let mut l = Lock::new(b"core:lost-reply", 0.0, 5.0, &s).unwrap();
    assert!(!l.is_locked().unwrap());
    relay.lose_replies(1);
    // The SET lands, its reply is lost, the read times out: the lock is ours, and we say so.
    let token = l.try_acquire().unwrap().expect("the SET did land");
    assert_eq!(get(&server, "core:lost-reply"), Some(token));
    assert!(l.release(None).unwrap());
}

#[test]
fn error_replies_are_server_errors_and_keep_the_connection() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:readonly", 0.0, 5.0, &s).unwrap();
    assert!(!l.is_locked().unwrap());
    server.cmd(&["REPLICAOF", "127.0.0.1", &support::free_port().to_string()]).unwrap();
    match l.try_acquire() {
        Err(LockError::Server { cause, .. }) => assert!(cause.contains("read only"), "{cause}"),
        other => panic!("expected READONLY, got {other:?}"),
    }
    server.cmd(&["REPLICAOF", "NO", "ONE"]).unwrap();
    assert!(l.try_acquire().unwrap().is_some());
}

#[test]
fn bad_arguments_never_reach_redis() {
    let s = settings("redis://127.0.0.1:1");
    assert!(matches!(Lock::new(b"", 0.0, 1.0, &s), Err(LockError::InvalidValue(_))));
    assert!(matches!(Lock::new(b"k", -1.0, 1.0, &s), Err(LockError::InvalidValue(_))));
    assert!(matches!(Lock::new(b"k", 0.0, 0.0, &s), Err(LockError::InvalidValue(_))));
    let bad = settings("redis://:pw@h:1/x");
    match Lock::new(b"k", 0.0, 1.0, &bad) {
        Err(LockError::InvalidValue(m)) => assert!(!m.contains("pw@")),
        other => panic!("{:?}", other.err()),
    }
    // Valid input against a dead address constructs fine: connecting is lazy.
    let mut l = Lock::new(b"k", 0.0, 1.0, &s).unwrap();
    assert!(matches!(l.try_acquire(), Err(LockError::Connection { .. })));
}

#[test]
fn release_hands_the_lock_straight_to_a_listening_waiter() {
    let server = RedisServer::start();
    let mut s = settings(&server.dsn());
    // Polling every 2 s: only the hand-over can make the waiter quick.
    s.set("retry_delay", &OptValue::Float(2.0), Source::Option).unwrap();
    s.set("retry_delay_max", &OptValue::Float(2.0), Source::Option).unwrap();
    let mut holder = Lock::new(b"core:handover", 0.0, 10.0, &s).unwrap();
    holder.try_acquire().unwrap().expect("free lock");
    let waiter_settings = s.clone();
    let waiter = std::thread::spawn(move || {
        let mut w = Lock::new(b"core:handover", 5.0, 10.0, &waiter_settings).unwrap();
        let token = w.acquire().unwrap();
        (token, Instant::now())
    });
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    // Held for 300 ms, far past the short-hold threshold: a hand-over, not a free-for-all.
    assert!(holder.release(None).unwrap());
    let (token, got) = waiter.join().unwrap();
    let token = token.expect("the waiter gets the lock");
    assert!(got.duration_since(released) < Duration::from_millis(200), "{:?}", got.duration_since(released));
    // The key went from one token to the other without ever being free.
    assert_eq!(get(&server, "core:handover").as_deref(), Some(token.as_str()));
    assert_eq!(server.cmd(&["EXISTS", "{core:handover}:queue"]).unwrap(), Value::Int(0));
}
