//! One lock on one server, through the API: acquire, refuse, release, wait, extend,
//! fencing numbers, the watchdog, shared holds and a semaphore, inspection, and the
//! scripts as the server loads them.

use crate::support::RedisServer;
use crate::{get, pttl, settings, FLOOR};
use redis::Value;
use redis_lock::config::{OptValue, Source};
use redis_lock::error::LockError;
use redis_lock::kinds::lock::Lock;
use std::time::{Duration, Instant};

#[test]
fn acquire_refuse_release() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut a = Lock::new(b"core:basic", 0.0, 5.0, &s).unwrap();
    let mut b = Lock::new(b"core:basic", 0.0, 5.0, &s).unwrap();
    let token = a.try_acquire(None).unwrap().expect("free lock");
    assert_eq!(get(&server, "core:basic").as_deref(), Some(&token[..]));
    assert_eq!(b.try_acquire(None).unwrap(), None);
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
    let stale = old.try_acquire(None).unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(80));
    let mut new = Lock::new(b"core:stale", 0.0, 5.0, &s).unwrap();
    let fresh = new.try_acquire(None).unwrap().expect("expired lock is free");
    assert!(!old.release(Some(&stale[..])).unwrap());
    assert_eq!(get(&server, "core:stale"), Some(fresh));
}

#[test]
fn blocking_acquire_waits_until_free_and_honours_the_deadline() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut holder = Lock::new(b"core:wait", 0.0, 0.2, &s).unwrap();
    holder.try_acquire(None).unwrap().unwrap();
    let mut short = Lock::new(b"core:wait", 0.05, 5.0, &s).unwrap();
    let t = Instant::now();
    assert_eq!(short.acquire(None).unwrap(), None);
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(50) && waited < Duration::from_millis(90),
        "{waited:?}"
    );
    let mut long = Lock::new(b"core:wait", 1.0, 5.0, &s).unwrap();
    assert!(long.acquire(None).unwrap().is_some(), "acquired once the holder's lease ran out");
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
    // Refused while connecting: nothing was sent, so nothing may have been taken.
    match l.try_acquire(None) {
        Err(e @ LockError::Connection { sent: false, .. }) => {
            assert!(!e.to_string().contains("may have been taken"), "{e}")
        }
        other => panic!("expected an unsent connection error, got {other:?}"),
    }
}

#[test]
fn extend_sets_the_lease_only_for_the_holding_token() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:extend", 0.0, 0.5, &s).unwrap();
    assert!(!l.extend(None, None).unwrap(), "nothing held");
    assert_eq!(l.ttl().unwrap(), None);
    let token = l.try_acquire(None).unwrap().unwrap();
    assert!(l.extend(None, Some(20.0)).unwrap());
    assert!((19_000..=20_000).contains(&pttl(&server, "core:extend")));
    assert!(!l.extend(Some(b"someone-else"), Some(60.0)).unwrap());
    assert!((19_000..=20_000).contains(&pttl(&server, "core:extend")));
    assert!(matches!(l.extend(None, Some(0.0)), Err(LockError::InvalidValue(_))));
    assert!(l.extend(Some(&token[..]), None).unwrap());
    assert!(l.ttl().unwrap().is_some_and(|t| t > 0.4 && t <= 0.5));
    assert!(l.is_owned(None).unwrap());
    assert!(l.release(None).unwrap());
    assert!(!l.extend(Some(&token[..]), None).unwrap(), "released");
    assert_eq!(server.cmd(&["EXISTS", "core:extend"]).unwrap(), Value::Int(0));
}

#[test]
fn fencing_tokens_increase_per_key_and_can_be_turned_off() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:fence", 0.0, 5.0, &s).unwrap();
    assert_eq!(l.fencing_token().unwrap(), None);
    let mut seen = Vec::new();
    for _ in 0..5 {
        l.try_acquire(None).unwrap().unwrap();
        seen.push(l.fencing_token().unwrap().unwrap());
        assert!(l.release(None).unwrap());
    }
    assert!(
        seen[0] > FLOOR && seen.windows(2).all(|w| w[1] > w[0]),
        "increasing, from the server's clock: {seen:?}"
    );
    let mut off = s.clone();
    off.set("fencing", &OptValue::Bool(false), Source::Option).unwrap();
    let mut plain = Lock::new(b"core:fence", 0.0, 5.0, &off).unwrap();
    plain.try_acquire(None).unwrap().unwrap();
    assert_eq!(plain.fencing_token().unwrap(), None);
    assert_eq!(
        get(&server, "{core:fence}:fence"),
        Some(seen[4].to_string().into_bytes()),
        "a take without fencing leaves the counter alone"
    );
    assert!(plain.release(None).unwrap());
    l.try_acquire(None).unwrap().unwrap();
    let next = l.fencing_token().unwrap().unwrap();
    assert!(next > seen[4]);
    assert!(l.release(None).unwrap());
    // Kept after the release.
    assert_eq!(l.fencing_token().unwrap(), Some(next));
}

