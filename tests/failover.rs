//! A Sentinel failover's states, staged at will by a sentinel of the test's own
//! (`FakeSentinel`) in front of real servers: a master that is gone, one that is a
//! replica now, one demoted under an open connection (READONLY). Each is a passing
//! state: a call without a wait reports it at once, a wait waits it out, re-asking the
//! sentinel, and ends with it named. A sentinel that knows no such service is no
//! failover: reported at once, wait or not. (The real failovers, of Sentinel and of
//! Cluster, are php-tests/097 and 098.)

mod support;

use redis_lock::config::{OptValue, Settings, Source};
use redis_lock::error::LockError;
use redis_lock::kinds::lock::Lock;
use std::time::{Duration, Instant};
use support::{free_port, FakeSentinel, RedisServer};

fn settings(sentinel: &FakeSentinel) -> Settings {
    let mut s = Settings::default();
    s.set("sentinels", &OptValue::List(vec![sentinel.dsn().into_bytes()]), Source::Option).unwrap();
    s.set("service", &OptValue::Str(b"svc".to_vec()), Source::Option).unwrap();
    s.set("connect_timeout", &OptValue::Float(0.3), Source::Option).unwrap();
    s.set("read_timeout", &OptValue::Float(0.3), Source::Option).unwrap();
    s
}

/// A server that is a replica (of a master that does not exist).
fn replica() -> RedisServer {
    RedisServer::start_free(&["--replicaof", "127.0.0.1", &free_port().to_string()])
}

/// The passing state `e` must be: named as a failover in progress, with `says` in it.
fn assert_failover(e: &LockError, says: &str) {
    match e {
        LockError::Passing { cause, .. } => {
            assert!(cause.contains("sentinel failover of svc in progress"), "{e}");
            assert!(cause.contains(says), "{e}");
        }
        other => panic!("a passing state was expected: {other}"),
    }
}

#[test]
fn a_master_gone_or_a_replica_is_a_failover_waited_out_then_named() {
    let gone = free_port();
    let sentinel = FakeSentinel::start(Some(gone));
    let s = settings(&sentinel);
    // Gone: at once without a wait.
    let t = Instant::now();
    let e = Lock::new(b"failover:gone", 0.0, 5.0, &s).unwrap().try_acquire(None).unwrap_err();
    assert!(t.elapsed() < Duration::from_millis(200), "{:?}", t.elapsed());
    assert_failover(
        &e,
        &format!(
            "master 127.0.0.1:{gone} named by redis://127.0.0.1:{}: connection refused",
            sentinel.port
        ),
    );

    // A replica: waited out for the wait, then named with how long it lasted.
    let replica = replica();
    sentinel.name(Some(replica.port));
    let t = Instant::now();
    let e = Lock::new(b"failover:replica", 0.3, 5.0, &s).unwrap().acquire(None).unwrap_err();
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_millis(800),
        "{waited:?}"
    );
    assert_failover(&e, "its role is slave");
    assert!(e.to_string().contains("still so after 0.3 s"), "{e}");

    // The failover ends during a wait: the wait asks the sentinel again, and gets the lock.
    let promoted = RedisServer::start();
    let port = promoted.port;
    let mut waiter = Lock::new(b"failover:replica", 5.0, 5.0, &s).unwrap();
    let t = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            sentinel.name(Some(port));
        });
        let token =
            waiter.acquire(None).unwrap().expect("acquired once the sentinel names the new master");
        assert!(t.elapsed() >= Duration::from_millis(300), "{:?}", t.elapsed());
        assert_eq!(
            promoted.cmd(&["GET", "failover:replica"]).ok(),
            Some(redis::Value::BulkString(token))
        );
    });
    assert!(waiter.release(None).unwrap());
}

#[test]
fn a_master_demoted_under_an_open_connection_is_a_failover_too() {
    let master = RedisServer::start();
    let sentinel = FakeSentinel::start(Some(master.port));
    let s = settings(&sentinel);
    let mut a = Lock::new(b"failover:demoted", 0.0, 5.0, &s).unwrap();
    assert!(a.try_acquire(None).unwrap().is_some());
    // Demoted: the open connection gets READONLY, and the sentinel still names it.
    master.cmd(&["REPLICAOF", "127.0.0.1", &free_port().to_string()]).unwrap();
    let e = Lock::new(b"failover:other", 0.0, 5.0, &s).unwrap().try_acquire(None).unwrap_err();
    assert_failover(&e, "its role is slave");
    assert!(!e.to_string().contains("may have been taken"), "a refused write took nothing: {e}");
    // The holder's release meanwhile is no silent success: it reports the state.
    let e = a.release(None).unwrap_err();
    assert_failover(&e, "its role is slave");
}

#[test]
fn a_sentinel_that_knows_no_such_service_is_reported_at_once_even_with_a_wait() {
    let sentinel = FakeSentinel::start(None);
    let s = settings(&sentinel);
    let t = Instant::now();
    let e = Lock::new(b"failover:unknown", 2.0, 5.0, &s).unwrap().acquire(None).unwrap_err();
    assert!(t.elapsed() < Duration::from_millis(200), "{:?}", t.elapsed());
    match e {
        LockError::Connection { cause, .. } => {
            assert!(cause.contains("does not know the service \"svc\""), "{cause}")
        }
        other => panic!("a connection error was expected: {other}"),
    }
}
