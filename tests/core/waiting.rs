//! Waiters and the hand-over: a grant straight to a listening waiter, the re-take of
//! a short hold in a tight loop, queue entries whose time is up, granted at most once,
//! and capped on the server's clock. A waiter queued by hand (`HandWaiter`) stands
//! in for one queued in the middle of a hold of microseconds.

use crate::support::RedisServer;
use crate::{get, pttl, settings, FLOOR};
use redis::Value;
use redis_lock::config::{OptValue, Source};
use redis_lock::error::LockError;
use redis_lock::kinds::lock::Lock;
use std::time::{Duration, Instant};

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
