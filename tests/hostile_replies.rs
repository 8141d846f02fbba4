//! A broken or hostile server (or proxy) cannot make the reply reader panic, hang
//! past its read timeout, or take memory out of proportion to what it sent.
//!
//! `hostile_replies_are_refused_safely` is a property test: generated replies,
//! valid ones serialized then mutated (bit flips, truncation, splices, lengths
//! replaced with huge, negative or garbage numbers, deep nesting, endless lines) and
//! plain random bytes, each sent by a fake server over a real socket (Unix, and TCP
//! on loopback for one in eight) to our connection, read as a reply, as a push
//! message a waiter listens for, or as the owed reply settled at request end. A
//! counting allocator measures what each read allocates. The other tests drive what
//! the generator cannot: a reply that trickles, an endless stream, a reply too big.
//!
//! `REDIS_LOCK_FUZZ_CASES` sets how many inputs (default 8000, a few seconds), `REDIS_LOCK_FUZZ_SEED`
//! the seed and `REDIS_LOCK_FUZZ_FIRST` the first case (to replay one that failed);
//! `cargo test --no-default-features --test hostile_replies -- --nocapture` shows the count.

#[path = "support/resp_gen.rs"]
mod resp_gen;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis::Value;
use redis_lock::net::listen::Heard;
use redis_lock::net::wire::Connection;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Counts the bytes each thread has allocated and not freed, and their peak.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    if delta > 0 {
        let _ = TOTAL.try_with(|total| total.set(total.get() + delta as usize));
    }
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        q
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Runs `f` on this thread and returns what it gave and the most it held allocated
/// at once beyond what was allocated before.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let out = f();
    (out, (PEAK.with(Cell::get) - before).max(0) as usize)
}

/// Runs `f` on this thread and returns what it gave and how many bytes it allocated
/// in all, freed or not.
fn allocated<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = TOTAL.with(Cell::get);
    let out = f();
    (out, TOTAL.with(Cell::get) - before)
}

/// How the client reads what the fake server sends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// As the reply to a command (`recv_response`).
    Reply,
    /// As a push message, on a connection subscribed to a channel (`next_push`).
    Listen,
    /// As the reply owed to a command sent unawaited, read without blocking at request
    /// end (`settle_arrived`), then at the connection's close.
    Settle,
}

/// What the fake server does for one connection.
struct Job {
    bytes: Arc<Vec<u8>>,
    tcp: bool,
    /// Bytes to read from the client before answering (its command).
    expect: usize,
    /// What to send before `bytes` (a subscription's confirmation).
    preamble: &'static [u8],
    /// Keep the connection open (silent) after `bytes`, until told.
    hold: bool,
}

/// A fake server on a Unix socket and a loopback TCP port, one job per connection.
struct FakeServer {
    jobs: Sender<Job>,
    written: Receiver<()>,
    release: Sender<()>,
    port: u16,
    path: PathBuf,
}