#[test]
fn dropping_a_holding_lock_releases_it() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:drop", 0.0, 30.0, &s).unwrap();
    l.try_acquire(None).unwrap().unwrap();
    drop(l);
    assert_eq!(server.cmd(&["EXISTS", "core:drop"]).unwrap(), Value::Int(0));
}

#[test]
fn the_watchdog_renews_until_release_and_reports_a_lost_lock() {
    let server = RedisServer::start();
    let mut s = settings(&server.dsn());
    s.set("auto_renew", &OptValue::Bool(true), Source::Option).unwrap();
    let mut l = Lock::new(b"core:renew", 0.0, 0.15, &s).unwrap();
    l.try_acquire(None).unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(l.is_owned(None).unwrap(), "renewed past three leases");
    assert!(redis_lock::hold::table::watchdog_running());
    // Someone deletes the key and takes it: the next renewal finds out.
    server.cmd(&["SET", "core:renew", "intruder"]).unwrap();
    std::thread::sleep(Duration::from_millis(150));
    assert!(!l.is_owned(None).unwrap());
    assert!(!l.release(None).unwrap());
    assert_eq!(
        get(&server, "core:renew").as_deref(),
        Some(&b"intruder"[..]),
        "the intruder's key is untouched"
    );
    assert!(pttl(&server, "core:renew") == -1, "and never given an expiry by a renewal");
}

#[test]
fn max_hold_stops_renewal() {
    let server = RedisServer::start();
    let mut s = settings(&server.dsn());
    s.set("auto_renew", &OptValue::Bool(true), Source::Option).unwrap();
    s.set("max_hold", &OptValue::Float(0.4), Source::Option).unwrap();
    let mut l = Lock::new(b"core:max-hold", 0.0, 0.1, &s).unwrap();
    let start = Instant::now();
    l.try_acquire(None).unwrap().unwrap();
    while server.cmd(&["EXISTS", "core:max-hold"]).unwrap() == Value::Int(1) {
        assert!(start.elapsed() < Duration::from_secs(2), "renewed past max_hold");
        std::thread::sleep(Duration::from_millis(5));
    }
    let held = start.elapsed();
    assert!(held > Duration::from_millis(350) && held < Duration::from_millis(500), "{held:?}");
}

#[test]
fn shared_holds_exclude_writers_and_hand_over() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut r1 = Lock::new(b"core:shared", 0.0, 5.0, &s).unwrap();
    let mut r2 = Lock::new(b"core:shared", 0.0, 5.0, &s).unwrap();
    let mut w = Lock::new(b"core:shared", 0.0, 5.0, &s).unwrap();
    let t1 = r1.try_acquire_read().unwrap().expect("a free lock reads");
    r2.try_acquire_read().unwrap().expect("readers share");
    assert_eq!(
        get(&server, "core:shared").as_deref(),
        Some(&b""[..]),
        "read mode holds the empty string"
    );
    assert_eq!(w.try_acquire(None).unwrap(), None, "a writer waits for the readers");
    assert!(r2.is_owned(Some(&t1[..])).unwrap(), "a reader's token is owned while its share lives");
    assert_eq!(r1.fencing_token().unwrap(), None, "a read hold has no fencing token");
    // The upgrade waits for the other reader; the downgrade is one step.
    assert_eq!(r1.try_acquire(None).unwrap(), None);
    assert!(r2.release(None).unwrap());
    assert_eq!(
        r1.try_acquire(None).unwrap().as_deref(),
        Some(&t1[..]),
        "the sole reader upgrades, same token"
    );
    assert_eq!(get(&server, "core:shared").as_deref(), Some(&t1[..]));
    assert_eq!(r1.acquire_read().unwrap().as_deref(), Some(&t1[..]), "the writer downgrades");
    assert_eq!(get(&server, "core:shared").as_deref(), Some(&b""[..]));
    assert!(r1.release(None).unwrap());
    assert_eq!(
        server.cmd(&["EXISTS", "core:shared", "{core:shared}:readers"]).unwrap(),
        Value::Int(0)
    );
    w.try_acquire(None).unwrap().expect("free again");
}

#[test]
fn semaphore_counts_weights_and_hands_permits_over() {
    use redis_lock::kinds::semaphore::Semaphore;
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut a = Semaphore::new(b"core:sem", 3, 0.0, 5.0, &s).unwrap();
    let mut b = Semaphore::new(b"core:sem", 3, 0.0, 5.0, &s).unwrap();
    let ta = a.try_acquire(2).unwrap().expect("3 permits free");
    assert_eq!(b.try_acquire(2).unwrap(), None, "only 1 left");
    assert_eq!(b.available().unwrap(), 1);
    assert!(b.is_owned(Some(&ta[..])).unwrap());
    assert!(b.try_acquire(4).is_err(), "a weight above the permits is refused");
    let mut other = Semaphore::new(b"core:sem", 5, 0.0, 5.0, &s).unwrap();
    assert!(matches!(
        other.try_acquire(1),
        Err(LockError::PermitsMismatch { stored: 3, given: 5, .. })
    ));
    // A waiter is handed the permits by the release, from another thread.
    let mut w = Semaphore::new(b"core:sem", 3, 5.0, 5.0, &s).unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        assert!(a.release(None).unwrap());
    });
    let started = Instant::now();
    w.acquire(3).unwrap().expect("handed over");
    assert!(started.elapsed() < Duration::from_millis(1500));
    releaser.join().unwrap();
    assert!(w.release(None).unwrap());
    assert_eq!(server.cmd(&["EXISTS", "core:sem", "{core:sem}:readers"]).unwrap(), Value::Int(0));
}

