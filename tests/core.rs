//! The pure-Rust core against real redis-server processes.

mod support;

use redis::Value;
use redis_lock::config::{OptValue, Settings, Source};
use redis_lock::error::LockError;
use redis_lock::kinds::lock::Lock;
use std::time::{Duration, Instant};
use support::{RedisCluster, RedisServer, Relay};

fn settings(dsn: &str) -> Settings {
    let mut s = Settings::default();
    s.set("dsn", &OptValue::Str(dsn.as_bytes().to_vec()), Source::Option).unwrap();
    s
}

/// A key's value, as it is: a lock's is exactly its holder's token, on every server.
fn get(server: &RedisServer, key: &str) -> Option<Vec<u8>> {
    match server.cmd(&["GET", key]).unwrap() {
        Value::BulkString(b) => Some(b),
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

/// Fencing numbers are at least the server's clock in µs: above this (2020) for sure.
const FLOOR: i64 = 1_600_000_000_000_000;

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
fn release_hands_the_lock_straight_to_a_listening_waiter() {
    let server = RedisServer::start();
    let mut s = settings(&server.dsn());
    // Polling every 2 s: only the hand-over can make the waiter quick.
    s.set("retry_delay", &OptValue::Float(2.0), Source::Option).unwrap();
    s.set("retry_delay_max", &OptValue::Float(2.0), Source::Option).unwrap();
    let mut holder = Lock::new(b"core:handover", 0.0, 10.0, &s).unwrap();
    holder.try_acquire(None).unwrap().expect("free lock");
    // Asked for while held: from now on this process's acquisitions issue numbers.
    let first = holder.fencing_token().unwrap().expect("a number");
    assert!(first > FLOOR, "numbers start at the server's clock in µs: {first}");
    let waiter_settings = s.clone();
    let waiter = std::thread::spawn(move || {
        let mut w = Lock::new(b"core:handover", 5.0, 10.0, &waiter_settings).unwrap();
        let token = w.acquire(None).unwrap();
        // The object goes back too: dropping it would release the lock.
        (token, Instant::now(), w)
    });
    std::thread::sleep(Duration::from_millis(300));
    let released = Instant::now();
    // Held for 300 ms, far past the short-hold threshold: a hand-over, not a free-for-all.
    assert!(holder.release(None).unwrap());
    let (token, got, mut w) = waiter.join().unwrap();
    let token = token.expect("the waiter gets the lock");
    assert!(
        got.duration_since(released) < Duration::from_millis(200),
        "{:?}",
        got.duration_since(released)
    );
    // The key went from one token to the other without ever being free.
    assert_eq!(get(&server, "core:handover").as_deref(), Some(&token[..]));
    assert_eq!(server.cmd(&["EXISTS", "{core:handover}:queue"]).unwrap(), Value::Int(0));
    // The grant carried the next fencing token.
    let (a, b) = (holder.fencing_token().unwrap().unwrap(), w.fencing_token().unwrap().unwrap());
    assert!(a == first && b > a, "the hand-over issues the next number: {a} then {b}");
    assert_eq!(get(&server, "{core:handover}:fence"), Some(b.to_string().into_bytes()));
}

fn pttl(server: &RedisServer, key: &str) -> i64 {
    match server.cmd(&["PTTL", key]).unwrap() {
        Value::Int(ms) => ms,
        other => panic!("unexpected {other:?}"),
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
fn redlock_needs_a_majority_and_leaves_nothing_when_it_fails() {
    let mut servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let mut s = Settings::default();
    let dsns: Vec<Vec<u8>> = servers.iter().map(|x| x.dsn().into_bytes()).collect();
    s.set("servers", &OptValue::List(dsns), Source::Option).unwrap();
    let mut a = Lock::new(b"core:redlock", 0.0, 5.0, &s).unwrap();
    let mut b = Lock::new(b"core:redlock", 0.0, 5.0, &s).unwrap();
    let token = a.try_acquire(None).unwrap().expect("all three are up");
    for server in &servers {
        assert_eq!(get(server, "core:redlock").as_deref(), Some(&token[..]));
    }
    assert_eq!(b.try_acquire(None).unwrap(), None);
    assert_eq!(a.fencing_token().unwrap(), None, "fencing is refused on Redlock");
    assert!(a.release(None).unwrap());
    servers[0].kill();
    assert!(a.try_acquire(None).unwrap().is_some(), "two of three are a majority");
    assert!(a.release(None).unwrap());
    servers[1].kill();
    match a.try_acquire(None) {
        Err(LockError::Connection { addr, cause, .. }) => {
            assert!(addr.contains("2 of the 3"), "{addr}");
            assert!(
                cause.contains(&format!(":{}", servers[0].port))
                    && cause.contains(&format!(":{}", servers[1].port)),
                "{cause}"
            );
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert_eq!(
        servers[2].cmd(&["EXISTS", "core:redlock"]).unwrap(),
        Value::Int(0),
        "the failed attempt was undone"
    );
}

/// Settings for a Redlock over `servers`, with `read_timeout` (and `connect_timeout`).
fn redlock(servers: &[RedisServer], read_timeout: f64) -> Settings {
    let mut s = Settings::default();
    let dsns: Vec<Vec<u8>> = servers.iter().map(|x| x.dsn().into_bytes()).collect();
    s.set("servers", &OptValue::List(dsns), Source::Option).unwrap();
    s.set("read_timeout", &OptValue::Float(read_timeout), Source::Option).unwrap();
    s.set("connect_timeout", &OptValue::Float(read_timeout), Source::Option).unwrap();
    s
}

fn exists(server: &RedisServer, key: &str) -> bool {
    server.cmd(&["EXISTS", key]).unwrap() == Value::Int(1)
}

#[test]
fn redlock_cycles_do_not_wait_for_a_hung_minority() {
    let servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    // 1 s, not 0.2: on a busy machine a live node's reply can take longer than
    // 0.2 s, and two late ones leave no majority. The median below is the check.
    let s = redlock(&servers, 1.0);
    let mut l = Lock::new(b"core:hung", 0.0, 5.0, &s).unwrap();
    let mut cycle = || {
        let t = Instant::now();
        l.try_acquire(None).unwrap().expect("a majority answers");
        assert!(l.release(None).unwrap());
        t.elapsed()
    };
    cycle();
    let sets = servers[4].set_calls();
    servers[4].signal(libc::SIGSTOP);
    let mut took: Vec<Duration> = (0..100).map(|_| cycle()).collect();
    took.sort();
    assert!(took[50] < Duration::from_millis(50), "median {:?}", took[50]);
    // Every SET that went to the hung node went with its release behind it.
    servers[4].signal(libc::SIGCONT);
    std::thread::sleep(Duration::from_millis(100));
    assert!(servers[4].set_calls() > sets, "the late SETs ran");
    assert!(!exists(&servers[4], "core:hung"), "and their releases after them");
}

#[test]
fn a_late_set_is_undone_behind_it_on_its_connection() {
    let servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    let s = redlock(&servers, 0.2);
    let mut warm = Lock::new(b"core:warm", 0.0, 5.0, &s).unwrap();
    warm.try_acquire(None).unwrap().unwrap();
    assert!(warm.release(None).unwrap());
    for server in &servers[1..4] {
        server.cmd(&["SET", "core:late", "someone", "PX", "10000"]).unwrap();
    }
    let sets = servers[0].set_calls();
    servers[0].signal(libc::SIGSTOP);
    // Three refuse: decided at once, without the hung node, whose SET is on its way.
    let mut l = Lock::new(b"core:late", 0.0, 5.0, &s).unwrap();
    let t = Instant::now();
    assert_eq!(l.try_acquire(None).unwrap(), None);
    assert!(t.elapsed() < Duration::from_millis(100), "{:?}", t.elapsed());
    assert!(!exists(&servers[4], "core:late"), "undone where it was taken");
    servers[0].signal(libc::SIGCONT);
    std::thread::sleep(Duration::from_millis(100));
    assert!(servers[0].set_calls() > sets, "the late SET ran");
    assert!(!exists(&servers[0], "core:late"), "and the undo behind it cleared it");
}

#[test]
fn a_timed_out_majority_gets_the_undo_of_the_failed_attempt_behind_its_set() {
    let servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    let s = redlock(&servers, 0.2);
    let mut l = Lock::new(b"core:late-3", 0.0, 5.0, &s).unwrap();
    l.try_acquire(None).unwrap().unwrap();
    assert!(l.release(None).unwrap());
    let sets: Vec<u64> = servers[..3].iter().map(RedisServer::set_calls).collect();
    for server in &servers[..3] {
        server.signal(libc::SIGSTOP);
    }
    let t = Instant::now();
    match l.try_acquire(None) {
        Err(LockError::Connection { cause, sent, .. }) => {
            assert!(sent, "the SETs went out");
            for server in &servers[..3] {
                assert!(cause.contains(&format!(":{}: timed out", server.port)), "{cause}");
            }
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert!(t.elapsed() < Duration::from_millis(400), "about one read_timeout: {:?}", t.elapsed());
    // Skipped now, but no majority can be had without them: the next attempt asks
    // them again (one read_timeout), and fails while they are silent.
    let t = Instant::now();
    assert!(matches!(l.try_acquire(None), Err(LockError::Connection { .. })));
    assert!(
        t.elapsed() >= Duration::from_millis(150) && t.elapsed() < Duration::from_millis(400),
        "{:?}",
        t.elapsed()
    );
    for server in &servers[..3] {
        server.signal(libc::SIGCONT);
    }
    std::thread::sleep(Duration::from_millis(100));
    for (server, before) in servers[..3].iter().zip(sets) {
        assert!(server.set_calls() > before, "the late SET ran on {}", server.port);
    }
    for server in &servers {
        assert!(!exists(server, "core:late-3"), "nothing left on {}", server.port);
    }
}

#[test]
fn the_watchdog_renews_a_redlock_without_waiting_for_a_hung_node() {
    let servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    let mut s = redlock(&servers, 0.5);
    s.set("auto_renew", &OptValue::Bool(true), Source::Option).unwrap();
    // A renewal that waited a read_timeout for the hung node would come after the lease.
    let mut l = Lock::new(b"core:hung-renew", 0.0, 0.3, &s).unwrap();
    l.try_acquire(None).unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(250)); // the watchdog's connections are made
    servers[4].signal(libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(1200));
    assert!(l.is_owned(None).unwrap(), "renewed past four leases by the other four");
    assert!(l.release(None).unwrap());
    servers[4].signal(libc::SIGCONT);
}

#[test]
fn cluster_locks_live_on_their_slots_master_and_follow_a_moved_slot() {
    let cluster = RedisCluster::start();
    let mut s = Settings::default();
    s.set("cluster", &OptValue::List(vec![cluster.nodes[1].dsn().into_bytes()]), Source::Option)
        .unwrap();
    let mut owners = std::collections::HashSet::new();
    for i in 0..30 {
        let key = format!("core:cluster:{i}");
        let mut a = Lock::new(key.as_bytes(), 0.0, 5.0, &s).unwrap();
        let token = a.try_acquire(None).unwrap().expect("free lock");
        let owner = cluster.owner(&key);
        owners.insert(owner.port);
        assert_eq!(get(owner, &key).as_deref(), Some(&token[..]));
        let n = a.fencing_token().unwrap().expect("a number");
        assert!(n > FLOOR, "{n}");
        assert_eq!(get(owner, &format!("{{{key}}}:fence")), Some(n.to_string().into_bytes()));
        let mut b = Lock::new(key.as_bytes(), 0.0, 5.0, &s).unwrap();
        assert_eq!(b.try_acquire(None).unwrap(), None);
        assert!(a.release(None).unwrap());
        assert_eq!(get(owner, &key), None);
    }
    assert_eq!(owners.len(), 3, "30 keys spread over the three masters");

    // Move an empty slot to another master; this process's map still names the old one.
    let key = "core:cluster:moving";
    let mut plain = s.clone();
    plain.set("fencing", &OptValue::Bool(false), Source::Option).unwrap();
    let mut a = Lock::new(key.as_bytes(), 0.0, 5.0, &plain).unwrap();
    assert!(a.try_acquire(None).unwrap().is_some());
    assert!(a.release(None).unwrap());
    let from = cluster.owner(key);
    let to = cluster.nodes.iter().find(|n| n.port != from.port).unwrap();
    let slot = match from.cmd(&["CLUSTER", "KEYSLOT", key]).unwrap() {
        Value::Int(n) => n.to_string(),
        other => panic!("KEYSLOT: {other:?}"),
    };
    let to_id = RedisCluster::id(to);
    for n in [to, from].into_iter().chain(cluster.nodes.iter()) {
        n.cmd(&["CLUSTER", "SETSLOT", &slot, "NODE", &to_id]).unwrap();
    }
    let token = a.try_acquire(None).unwrap().expect("acquired after MOVED");
    assert_eq!(get(to, key).as_deref(), Some(&token[..]));
    assert!(a.release(None).unwrap());
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

/// A waiter queued by hand (an entry naming a channel this test listens on), so that
/// it is queued in the middle of a hold of microseconds.
struct HandWaiter<'a> {
    side: redis::Connection,
    sub: redis::PubSub<'a>,
}

impl<'a> HandWaiter<'a> {
    /// Its queue entry: waiting until a year from now (ms on the server's clock, which
    /// is this machine's), lease 60 s, channel `core-waiter`, token `WAITER`.
    fn entry() -> String {
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        format!(
            "{}:60000:0:11:core-waiterWAITER",
            (now + Duration::from_secs(365 * 86400)).as_millis()
        )
    }

    /// Listens on `conn`, a connection to `server` (a `PubSub` unsubscribes when dropped).
    fn new(server: &RedisServer, conn: &'a mut redis::Connection) -> Self {
        let mut sub = conn.as_pubsub();
        sub.subscribe("core-waiter").unwrap();
        sub.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        let side = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
        HandWaiter { side, sub }
    }

    /// Queues the entry with its patience started, as the acquire script does.
    fn queue(&mut self, key: &str) {
        redis::pipe()
            .cmd("RPUSH")
            .arg(format!("{{{key}}}:queue"))
            .arg(Self::entry())
            .cmd("SET")
            .arg(format!("{{{key}}}:patience"))
            .arg("1")
            .arg("PX")
            .arg(60000)
            .exec(&mut self.side)
            .unwrap();
    }

    /// The next message on the waiter's channel ("n…" with its number dropped), if one comes within 0.3 s.
    fn heard(&mut self) -> Option<String> {
        let msg: String = self.sub.get_message().ok()?.get_payload().unwrap();
        let (head, token) = msg.split_once(':').unwrap();
        Some(match head.split_once('@') {
            // A grant says when it was made, on the server's clock (ms): shown without it.
            Some((grant, at)) if grant.starts_with('g') => {
                let at: u64 = at.parse().expect("a grant's time is a number");
                assert!(at > 1_600_000_000_000, "a grant's time is the server's clock in ms: {at}");
                format!("{grant}:{token}")
            }
            _ if msg.starts_with('n') => format!("n:{token}"),
            _ => msg,
        })
    }
}

#[test]
fn only_a_tight_loop_retakes_a_short_hold_and_its_end_hands_the_lock_over() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut conn = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
    let mut waiter = HandWaiter::new(&server, &mut conn);
    let key = "core:loop";
    let reset = || drop(server.cmd(&["DEL", key, "{core:loop}:queue", "{core:loop}:patience"]));
    // A cycle with nobody waiting, then (back within microseconds) a hold during which
    // the waiter queues.
    let step = |l: &mut Lock, waiter: &mut HandWaiter, pause: Duration| {
        let t = l.acquire(None).unwrap().unwrap();
        assert!(l.release(Some(&t)).unwrap());
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        let t = l.acquire(None).unwrap().expect("free lock");
        waiter.queue(key);
        assert!(l.release(Some(&t)).unwrap());
    };

    let holder = || get(&server, key).map(|h| String::from_utf8_lossy(&h).into_owned());
    // A pause of 0.2 ms (a preemption on a busy machine) makes a loop's step a
    // hand-over, which shows in what the waiter hears: the loop cases get a few tries.
    let retried = |waiter: &mut HandWaiter,
                   case: &mut dyn FnMut(&mut HandWaiter) -> Vec<Option<String>>,
                   want: &[Option<&str>]| {
        let want: Vec<Option<String>> = want.iter().map(|w| w.map(String::from)).collect();
        let mut got = Vec::new();
        for _ in 0..5 {
            reset();
            while waiter.heard().is_some() {}
            got = case(waiter);
            if got == want {
                break;
            }
        }
        assert_eq!(got, want);
    };

    // In a loop: the lock is only freed, and the waiter told once when to look again.
    // The loop's end: the object hands the lock it left free to the waiter.
    retried(
        &mut waiter,
        &mut |waiter| {
            let mut l = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
            step(&mut l, waiter, Duration::ZERO);
            if let Some(t) = l.acquire(None).unwrap() {
                l.release(Some(&t)).unwrap();
            }
            let seen = vec![holder(), waiter.heard(), waiter.heard()];
            drop(l);
            [seen, vec![holder(), waiter.heard()]].concat()
        },
        &[None, Some("n:WAITER"), None, Some("WAITER"), Some("g:WAITER")],
    );

    // Back only after 5 ms: not a tight loop, so even a short hold hands over.
    reset();
    let mut l = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
    step(&mut l, &mut waiter, Duration::from_millis(5));
    assert_eq!(get(&server, key).as_deref(), Some(&b"WAITER"[..]));
    assert_eq!(waiter.heard().as_deref(), Some("g:WAITER"));

    // A new object for the same lock made after the release is about to take it again:
    // the old object's end hands nothing over.
    retried(
        &mut waiter,
        &mut |waiter| {
            let mut l = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
            step(&mut l, waiter, Duration::ZERO);
            let next = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
            drop(l);
            let seen = vec![holder(), waiter.heard(), waiter.heard()];
            drop(next);
            seen
        },
        &[None, Some("n:WAITER"), None],
    );
    reset();
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
fn a_scan_lists_the_locks_on_every_master_without_their_auxiliary_keys() {
    use redis_lock::kinds::catalog::{self, Found};
    let cluster = RedisCluster::start();
    let mut s = Settings::default();
    s.set("cluster", &OptValue::List(vec![cluster.nodes[0].dsn().into_bytes()]), Source::Option)
        .unwrap();
    s.set("prefix", &OptValue::Str(b"scan:".to_vec()), Source::Option).unwrap();
    let mut held = Vec::new();
    for i in 0..30 {
        let mut l = Lock::new(format!("l{i:02}").as_bytes(), 0.0, 5.0, &s).unwrap();
        l.try_acquire(None).unwrap().expect("free");
        // A fencing counter beside each: an auxiliary key, never listed.
        l.fencing_token().unwrap();
        held.push(l);
    }
    let listing = catalog::scan(&s, b"*", 100).unwrap();
    let names: Vec<String> =
        listing.entries.iter().map(|(n, _)| String::from_utf8_lossy(n).into_owned()).collect();
    assert_eq!(names, (0..30).map(|i| format!("l{i:02}")).collect::<Vec<_>>());
    assert!(listing.entries.iter().all(|(_, k)| *k == Found::Lock) && !listing.truncated);
    // Keys live on every master, and the scan found them all.
    assert!(cluster.nodes.iter().all(|n| matches!(n.cmd(&["DBSIZE"]), Ok(Value::Int(k)) if k > 0)));
    let cut = catalog::scan(&s, b"*", 10).unwrap();
    assert_eq!((cut.entries.len(), cut.truncated), (10, true));
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
fn a_release_passes_over_a_waiter_whose_time_is_up_and_finish_releases_unawaited() {
    let server = RedisServer::start();
    let s = settings(&server.dsn());
    let mut conn = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
    let mut waiter = HandWaiter::new(&server, &mut conn);
    let key = "core:until";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    // Two entries listening on the same channel: the first one's time is up (a waiter
    // cut off by a partition), the second one's is not.
    let gone = format!("{}:60000:0:11:core-waiterGONE", now - 1000);
    let live = format!("{}:60000:0:11:core-waiterLIVE", now + 60_000);
    let mut holder = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
    let t = holder.acquire(None).unwrap().expect("free");
    assert_eq!(server.cmd(&["RPUSH", "{core:until}:queue", &gone, &live]).unwrap(), Value::Int(2));
    assert!(holder.release(Some(&t)).unwrap());
    assert_eq!(
        waiter.heard().as_deref(),
        Some("g:LIVE"),
        "the release hands it to the waiter still waiting"
    );
    assert_eq!(get(&server, key).as_deref(), Some(&b"LIVE"[..]));
    assert_eq!(
        server.cmd(&["LLEN", "{core:until}:queue"]).unwrap(),
        Value::Int(0),
        "the expired entry is gone"
    );
    server.cmd(&["DEL", key]).unwrap();

    // finish() (synchronized()'s end) sends the release without waiting: the key is
    // free once the connection's next use has read its answer, which is that use's.
    let mut l = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
    let t = l.acquire(None).unwrap().expect("free");
    l.finish(&t).unwrap();
    assert!(
        !l.is_locked().unwrap(),
        "the next command runs after the release, and reads its own reply"
    );
    // Near the end of its lease (within read_timeout) the release is awaited: a lost
    // hold is an error then.
    let mut short = Lock::new(key.as_bytes(), 0.0, 0.3, &s).unwrap();
    let t = short.acquire(None).unwrap().expect("free");
    server.cmd(&["SET", key, "someone-else"]).unwrap();
    assert!(matches!(short.finish(&t), Err(LockError::Lost { .. })));
}

/// Runs the acquire script as the hand waiter would: token `WAITER`, lease 60 s, the
/// entry `entry` (`+<ms>:…` or as queued), `again` as the waiting loop sends it.
fn acquire_as_waiter(server: &RedisServer, key: &str, entry: &str, again: bool) -> Value {
    use redis::ConnectionLike;
    use redis_lock::net::script::Args;
    let k = redis_lock::keys::LockKeys::new(key.as_bytes().to_vec());
    let call = redis_lock::kinds::lock::scripts::Acquire {
        lock: &k.lock,
        queue: &k.queue,
        fence: &k.fence,
        readers: &k.readers,
        owner: &k.owner,
        token: b"WAITER",
        lease: b"60000",
        sent: entry.as_bytes(),
        life: b"70000",
        info: b"",
        fair: false,
        again,
        chosen: false,
        fenced: false,
        upgrade: false,
    };
    let mut conn = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
    conn.req_packed_command(&call.script().packed_eval(&call)).unwrap()
}

#[test]
fn a_queue_entry_grants_at_most_once() {
    let server = RedisServer::start();
    let mut s = settings(&server.dsn());
    // Fair: the first try runs the acquire script, which loads it for the raw calls below.
    s.set("fair", &OptValue::Bool(true), Source::Option).unwrap();
    let key = "core:once";
    let mut conn = redis::Client::open(server.dsn()).unwrap().get_connection().unwrap();
    let mut waiter = HandWaiter::new(&server, &mut conn);
    let mut holder = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
    let t = holder.acquire(None).unwrap().expect("free");
    // The waiter queues; the reply is its entry as queued.
    let queued = match acquire_as_waiter(&server, key, "+60000:60000:0:11:core-waiterWAITER", false)
    {
        Value::Array(v) if v.len() == 4 && v[0] == Value::Int(2) => match &v[2] {
            Value::BulkString(e) => String::from_utf8(e.clone()).unwrap(),
            other => panic!("{other:?}"),
        },
        other => panic!("expected {{2, pttl, entry, clock}}, got {other:?}"),
    };
    // The release grants it: the key holds its token, the entry left the queue.
    assert!(holder.release(Some(&t)).unwrap());
    assert_eq!(waiter.heard().as_deref(), Some("g:WAITER"));
    assert_eq!(get(&server, key).as_deref(), Some(&b"WAITER"[..]));
    // The waiter was paused past its lease: the key expired, and someone else took it.
    server.cmd(&["SET", key, "OTHER", "PX", "10000"]).unwrap();
    // Its late try, sent with the entry as queued, must not queue it again: that entry
    // was granted once already.
    match acquire_as_waiter(&server, key, &queued, true) {
        Value::Array(v) => {
            assert_eq!(v.first(), Some(&Value::Int(3)), "busy and no longer queued: {v:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        server.cmd(&["LLEN", &format!("{{{key}}}:queue")]).unwrap(),
        Value::Int(0),
        "not queued twice"
    );
    // So the other holder's release hands the lock to nobody.
    server.cmd(&["DEL", key]).unwrap();
    assert_eq!(waiter.heard(), None, "no second grant");
    // A try that found its grant still its own restarts the lease (the waiter counts it from then).
    server.cmd(&["SET", key, "WAITER", "PX", "50"]).unwrap();
    match acquire_as_waiter(&server, key, &queued, true) {
        Value::Array(v) => assert_eq!(v.first(), Some(&Value::Int(1)), "{v:?}"),
        other => panic!("{other:?}"),
    }
    assert!(pttl(&server, key) > 59_000, "the lease starts again from the try");
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

/// The server's clock, in ms.
fn server_ms(server: &RedisServer) -> i64 {
    match server.cmd(&["TIME"]).unwrap() {
        Value::Array(t) => match (&t[0], &t[1]) {
            (Value::BulkString(s), Value::BulkString(us)) => {
                let s: i64 = String::from_utf8_lossy(s).parse().unwrap();
                let us: i64 = String::from_utf8_lossy(us).parse().unwrap();
                s * 1000 + us / 1000
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// Lead 5 of issue 47: a queue entry's time on the server never ends after its
/// waiter's deadline, however late its try arrives. The waiter sends a cap on the
/// server's clock (`+<ms>~<cap>`: a lower bound of that clock from an earlier
/// exchange, plus the wait left), and the entry is queued until the earlier of the cap
/// and `now + ms`; a try that arrives after its cap is not queued at all. Before, the
/// time was `now + ms` whatever the delay (and this entry was an error).
#[test]
fn a_late_try_never_queues_past_its_cap() {
    let server = RedisServer::start();
    let mut s = settings(&server.dsn());
    s.set("fair", &OptValue::Bool(true), Source::Option).unwrap();
    let key = "core:cap";
    let mut holder = Lock::new(key.as_bytes(), 0.0, 10.0, &s).unwrap();
    holder.acquire(None).unwrap().expect("free");
    let rest = ":60000:0:11:core-waiterWAITER";
    // A try that left with 1 s to wait, arriving 300 ms late: its cap is 700 ms from now.
    let now = server_ms(&server);
    let cap = now + 700;
    let (until, clock) = match acquire_as_waiter(&server, key, &format!("+1000~{cap}{rest}"), false)
    {
        Value::Array(v) if v.len() == 4 && v[0] == Value::Int(2) => match (&v[2], &v[3]) {
            (Value::BulkString(e), Value::Int(c)) => (String::from_utf8(e.clone()).unwrap(), *c),
            other => panic!("{other:?}"),
        },
        other => panic!("expected {{2, pttl, entry, clock}}, got {other:?}"),
    };
    assert_eq!(until, format!("{cap}{rest}"), "queued until the cap, not now + 1000");
    assert!(
        (now..now + 100).contains(&clock),
        "the reply carries the server's clock: {clock} against {now}"
    );
    // Without a cap, or with a later one, now + ms.
    server.cmd(&["DEL", &format!("{{{key}}}:queue")]).unwrap();
    let late = server_ms(&server) + 5000;
    match acquire_as_waiter(&server, key, &format!("+1000~{late}{rest}"), false) {
        Value::Array(v) => match &v[2] {
            Value::BulkString(e) => {
                let u: i64 = String::from_utf8_lossy(e).split(':').next().unwrap().parse().unwrap();
                assert!(u < late && u >= now + 1000, "now + 1000: {u}");
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // A try that arrives after its cap: its waiter's deadline has passed, and it is not
    // queued.
    server.cmd(&["DEL", &format!("{{{key}}}:queue")]).unwrap();
    let past = server_ms(&server) - 10;
    match acquire_as_waiter(&server, key, &format!("+1000~{past}{rest}"), false) {
        Value::Array(v) => {
            assert_eq!(v.first(), Some(&Value::Int(0)), "busy and not queued: {v:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.cmd(&["LLEN", &format!("{{{key}}}:queue")]).unwrap(), Value::Int(0));
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