impl FakeServer {
    fn start() -> FakeServer {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = tcp.local_addr().unwrap().port();
        let path =
            std::env::temp_dir().join(format!("redis-lock-hostile-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let unix = UnixListener::bind(&path).expect("bind unix");
        let (jobs, job_rx) = channel::<Job>();
        let (written_tx, written) = channel();
        let (release, release_rx) = channel();
        thread::spawn(move || {
            for job in job_rx {
                let mut sock: Box<dyn ReadWrite> = if job.tcp {
                    Box::new(tcp.accept().expect("accept").0)
                } else {
                    Box::new(unix.accept().expect("accept").0)
                };
                let mut command = vec![0; job.expect];
                let _ = sock.read_exact(&mut command);
                let _ = sock.write_all(job.preamble);
                // The client may give up before all of it is sent: the error is its.
                let _ = sock.write_all(&job.bytes);
                let _ = written_tx.send(());
                if job.hold {
                    let _ = release_rx.recv();
                }
            }
        });
        FakeServer { jobs, written, release, port, path }
    }

    fn dsn(&self, tcp: bool) -> String {
        if tcp {
            format!("redis://127.0.0.1:{}", self.port)
        } else {
            format!("unix://{}", self.path.display())
        }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

trait ReadWrite: Read + Write + Send {}
impl ReadWrite for TcpStream {}
impl ReadWrite for UnixStream {}

fn connect(dsn: &str, read_timeout: Duration) -> Connection {
    let info = redis_lock::dsn::parse_dsn(dsn).expect("dsn");
    let conn = Connection::connect(
        &info,
        &redis_lock::config::TlsFiles::default(),
        Duration::from_secs(2),
        redis_lock::config::DEFAULT_MAX_REPLY,
    )
    .expect("connect");
    conn.set_read_timeout(Some(read_timeout)).unwrap();
    conn
}

fn shown(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(120)];
    format!(
        "{:?}{} ({} bytes)",
        String::from_utf8_lossy(cut),
        if bytes.len() > 120 { "…" } else { "" },
        bytes.len()
    )
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = if let Some(hex) = v.strip_prefix("0x") {
                u64::from_str_radix(hex, 16)
            } else {
                v.parse()
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        }
        Err(_) => default,
    }
}

/// The subscription the fake server confirms in `Listen` mode.
const SUBSCRIBE: &[u8] = b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n";
const CONFIRMED: &[u8] = b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n";
const PING: &[u8] = b"*1\r\n$4\r\nPING\r\n";

#[test]
fn hostile_replies_are_refused_safely() {
    let seed = env_number("REDIS_LOCK_FUZZ_SEED", 0x005e_ed0f_4e51);
    let cases = env_number("REDIS_LOCK_FUZZ_CASES", 8_000);
    let first = env_number("REDIS_LOCK_FUZZ_FIRST", 0);
    let read_timeout = Duration::from_millis(5);
    // Far above what any case needs, far below a hang: a case is failed past it.
    let time_bound = read_timeout * 2 + Duration::from_secs(2);
    let server = FakeServer::start();

    // A case that spins forever never returns to be failed: this aborts the run.
    let current: Arc<Mutex<Option<(Instant, String)>>> = Arc::new(Mutex::new(None));
    let watched = Arc::clone(&current);
    thread::spawn(move || loop {
        thread::sleep(Duration::from_secs(1));
        if let Some((since, what)) = &*watched.lock().unwrap() {
            if since.elapsed() > Duration::from_secs(60) {
                eprintln!("hostile replies: a read has not returned in 60 s: {what}");
                std::process::abort();
            }
        }
    });

    let (mut values, mut refused, mut timeouts, mut held, mut largest, mut worst_ratio) =
        (0u64, 0u64, 0u64, 0u64, 0usize, 0f64);
    for i in first..first + cases {
        let mut rng = StdRng::seed_from_u64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let case = resp_gen::case(&mut rng);
        let mode = match rng.random_range(0..8) {
            0 => Mode::Listen,
            1 => Mode::Settle,
            _ => Mode::Reply,
        };
        let tcp = rng.random_ratio(1, 8);
        let hold = rng.random_ratio(1, 32) || (case.prefix && rng.random_ratio(1, 8));
        let replay = format!(
            "seed {seed:#x}, case {i} (replay: REDIS_LOCK_FUZZ_SEED={seed:#x} REDIS_LOCK_FUZZ_FIRST={i} REDIS_LOCK_FUZZ_CASES=1), {}, {mode:?}{}{}: {}",
            case.how,
            if tcp { ", TCP" } else { "" },
            if hold { ", held open" } else { "" },
            shown(&case.bytes)
        );
        let bytes = Arc::new(case.bytes);
        largest = largest.max(bytes.len());
        let (expect, preamble) = match mode {
            Mode::Reply => (0, &b""[..]),
            Mode::Listen => (SUBSCRIBE.len(), CONFIRMED),
            Mode::Settle => (PING.len(), &b""[..]),
        };
        server.jobs.send(Job { bytes: Arc::clone(&bytes), tcp, expect, preamble, hold }).unwrap();
        // A valid reply is judged on what it says, not on how fast a busy machine
        // schedules the server's thread between the pieces of a large one: 2 s per
        // read, not the 5 ms the hostile cases get (their bound is what they test).
        let judged_on_content = case.valid && mode == Mode::Reply && !hold;
        let mut conn = connect(
            &server.dsn(tcp),
            if judged_on_content { Duration::from_secs(2) } else { read_timeout },
        );
        if mode == Mode::Listen {
            // The subscription is the setting, not the case: its confirmation may
            // take a busy machine longer than the case's 5 ms.
            conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let subscribed = conn.subscribe("ch", false);
            assert!(
                matches!(subscribed, Ok(true)),
                "{replay}: the subscription failed: {subscribed:?}"
            );
            conn.set_read_timeout(Some(read_timeout)).unwrap();
        }
        *current.lock().unwrap() = Some((Instant::now(), replay.clone()));
        let mut written = false;
        let started = Instant::now();
        let (outcome, grew) = measured(|| {
            catch_unwind(AssertUnwindSafe(|| match mode {
                Mode::Reply => conn.recv_response().map(Some),
                Mode::Listen => conn.next_push("ch", read_timeout).map(|heard| match heard {
                    Heard::Message(m) => Some(Value::BulkString(m)),
                    Heard::Nothing | Heard::Unsubscribed => None,
                }),
                Mode::Settle => {
                    conn.send_unawaited(PING, None)?;
                    // A large input fills the socket before it is all written.
                    written = server.written.recv_timeout(Duration::from_millis(20)).is_ok();
                    conn.settle_arrived();
                    Ok(None)
                }
            }))
        });
        let took = started.elapsed();
        // The close reads what is still owed (Settle), within the read timeout too.
        let closing = Instant::now();
        let closed = catch_unwind(AssertUnwindSafe(move || drop(conn)));
        let took_close = closing.elapsed();
        *current.lock().unwrap() = None;
        if !written {
            let _ = server.written.recv();
        }
        if hold {
            held += 1;
            server.release.send(()).unwrap();
        }

        let result = match outcome {
            Ok(r) => r,
            Err(_) => panic!("{replay}: the reader panicked"),
        };
        assert!(closed.is_ok(), "{replay}: closing the connection panicked");
        assert!(took <= time_bound, "{replay}: the read took {took:?}, past {time_bound:?}");
        assert!(
            took_close <= time_bound,
            "{replay}: the close took {took_close:?}, past {time_bound:?}"
        );
        // The buffer may double past the input; values take a few times the bytes
        // they came in (a 3-byte `_\r\n` is a whole `Value`); nothing may follow a
        // length the server declared but did not send.
        let bound = 32 * bytes.len() + 16 * 1024;
        assert!(grew <= bound, "{replay}: the read held {grew} bytes at once, past {bound}");
        if bytes.len() > 1000 {
            worst_ratio = worst_ratio.max(grew as f64 / bytes.len() as f64);
        }
        match &result {
            Ok(Some(_)) => values += 1,
            Ok(None) => {}
            Err(e) if e.is_timeout() => timeouts += 1,
            Err(_) => refused += 1,
        }
        if case.prefix {
            assert!(
                !matches!(result, Ok(Some(_))),
                "{replay}: a truncated reply was read as {result:?}"
            );
        }
        if case.valid && mode == Mode::Reply && !hold {
            let first = bytes[0];
            if case.resp2 {
                let expected = redis::parse_redis_value(&bytes).unwrap();
                assert!(
                    matches!(&result, Ok(Some(v)) if *v == expected),
                    "{replay}: read as {result:?}, redis-rs reads {expected:?}"
                );
            } else if first != b'>' && first != b'|' {
                assert!(
                    matches!(result, Ok(Some(_))),
                    "{replay}: a valid reply was refused: {result:?}"
                );
            }
        }
    }
    println!(
        "hostile replies: {cases} inputs tried (seed {seed:#x}, from case {first}): {values} read as values, {refused} refused, \
         {timeouts} timed out, {held} left hanging; largest input {largest} bytes; most held at once {worst_ratio:.1}× the input (inputs over 1000 bytes)"
    );
}

/// A fake server that sends what `talk` writes on one connection, on a thread.
fn serve(talk: impl FnOnce(TcpStream) + Send + 'static) -> (String, thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let dsn = format!("redis://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let handle = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        talk(sock);
    });
    (dsn, handle)
}