#[test]
fn inspect_shows_the_holder_its_record_and_never_the_token() {
    use redis_lock::kinds::lock::State;
    let server = RedisServer::start();
    let mut s = settings(&server.dsn());
    s.set("owner_info", &OptValue::Bool(true), Source::Option).unwrap();
    let mut a = Lock::new(b"core:inspect", 0.0, 5.0, &s).unwrap();
    let b = Lock::new(b"core:inspect", 0.0, 5.0, &s).unwrap();
    let free = b.inspect().unwrap();
    assert_eq!((free.state, free.ttl, free.mine, free.owners.len()), (State::Free, None, false, 0));
    let token = a.try_acquire(None).unwrap().expect("free lock");
    let held = b.inspect().unwrap();
    assert_eq!((held.state, held.mine, held.waiters, held.readers), (State::Write, false, 0, 0));
    assert!(held.ttl.is_some_and(|t| t > 4.0 && t <= 5.0), "{:?}", held.ttl);
    let owner = held.owners[0].clone().expect("a record");
    assert_eq!(owner.pid, std::process::id());
    assert!(!format!("{held:?}").contains(&String::from_utf8_lossy(&token).into_owned()));
    assert!(a.inspect().unwrap().mine);
    // The record leaves with the release.
    assert!(a.release(None).unwrap());
    assert_eq!(server.cmd(&["EXISTS", "{core:inspect}:owner"]).unwrap(), Value::Int(0));
}

#[test]
fn a_lease_that_ran_out_under_the_work_is_reported_lost() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut a = Lock::new(b"core:lost", 0.0, 0.1, &s).unwrap();
    let token = a.acquire_or_fail().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut b = Lock::new(b"core:lost", 0.0, 5.0, &s).unwrap();
    assert!(b.try_acquire(None).unwrap().is_some());
    match a.finish(&token) {
        Err(LockError::Lost { seen, .. }) => assert!(seen.contains("release"), "{seen}"),
        other => panic!("expected Lost, got {other:?}"),
    }
}

#[test]
fn the_empty_token_releases_nothing() {
    // The release script takes the empty token as its sign of a forced release: a
    // caller's empty token must never reach it.
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut a = Lock::new(b"core:empty", 0.0, 5.0, &s).unwrap();
    let mut b = Lock::new(b"core:empty", 0.0, 5.0, &s).unwrap();
    let token = a.try_acquire(None).unwrap().expect("free lock");
    assert!(!b.release(Some(b"")).unwrap());
    assert_eq!(get(&server, "core:empty").as_deref(), Some(&token[..]));
    assert!(b.force_release().unwrap());
    assert_eq!(get(&server, "core:empty"), None);
}

#[test]
fn fencing_numbers_never_go_back_when_the_counter_is_lost() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut l = Lock::new(b"core:lostfence", 0.0, 5.0, &s).unwrap();
    l.try_acquire(None).unwrap().unwrap();
    let before = l.fencing_token().unwrap().unwrap();
    assert!(l.release(None).unwrap());
    // A restart without persistence, or a failover to a replica that missed it: the
    // counter is gone (or behind).
    server.cmd(&["DEL", "{core:lostfence}:fence"]).unwrap();
    l.try_acquire(None).unwrap().unwrap();
    let after = l.fencing_token().unwrap().unwrap();
    assert!(after > before, "{after} after {before}");
    assert!(l.release(None).unwrap());
    server.cmd(&["SET", "{core:lostfence}:fence", "5"]).unwrap();
    l.try_acquire(None).unwrap().unwrap();
    assert!(l.fencing_token().unwrap().unwrap() > after);
}

/// Every script, as build.rs assembles it, compiles on a real server, and the
/// server's SHA1 is the one `EVALSHA` sends: a Lua error in a branch no other test
/// reaches shows here.
#[test]
fn every_script_loads_on_the_server() {
    let server = RedisServer::start();
    for (name, script) in redis_lock::kinds::scripts::all() {
        match server.cmd(&["SCRIPT", "LOAD", script.source()]) {
            Ok(Value::BulkString(sha)) => {
                assert_eq!(sha, script.sha().as_bytes(), "{name}: another SHA1")
            }
            other => panic!("{name}: SCRIPT LOAD answered {other:?}"),
        }
    }
}
