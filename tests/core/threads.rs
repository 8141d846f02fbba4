//! What a threaded SAPI depends on, with Rust threads against a real server: one
//! thread's request end (or a handled request's, under a worker SAPI) leaves other
//! holds alone, and one thread's slow reply holds up no other thread's lock cycle.

use crate::support::RedisServer;
use crate::{get, settings};
use redis::Value;
use redis_lock::config::{OptValue, Source};
use redis_lock::kinds::lock::Lock;
use std::time::{Duration, Instant};

#[test]
fn request_end_releases_only_the_calling_threads_holds() {
    // Under a threaded SAPI each thread runs its own requests: one thread's request
    // end must leave another thread's locks alone.
    use redis_lock::kinds::core::release_all_held;
    use std::sync::mpsc;
    let server = RedisServer::start();
    let dsn = server.dsn();
    let (taken, b_has_it) = mpsc::channel();
    let (go_on, a_ended) = mpsc::channel::<()>();
    let b = std::thread::spawn({
        let dsn = dsn.clone();
        move || {
            let mut l = Lock::new(b"core:owner:b", 0.0, 30.0, &settings(&dsn)).unwrap();
            l.try_acquire(None).unwrap().expect("free");
            taken.send(()).unwrap();
            a_ended.recv().unwrap();
            // The object is still alive: only request end can release it here.
            release_all_held();
            l.is_locked().unwrap()
        }
    });
    b_has_it.recv().unwrap();
    let mut a = Lock::new(b"core:owner:a", 0.0, 30.0, &settings(&dsn)).unwrap();
    a.try_acquire(None).unwrap().expect("free");
    release_all_held();
    assert_eq!(get(&server, "core:owner:a"), None, "this thread's request end released its lock");
    assert!(
        get(&server, "core:owner:b").is_some(),
        "another thread's lock survived this thread's request end"
    );
    go_on.send(()).unwrap();
    assert!(!b.join().unwrap(), "that thread's own request end released it");
    assert_eq!(get(&server, "core:owner:b"), None);
}

#[test]
fn a_handled_requests_end_releases_only_what_it_took() {
    // FrankenPHP's worker mode: handled requests inside one PHP request. The end of
    // one releases what was taken during it (not `auto_release => false`) and
    // nothing of an earlier request still open (here the boot, which FrankenPHP
    // would end too: left open, it shows that each handled request gets a number of
    // its own, as a reused one would release the boot's).
    use redis_lock::hold::table::{begin_handled_request, end_handled_request};
    use redis_lock::kinds::core::{release_all_held, release_handled_request_held};
    let server = RedisServer::start();
    let dsn = server.dsn();
    std::thread::spawn(move || {
        // PHP's own request startup activates the SAPI too: the boot counts as one.
        begin_handled_request();
        let mut boot = Lock::new(b"core:worker:boot", 0.0, 30.0, &settings(&dsn)).unwrap();
        boot.try_acquire(None).unwrap().expect("free");
        for n in 0..3 {
            begin_handled_request();
            let key = format!("core:worker:req:{n}");
            let mut req = Lock::new(key.as_bytes(), 0.0, 30.0, &settings(&dsn)).unwrap();
            req.try_acquire(None).unwrap().expect("free");
            let mut kept_settings = settings(&dsn);
            kept_settings.auto_release = false;
            let kept_key = format!("core:worker:kept:{n}");
            let mut kept = Lock::new(kept_key.as_bytes(), 0.0, 30.0, &kept_settings).unwrap();
            kept.try_acquire(None).unwrap().expect("free");
            release_handled_request_held();
            assert_eq!(get(&server, &key), None, "the handled request's end released its lock");
            assert!(get(&server, &kept_key).is_some(), "auto_release => false stays held");
            assert!(get(&server, "core:worker:boot").is_some(), "the boot's lock stays held ({n})");
            assert!(!req.is_locked().unwrap());
            std::mem::forget(req); // the object lives on, as a worker's global would
        }
        // Outside any handled request, its end releases nothing.
        assert!(end_handled_request().is_empty());
        release_all_held();
        assert_eq!(
            get(&server, "core:worker:boot"),
            None,
            "the script's end released the boot's lock"
        );
        drop(boot);
    })
    .join()
    .unwrap();
}

#[test]
fn one_threads_round_trip_never_waits_for_anothers() {
    // Each thread has connections of its own: a slow reply to one thread (here a
    // BLPOP the server answers after 1.5 s) holds up no other thread's lock cycle.
    use redis_lock::net::pool::{self, Retry};
    use redis_lock::net::wire;
    use std::sync::mpsc;
    let server = RedisServer::start();
    let dsn = server.dsn();
    let (sending, sent) = mpsc::channel();
    let slow = std::thread::spawn({
        let dsn = dsn.clone();
        move || {
            let mut s = settings(&dsn);
            s.set("read_timeout", &OptValue::Float(5.0), Source::Option).unwrap();
            let ep = pool::endpoint_for(&dsn, &s).unwrap();
            sending.send(()).unwrap();
            pool::run(&ep, Retry::IfStale, |conn, _| {
                wire::request(conn, &[b"BLPOP", b"core:threads:nothing", b"1.5"])
            })
            .unwrap()
        }
    });
    sent.recv().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let mut l = Lock::new(b"core:threads:fast", 0.0, 5.0, &settings(&dsn)).unwrap();
    let token = l.try_acquire(None).unwrap().expect("free");
    assert!(l.release(Some(&token)).unwrap());
    let took = t.elapsed();
    assert!(
        took < Duration::from_millis(700),
        "this thread waited for another's round trip: {took:?}"
    );
    assert_eq!(slow.join().unwrap(), Value::Nil, "the slow thread got its own reply");
}