/// Writes `chunk` again and again until the client hangs up (or `limit` passes).
fn stream(mut sock: TcpStream, head: &[u8], chunk: &[u8], pause: Duration) {
    let until = Instant::now() + Duration::from_secs(30);
    if sock.write_all(head).is_err() {
        return;
    }
    while Instant::now() < until {
        if sock.write_all(chunk).is_err() {
            return;
        }
        if !pause.is_zero() {
            thread::sleep(pause);
        }
    }
}

#[test]
fn a_trickling_reply_ends_within_the_read_timeout() {
    // Every read brings a byte before its timeout: only a bound on the whole reply ends it.
    times_out(b"$1000000\r\n", b"x", Duration::from_millis(20), 2);
}

/// A server that sends `head`, then `body` over and over with `pause` between: the
/// reply ends in a timeout, within `bound` read timeouts (0.3 s each).
fn times_out(head: &'static [u8], body: &'static [u8], pause: Duration, bound: u32) {
    let (dsn, server) = serve(move |sock| stream(sock, head, body, pause));
    let read_timeout = Duration::from_millis(300);
    let mut conn = connect(&dsn, read_timeout);
    let started = Instant::now();
    let err = conn.recv_response().unwrap_err();
    let took = started.elapsed();
    assert!(err.is_timeout(), "{err:?}");
    assert!(took < read_timeout * bound, "took {took:?}");
    drop(conn);
    server.join().unwrap();
}

