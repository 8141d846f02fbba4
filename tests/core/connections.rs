//! What a connection meets: a flushed script cache, a restarted server, a stale pooled
//! socket, a lost reply and its settle, error replies, passwords and databases, large
//! and pipelined replies, and the wake subscriber in RESP2's subscribed mode.

use crate::support::{self, RedisServer, Relay};
use crate::{get, settings};
use redis::Value;
use redis_lock::config::{OptValue, Source};
use redis_lock::error::LockError;
use redis_lock::kinds::lock::Lock;
use std::time::{Duration, Instant};

#[test]
fn release_reloads_a_flushed_script() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:noscript", 0.0, 5.0, &s).unwrap();
    l.try_acquire(None).unwrap().unwrap();
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
    l.try_acquire(None).unwrap().unwrap();
    server.kill();
    match l.is_locked() {
        Err(LockError::Connection { addr, .. }) => {
            assert_eq!(addr, format!("redis://127.0.0.1:{port}"))
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    let _server = RedisServer::start_on(port);
    // The pooled connection was dropped on the error; a new one is made.
    assert!(!l.is_locked().unwrap(), "restarted without persistence: free");
    assert!(l.try_acquire(None).unwrap().is_some());
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
    let token = l.try_acquire(None).unwrap().expect("the SET did land");
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
    match l.try_acquire(None) {
        // A passing state (a failover under way), refused whole: a connection error
        // that names it, which a wait waits out.
        Err(e @ LockError::Passing { sent: false, .. }) => {
            let text = e.to_string();
            assert!(text.contains("READONLY") && text.contains("replica"), "{text}");
        }
        other => panic!("expected READONLY, got {other:?}"),
    }
    server.cmd(&["REPLICAOF", "NO", "ONE"]).unwrap();
    assert!(l.try_acquire(None).unwrap().is_some());
}

#[test]
fn plain_connections_read_large_split_and_pipelined_replies() {
    use redis_lock::net::wire::{self, Connection};
    let server = RedisServer::start();
    let info = redis_lock::dsn::parse_dsn(&server.dsn()).unwrap();
    let mut conn = Connection::connect(
        &info,
        &redis_lock::config::TlsFiles::default(),
        Duration::from_secs(2),
        redis_lock::config::DEFAULT_MAX_REPLY,
    )
    .unwrap();
    // A reply far past the first buffer (4 KiB), read in many pieces.
    let big: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(wire::request(&mut conn, &[b"SET", b"core:big", &big]).unwrap(), Value::Okay);
    let back = wire::request(&mut conn, &[b"GET", b"core:big"]).unwrap();
    assert_eq!(back, Value::BulkString(big));
    // Many replies to one write: they arrive together and are split here.
    let pipe: Vec<u8> = b"*2\r\n$4\r\nINCR\r\n$10\r\ncore:count\r\n".repeat(500);
    let counts = wire::pipeline(&mut conn, &pipe, 500).unwrap();
    assert_eq!(counts, (1..=500).map(Value::Int).collect::<Vec<_>>());
    // An error reply keeps redis-rs's kind and leaves the connection usable.
    let err = wire::request(&mut conn, &[b"EVALSHA", "0".repeat(40).as_bytes(), b"0"]).unwrap_err();
    assert_eq!(err.kind(), redis::ErrorKind::Server(redis::ServerErrorKind::NoScript));
    assert!(
        matches!(wire::request(&mut conn, &[b"PING"]), Ok(Value::SimpleString(ref s)) if s == "PONG")
            && !conn.hung_up()
    );
    // The server going away is a dropped connection, and the connection says so.
    let mut server = server;
    server.kill();
    let gone = wire::request(&mut conn, &[b"GET", b"core:count"]).unwrap_err();
    assert!(gone.is_connection_dropped() || gone.is_io_error(), "{gone:?}");
    assert!(conn.hung_up());
}

#[test]
fn plain_connections_authenticate_and_select_without_quoting_the_password() {
    use redis_lock::net::wire::{self, Connection};
    let port = support::free_port();
    let server = RedisServer::start_on(port);
    server.cmd(&["CONFIG", "SET", "requirepass", "s3cret-pw"]).unwrap();
    let at = |dsn: String| redis_lock::dsn::parse_dsn(&dsn).unwrap();
    let wrong = Connection::connect(
        &at(format!("redis://:wrong-pw@127.0.0.1:{port}")),
        &redis_lock::config::TlsFiles::default(),
        Duration::from_secs(2),
        redis_lock::config::DEFAULT_MAX_REPLY,
    )
    .err()
    .expect("refused");
    assert_eq!(wrong.kind(), redis::ErrorKind::AuthenticationFailed);
    assert!(
        !wrong.to_string().contains("wrong-pw") && !format!("{wrong:?}").contains("wrong-pw"),
        "{wrong}"
    );
    let mut conn = Connection::connect(
        &at(format!("redis://:s3cret-pw@127.0.0.1:{port}/3")),
        &redis_lock::config::TlsFiles::default(),
        Duration::from_secs(2),
        redis_lock::config::DEFAULT_MAX_REPLY,
    )
    .unwrap();
    let info = wire::request(&mut conn, &[b"CLIENT", b"INFO"]).unwrap();
    let info: String = redis::from_redis_value(info).unwrap();
    assert!(info.contains(" db=3 "), "{info}");
    drop(server);
}

/// Lead 3 of issue 47: a settle after a lost reply must not take another holder's
/// hold of the same chosen token for this call's own. Before, each of these found the
/// key holding "shared" (set by another holder) and answered that it had taken it.
#[test]
fn a_settle_never_takes_another_holders_hold_of_a_chosen_token_for_its_own() {
    let server = RedisServer::start();
    let relay = Relay::start(server.port);
    // The first try's three shapes: SET NX PX, the take script (fencing), the acquire
    // script (fair mode).
    for (name, option) in [("plain", None), ("fenced", Some("fencing")), ("fair", Some("fair"))] {
        let key = format!("core:settle-chosen:{name}");
        let mut s = settings(&relay.dsn());
        s.set("read_timeout", &OptValue::Float(0.2), Source::Option).unwrap();
        if let Some(o) = option {
            s.set(o, &OptValue::Bool(true), Source::Option).unwrap();
        }
        let mut other = Lock::new(key.as_bytes(), 0.0, 5.0, &settings(&server.dsn())).unwrap();
        let mut mine = Lock::new(key.as_bytes(), 0.0, 5.0, &s).unwrap();
        if option == Some("fencing") {
            // Eager fencing: the first try is the take script.
            let _ = other.fencing_token();
        }
        assert!(!mine.is_locked().unwrap(), "{name}: connected through the relay first");
        assert_eq!(
            other.try_acquire(Some(b"shared".to_vec())).unwrap().as_deref(),
            Some(&b"shared"[..])
        );
        relay.lose_replies(1);
        // The try finds the key held, its reply is lost, the settle finds the key holding
        // "shared": not known to be this call's.
        match mine.try_acquire(Some(b"shared".to_vec())) {
            Err(LockError::Connection { cause, .. }) => {
                assert!(cause.contains("may have taken it, or another holder"), "{name}: {cause}")
            }
            other => panic!("{name}: a settle took another holder's hold for its own: {other:?}"),
        }
        assert_eq!(
            get(&server, &key).as_deref(),
            Some(&b"shared"[..]),
            "{name}: the other holder's hold is untouched"
        );
        // A token of its own is settled as before: the lost reply's SET landed, and is ours.
        assert!(other.release(None).unwrap());
        relay.lose_replies(1);
        let token = mine.try_acquire(None).unwrap().expect("the try did land");
        assert_eq!(get(&server, &key), Some(token), "{name}");
        assert!(mine.release(None).unwrap());
    }
    // A MultiLock, one of whose keys another holder has with the same token.
    let mut s = settings(&relay.dsn());
    s.set("read_timeout", &OptValue::Float(0.2), Source::Option).unwrap();
    let (a, b) = ("core:settle-chosen:m1", "core:settle-chosen:m2");
    let mut multi =
        redis_lock::kinds::multi::MultiLock::new(vec![a.into(), b.into()], vec![], 0.0, 5.0, &s)
            .unwrap();
    assert!(multi.is_owned(None).is_ok(), "connected through the relay first");
    let mut other = Lock::new(a.as_bytes(), 0.0, 5.0, &settings(&server.dsn())).unwrap();
    other.try_acquire(Some(b"shared".to_vec())).unwrap().expect("free");
    relay.lose_replies(1);
    match multi.try_acquire(Some(b"shared".to_vec())) {
        Err(LockError::Connection { cause, .. }) => {
            assert!(cause.contains("may have taken it, or another holder"), "multi: {cause}")
        }
        other => panic!("multi: a settle took another holder's hold for its own: {other:?}"),
    }
    assert_eq!(
        get(&server, a).as_deref(),
        Some(&b"shared"[..]),
        "multi: the other holder's hold is untouched"
    );
    assert_eq!(get(&server, b), None, "multi: all or none");
}

/// The wake subscriber of its own (for a server or proxy that refuses `HELLO 3`) is
/// our connection in RESP2's subscribed mode: a subscription is confirmed before it
/// counts (and a refusal, NOPERM, is told apart), a message on another of its
/// channels is skipped, a wait with nothing to hear ends on time and leaves the
/// connection usable, and an unsubscription is confirmed before it returns (the
/// server has no listener left there; a stalled server's is an error).
#[test]
fn a_subscriber_in_resp2_confirms_filters_and_unsubscribes() {
    use redis_lock::net::wire::Connection;
    let server = RedisServer::start();
    let connect = |dsn: &str| {
        let info = redis_lock::dsn::parse_dsn(dsn).unwrap();
        let conn = Connection::connect(
            &info,
            &redis_lock::config::TlsFiles::default(),
            Duration::from_secs(2),
            redis_lock::config::DEFAULT_MAX_REPLY,
        )
        .unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        conn
    };
    let listeners = |channel: &str| match server.cmd(&["PUBSUB", "NUMSUB", channel]).unwrap() {
        Value::Array(v) => v[1].clone(),
        other => panic!("{other:?}"),
    };
    let mut sub = connect(&server.dsn());
    // An earlier wait's channel, still listened on, with a message waiting on it: the
    // next subscription reads past it to its own confirmation.
    assert!(sub.subscribe_resp2("core:sub:earlier").unwrap());
    server.cmd(&["PUBLISH", "core:sub:earlier", "stale-before"]).unwrap();
    assert!(sub.subscribe_resp2("core:sub:now").unwrap());
    assert_eq!(listeners("core:sub:now"), Value::Int(1), "confirmed: the server counts it");
    // A message on the other channel comes first and is skipped.
    server.cmd(&["PUBLISH", "core:sub:earlier", "stale-after"]).unwrap();
    server.cmd(&["PUBLISH", "core:sub:now", "g:mine"]).unwrap();
    assert_eq!(
        sub.next_message("core:sub:now", Duration::from_secs(2)).unwrap(),
        Some(b"g:mine".to_vec())
    );
    // Nothing more on it: the wait ends on time, and the skipped one is not kept.
    let started = Instant::now();
    assert_eq!(sub.next_message("core:sub:now", Duration::from_millis(150)).unwrap(), None);
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    // Unsubscribed, confirmed: nobody listens there once it returns.
    sub.unsubscribe_resp2("core:sub:now").unwrap();
    assert_eq!(listeners("core:sub:now"), Value::Int(0));
    assert_eq!(server.cmd(&["PUBLISH", "core:sub:now", "late"]).unwrap(), Value::Int(0));
    // Still in step after the timeout and the unsubscription: the next wait's channel works.
    assert!(sub.subscribe_resp2("core:sub:next").unwrap());
    server.cmd(&["PUBLISH", "core:sub:next", "g:next"]).unwrap();
    assert_eq!(
        sub.next_message("core:sub:next", Duration::from_secs(2)).unwrap(),
        Some(b"g:next".to_vec())
    );
    // A user whose ACL has no such channel: refused (NOPERM), which is no failure.
    server
        .cmd(&[
            "ACL",
            "SETUSER",
            "subber",
            "on",
            ">pw",
            "~*",
            "+@all",
            "resetchannels",
            "&core:sub:allowed",
        ])
        .unwrap();
    let mut limited = connect(&server.dsn().replace("redis://", "redis://subber:pw@"));
    assert!(!limited.subscribe_resp2("core:sub:forbidden").unwrap(), "NOPERM is a refusal");
    assert!(limited.subscribe_resp2("core:sub:allowed").unwrap());
    // An unsubscription the server does not confirm (stalled) is no success: such a
    // subscriber is not kept, as it may still listen.
    limited.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    server.signal(libc::SIGSTOP);
    let unconfirmed = limited.unsubscribe_resp2("core:sub:allowed");
    server.signal(libc::SIGCONT);
    assert!(unconfirmed.is_err(), "returned before the server confirmed");
}