#[test]
fn an_endless_stream_of_push_messages_ends_within_the_read_timeout() {
    // Whole push messages, each kept aside, while the reply never comes.
    times_out(b"", b">2\r\n$7\r\nmessage\r\n$1\r\nx\r\n", Duration::ZERO, 3);

    // The same stream of junk pushes to a waiter: its wait ends on time.
    let (dsn, server) = serve(|mut sock| {
        let mut command = vec![0; SUBSCRIBE.len()];
        let _ = sock.read_exact(&mut command);
        let _ = sock.write_all(CONFIRMED);
        stream(sock, b"", b">1\r\n$4\r\npong\r\n", Duration::ZERO)
    });
    let mut conn = connect(&dsn, Duration::from_millis(300));
    assert!(matches!(conn.subscribe("ch", false), Ok(true)));
    let started = Instant::now();
    let heard = conn.next_push("ch", Duration::from_millis(200));
    let took = started.elapsed();
    assert!(matches!(heard, Ok(Heard::Nothing)), "{:?}", heard.err());
    assert!(took < Duration::from_millis(600), "took {took:?}");
    drop(conn);
    server.join().unwrap();
}

#[test]
fn an_endless_line_is_refused_without_holding_it() {
    refused(b"+", &[b'1'; 4096], "line", 1 << 20, Duration::from_secs(3));
}

/// A server that sends `head`, then `body` over and over: the reply is refused (not
/// timed out) with an error naming `says`, holding less than `most` bytes, in less
/// than `within`.
fn refused(head: &'static [u8], body: &'static [u8], says: &str, most: usize, within: Duration) {
    let (dsn, server) = serve(move |sock| stream(sock, head, body, Duration::ZERO));
    let mut conn = connect(&dsn, Duration::from_secs(5));
    let started = Instant::now();
    let (err, grew) = measured(|| conn.recv_response().unwrap_err());
    assert!(!err.is_timeout(), "{err:?}");
    assert!(err.to_string().contains(says), "{err}");
    assert!(grew < most, "held {grew} bytes");
    assert!(started.elapsed() < within, "took {:?}", started.elapsed());
    drop(conn);
    server.join().unwrap();
}

#[test]
fn too_many_values_are_refused_before_they_come() {
    static INNER: std::sync::LazyLock<Vec<u8>> =
        std::sync::LazyLock::new(|| [&b"*1024\r\n"[..], &b":1\r\n".repeat(1024)].concat());
    for (head, body) in [
        // One aggregate declaring more than the limit.
        (&b"*2147483647\r\n"[..], &b":1\r\n"[..]),
        (b"%1048577\r\n", b":1\r\n"),
        // Nested ones, each within the limit, more than it all together.
        (b"*1024\r\n", &INNER[..]),
    ] {
        refused(head, body, "values", 64 << 20, Duration::from_secs(10));
    }
}

#[test]
fn a_large_reply_in_many_pieces_is_read_in_one_pass() {
    // 200 000 values in 4 KiB pieces, paced: parsing from the start at every piece
    // would be quadratic (hundreds of passes over a growing reply, each allocating
    // its values anew).
    const N: usize = 200_000;
    let (dsn, server) = serve(|mut sock| {
        let mut reply = format!("*{N}\r\n").into_bytes();
        for i in 0..N {
            reply.extend_from_slice(format!("$6\r\n{:06}\r\n", i % 1_000_000).as_bytes());
        }
        for piece in reply.chunks(4096) {
            if sock.write_all(piece).is_err() {
                return;
            }
            sock.flush().unwrap();
            thread::sleep(Duration::from_micros(200));
        }
        let _ = sock.read(&mut [0; 1]);
    });
    let mut conn = connect(&dsn, Duration::from_secs(5));
    let (reply, total) = allocated(|| conn.recv_response().unwrap());
    match reply {
        Value::Array(items) => assert_eq!(items.len(), N),
        other => panic!("{other:?}"),
    }
    // One pass: the buffer's doublings (twice the 2.6 MB reply), the values (56 bytes
    // each, and their 6 bytes), 17 MB in all; a pass per read was 6 times that here.
    assert!(total < 24 << 20, "allocated {total} bytes in all");
    drop(conn);
    server.join().unwrap();
}
