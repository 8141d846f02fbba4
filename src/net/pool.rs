//! The connection registry, one per thread.
//!
//! One connection per connection settings (dsn and timeouts), shared by every
//! `Lock` of the thread and kept across requests (php-fpm workers live long). Per
//! thread, not per process: under a threaded SAPI each thread runs requests of its
//! own, and its commands go over connections no other thread uses, without waiting
//! for another thread's round trips. A thread's connections close when it ends.
//! (Under php-fpm and the CLI a process has one such thread.)
//! Connections are made lazily, on first use, never at module startup. An app that
//! builds its settings per request (per tenant, say) would grow them without bound:
//! beyond `max_endpoints` the least recently used endpoint's idle connection (and
//! its idle wake subscriber) is closed.
//!
//! Fork safety: the registry remembers the pid that made its connections. A
//! forked child sees another pid and forgets the inherited sockets without
//! closing them, which could disturb the parent, then connects afresh.

use crate::clock::Boot;
use crate::config::{Settings, TlsFiles};
use crate::dsn::{display_addr, info_at, parse_dsn};
use crate::error::{LockError, Result};
use crate::fork_wiped;
use crate::net::idle::Idle;
use crate::net::tls;
use crate::net::wire::{Connection, Heard, Plain};
use redis::{ConnectionAddr, ConnectionInfo, ErrorKind, RedisError, RedisResult};
use std::collections::HashMap;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Parsed connection settings, shared by every `Lock` that uses them.
#[derive(Debug)]
pub struct Endpoint {
    key: Arc<str>,
    info: ConnectionInfo,
    /// When set, the server is found anew for each connection (a Sentinel-monitored
    /// master); `info` then only gives its credentials and database.
    discovery: Option<Box<dyn Discovery>>,
    /// The CA and client certificate for `rediss://` connections.
    tls: TlsFiles,
    addr: String,
    connect_timeout: Duration,
    read_timeout: Duration,
    /// The largest reply its connections read (`max_reply`).
    max_reply: usize,
    /// The latest reading of the server's clock this thread saw: (here, when the
    /// reply that carried it came; the server's clock then, in ms, no later than
    /// that). It bounds the server's clock from below (`server_clock_floor`).
    clock: std::sync::Mutex<Option<(Boot, i64)>>,
}

/// A reading of a server's clock older than this is not used to bound it: the
/// drift allowed for grows with the age, and a cap that early would cut waits short.
const CLOCK_READING_LIFE: Duration = Duration::from_secs(60);

impl Endpoint {
    /// Notes that the server's clock read `server_ms` before `at` (here): a reply
    /// that carried it came at `at`, or a message stamped with it was read then.
    pub(crate) fn note_server_clock(&self, at: Boot, server_ms: i64) {
        let mut clock = self.clock.lock().unwrap_or_else(|p| p.into_inner());
        let better = match *clock {
            None => true,
            Some((was_at, was_ms)) => floor(at, server_ms, Boot::now()) >= floor(was_at, was_ms, Boot::now()),
        };
        if better {
            *clock = Some((at, server_ms));
        }
    }

    /// A lower bound of the server's clock (ms) at `now` (here), from the latest
    /// reading (`note_server_clock`), allowing 0.1% drift since it and 1 ms for the
    /// whole milliseconds; `None` without a reading of the last minute.
    pub(crate) fn server_clock_floor(&self, now: Boot) -> Option<i64> {
        let (at, ms) = (*self.clock.lock().unwrap_or_else(|p| p.into_inner()))?;
        (now.since(at) <= CLOCK_READING_LIFE).then(|| floor(at, ms, now))
    }

    /// What identifies these settings: equal for every `Lock` that shares them.
    pub(crate) fn id(&self) -> &Arc<str> {
        &self.key
    }

    /// The bound on any one reply, and on one fan-out to several servers.
    pub(crate) fn read_timeout(&self) -> Duration {
        self.read_timeout
    }

    /// The bound on making a connection.
    pub(crate) fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// Whether `e` says the connection reached a replica where the master was expected
    /// (after a failover, the old master comes back as a replica): the master must be
    /// found again.
    pub(crate) fn on_replica(&self, e: &RedisError) -> bool {
        self.discovery.is_some() && e.code() == Some("READONLY")
    }

    /// The parsed settings: address, credentials, database.
    pub(crate) fn info(&self) -> &ConnectionInfo {
        &self.info
    }

    /// The address for messages: no credentials.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Maps a Redis error on this endpoint onto the core error.
    pub fn error(&self, e: &RedisError) -> LockError {
        if breaks_connection(e) || is_auth_refusal(e) || self.on_replica(e) {
            LockError::Connection { addr: self.addr.clone(), cause: describe(e, self), sent: true }
        } else if e.kind() == redis::ErrorKind::UnexpectedReturnType {
            // In step, but not what the command answers: a broken or hostile server.
            let what = e.detail().unwrap_or("").trim();
            LockError::Connection { addr: self.addr.clone(), cause: format!("the server broke the protocol: an unexpected reply ({what})"), sent: true }
        } else if e.code().is_some_and(crate::error::passing_code) {
            // Refused whole: the command did not run.
            LockError::Passing { addr: self.addr.clone(), cause: passing_state(e), sent: false }
        } else {
            LockError::Server { addr: self.addr.clone(), cause: e.to_string() }
        }
    }
}

/// The server's clock (ms) at `now`, at the least, from a reading of `server_ms` that
/// was no later than `at` (here): the time since, less 0.1% of it for the two
/// clocks' drift (NTP slews at most 0.05%), less 1 ms for whole milliseconds.
fn floor(at: Boot, server_ms: i64, now: Boot) -> i64 {
    let since = i64::try_from(now.since(at).as_millis()).unwrap_or(i64::MAX / 2);
    server_ms.saturating_add(since - since / 1000 - 1)
}

/// When to run an operation a second time, on a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Only when a reused connection turns out dead (say, after a Redis restart).
    /// The operation may have run once already; the caller must be fine with that.
    IfStale,
    /// After any connection failure, timeouts included, because the outcome of the
    /// first try must be settled (an acquire whose reply was lost).
    ToSettle,
}

struct Registry {
    pid: u32,
    endpoints: HashMap<String, Arc<Endpoint>>,
    conns: Idle<Connection>,
    /// How many endpoints keep an idle connection (`max_endpoints`, as last set);
    /// `wake` keeps as many subscribers.
    cap: usize,
}

/// Distinct connection settings remembered; past this the parse cache starts over
/// (a guard against dsns built per request, not a limit on connections in use).
const MAX_ENDPOINTS: usize = 64;

thread_local! {
    static REGISTRY: RefCell<Option<Registry>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread's registry, made on first use. A panic that unwinds out
/// of `f` (while a command was in flight) drops every connection: one may have a
/// reply pending that the next command would read as its own. Once the thread's
/// registry is gone (the thread is ending), a throwaway one serves, keeping nothing.
/// `f` is `FnMut` so that it is still at hand for that: it runs once.
fn with_registry<T>(mut f: impl FnMut(&mut Registry) -> T) -> T {
    struct Unwinding<'a>(&'a mut Registry);
    impl Drop for Unwinding<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.conns.clear();
            }
        }
    }
    let pooled = REGISTRY.try_with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        let guard = Unwinding(current(&mut slot));
        Some(f(&mut *guard.0))
    });
    match pooled {
        Ok(Some(v)) => v,
        // Gone, or in use (never re-entered today): a throwaway registry, not a panic.
        _ => f(current(&mut None)),
    }
}

fn current(slot: &mut Option<Registry>) -> &mut Registry {
    let pid = fork_wiped::pid();
    let reg = slot.get_or_insert_with(|| Registry {
        pid,
        endpoints: HashMap::new(),
        conns: Idle::default(),
        cap: 16,
    });
    if reg.pid != pid {
        // Inherited from the parent: the socket is shared with it. Closing it is
        // harmless to the parent, but TLS or a future Drop might talk on it; and a
        // reply meant for the parent must never be read here. Forget, don't drop.
        reg.conns.forget_all();
        reg.pid = pid;
    }
    reg
}

/// Finds the server for each new connection when it can move: a Sentinel-monitored
/// master. Implemented one floor up (`topology::sentinel`), so the registry knows
/// no sentinel.
pub trait Discovery: Send + Sync + std::fmt::Debug {
    /// A new connection to the server as it is now, with the credentials and database
    /// of `info`, its timeouts set. The error is the cause, for messages.
    fn connect(&self, info: &ConnectionInfo, connect_timeout: Duration, read_timeout: Duration, use_: Use) -> std::result::Result<Connection, String>;
}

/// The endpoint registered under `key` whose server `discovery` finds (the dsn
/// gives its credentials and database, `addr` names it in messages).
pub fn endpoint_discovered(key: String, dsn: &str, settings: &Settings, discovery: Box<dyn Discovery>, addr: String) -> Result<Arc<Endpoint>> {
    register(key, || parse_dsn(dsn), settings, Some(discovery), Some(addr))
}

/// The endpoint for `dsn` with the timeouts of `settings` (one of several servers).
pub fn endpoint_for(dsn: &str, settings: &Settings) -> Result<Arc<Endpoint>> {
    register(endpoint_key(dsn, settings), || parse_dsn(dsn), settings, None, None)
}

/// The registry key of `dsn` with `settings`: the same as
/// `format!("{dsn}\0{}\0{}\0{}", timeouts in ns, settings.tls)`, written by hand,
/// because every `new Lock` makes one and `format!` was a tenth of it.
fn endpoint_key(dsn: &str, settings: &Settings) -> String {
    let tls = &settings.tls;
    let files = [&tls.ca_file, &tls.cert_file, &tls.key_file].map(|f| f.as_deref().unwrap_or(""));
    let mut key = String::with_capacity(dsn.len() + 48 + files.iter().map(|f| f.len()).sum::<usize>());
    key.push_str(dsn);
    for ns in [settings.connect_timeout.as_nanos(), settings.read_timeout.as_nanos()] {
        key.push('\0');
        match usize::try_from(ns) {
            Ok(ns) => {
                let mut digits = [0u8; 20];
                let at = crate::net::resp::decimal(&mut digits, ns);
                key.extend(digits[at..].iter().map(|&d| char::from(d)));
            }
            Err(_) => key.push_str(&ns.to_string()),
        }
    }
    for file in files {
        key.push('\0');
        key.push_str(file);
    }
    if settings.max_reply != crate::config::DEFAULT_MAX_REPLY {
        key.push('\0');
        key.push_str(&settings.max_reply.to_string());
    }
    key
}

/// The endpoint for a server that another one named (a cluster node): `base`'s
/// credentials and TLS at `host:port`. `scope` tells apart the settings it came from.
pub(crate) fn endpoint_at(base: &ConnectionInfo, host: &str, port: u16, scope: &str, settings: &Settings) -> Result<Arc<Endpoint>> {
    let key = format!(
        "{scope}\u{0}{host}:{port}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
        settings.connect_timeout.as_nanos(),
        settings.read_timeout.as_nanos(),
        settings.tls,
        settings.max_reply
    );
    register(key, || Ok(info_at(base, host, port)), settings, None, None)
}

fn register(
    key: String,
    info: impl FnOnce() -> Result<ConnectionInfo>,
    settings: &Settings,
    discovery: Option<Box<dyn Discovery>>,
    addr: Option<String>,
) -> Result<Arc<Endpoint>> {
    let cap = settings.max_endpoints as usize;
    let known = with_registry(|reg| {
        reg.cap = cap;
        reg.endpoints.get(&key).cloned()
    });
    if let Some(ep) = known {
        return Ok(ep);
    }
    let info = info()?;
    // No CLIENT SETINFO: it costs a round trip per connect, and redis-rs ignores its
    // failure, so against a stalled server it would add a whole extra timeout.
    let redis_settings = info.redis_settings().clone().set_skip_set_lib_name();
    let info = info.set_redis_settings(redis_settings);
    let ep = Arc::new(Endpoint {
        key: Arc::from(key.as_str()),
        addr: addr.unwrap_or_else(|| display_addr(&info)),
        info,
        discovery,
        tls: settings.tls.clone(),
        connect_timeout: settings.connect_timeout,
        read_timeout: settings.read_timeout,
        max_reply: settings.max_reply,
        clock: std::sync::Mutex::new(None),
    });
    with_registry(|reg| {
        if reg.endpoints.len() >= MAX_ENDPOINTS {
            reg.endpoints.clear();
        }
        reg.endpoints.insert(key.clone(), ep.clone());
    });
    Ok(ep)
}

/// A new connection to `ep`, with its timeouts set.
pub(crate) fn connect(ep: &Endpoint) -> Result<Connection> {
    connect_within(ep, ep.connect_timeout, ep.read_timeout, Use::Commands)
}

/// A new connection to `ep` for the wake subscriber: redis-rs's, whose pub/sub
/// reading the subscriber uses.
pub(crate) fn connect_subscriber(ep: &Endpoint) -> Result<redis::Connection> {
    connect_within(ep, ep.connect_timeout, ep.read_timeout, Use::PubSub)?
        .into_redis()
        .ok_or_else(|| LockError::Connection { addr: ep.addr.clone(), cause: "no pub/sub connection".to_string(), sent: false })
}

/// What a new connection is for: commands go over a connection of our own (`wire`,
/// TLS included), pub/sub always over redis-rs's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Lock commands and scripts.
    Commands,
    /// The wake subscriber.
    PubSub,
}

/// A new connection to `ep` (through its sentinels, if any). A failure here comes
/// before any command of the caller's was sent.
fn connect_within(ep: &Endpoint, connect_timeout: Duration, read_timeout: Duration, use_: Use) -> Result<Connection> {
    let failed = |cause| LockError::Connection { addr: ep.addr.clone(), cause, sent: false };
    if let Some(discovery) = &ep.discovery {
        return discovery.connect(&ep.info, connect_timeout, read_timeout, use_).map_err(failed);
    }
    open(&ep.info, &ep.tls, connect_timeout, read_timeout, ep.max_reply, use_).map_err(|e| failed(describe(&e, ep)))
}

/// A new connection to `info`, with its timeouts set, checked with a `PING` within
/// `connect_timeout`: TLS finishes its handshake on the first exchange, and a server
/// that speaks another protocol shows it there, before any command that matters.
pub(crate) fn open(info: &ConnectionInfo, tls: &TlsFiles, connect_timeout: Duration, read_timeout: Duration, max_reply: usize, use_: Use) -> RedisResult<Connection> {
    let started = Instant::now();
    let mut conn = if use_ == Use::Commands && Connection::plain_for(info) {
        Connection::Plain(Plain::connect(info, tls, connect_timeout, max_reply)?)
    } else {
        let client = match info.addr() {
            ConnectionAddr::TcpTls { .. } => {
                let certificates = tls.certificates().map_err(|why| RedisError::from((ErrorKind::InvalidClientConfig, "TLS", why)))?;
                redis::Client::build_with_tls(info.clone(), certificates)?
            }
            _ => redis::Client::open(info.clone())?,
        };
        Connection::from(client.get_connection_with_timeout(connect_timeout)?)
    };
    let left = connect_timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
    conn.set_read_timeout(Some(left))?;
    conn.set_write_timeout(Some(left))?;
    match redis::cmd("PING").exec(&mut conn) {
        // An error reply (NOAUTH, or an ACL without PING) still proves a Redis
        // speaking RESP over a finished handshake; the caller's command will say more.
        Err(e) if breaks_connection(&e) => return Err(first_exchange_failure(e, info, connect_timeout)),
        _ => {}
    }
    conn.set_read_timeout(Some(read_timeout))?;
    conn.set_write_timeout(Some(read_timeout))?;
    // Counted once it works (sentinels' connections too).
    crate::stats::note(crate::stats::Counter::Connects);
    Ok(conn)
}

/// What a failed first exchange means when the two ends speak different protocols.
fn first_exchange_failure(e: RedisError, info: &ConnectionInfo, connect_timeout: Duration) -> RedisError {
    let why = match info.addr() {
        // A TLS port closes the connection on a plain client's first bytes.
        ConnectionAddr::Tcp(..) if e.is_connection_dropped() && !e.is_timeout() => {
            format!("the server closed the connection on the first command ({e}): if this port expects TLS, use rediss://")
        }
        // A plain port reads a TLS hello as the start of a command, and waits for its end.
        ConnectionAddr::TcpTls { .. } if e.is_timeout() => format!(
            "no answer to the TLS handshake within connect_timeout ({} s): if this is a plain Redis port, use redis://",
            connect_timeout.as_secs_f64()
        ),
        _ => return e,
    };
    RedisError::from((ErrorKind::InvalidClientConfig, "first exchange", why))
}

/// The time a second try may take after the first timed out: one `read_timeout`
/// in all, connect included, so a stalled server costs about two of them, not three.
fn settle_budget(ep: &Endpoint) -> Duration {
    ep.read_timeout.max(Duration::from_millis(1))
}

/// Whether the connection can no longer be trusted after this error: anything but
/// a well-formed error reply from the server.
fn breaks_connection(e: &RedisError) -> bool {
    !matches!(
        e.kind(),
        ErrorKind::Server(_) | ErrorKind::Extension | ErrorKind::UnexpectedReturnType
    )
}

/// NOAUTH (no password given) and WRONGPASS arrive as ordinary error replies. Before
/// AUTH, Redis also cuts off any command of more than 10 parts (our scripts' calls)
/// with "Protocol error: unauthenticated multibulk length".
fn is_auth_refusal(e: &RedisError) -> bool {
    e.kind() == ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"))
        || e.detail().is_some_and(|d| d.contains("unauthenticated"))
}

/// What a failure to set up a connection to `info` means, when it is about TLS or
/// the settings rather than the network.
pub(crate) fn setup_failure(e: &RedisError, info: &ConnectionInfo) -> Option<String> {
    let tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
    tls::explain(e, tls).or_else(|| {
        (e.kind() == ErrorKind::InvalidClientConfig).then(|| e.detail().unwrap_or("invalid TLS settings").to_string())
    })
}

fn describe(e: &RedisError, ep: &Endpoint) -> String {
    if let Some(why) = setup_failure(e, &ep.info) {
        why
    } else if e.is_timeout() {
        format!("timed out (connect_timeout {} s, read_timeout {} s)", ep.connect_timeout.as_secs_f64(), ep.read_timeout.as_secs_f64())
    } else if e.is_connection_refusal() {
        "connection refused".to_string()
    } else if e.detail().is_some_and(|d| d.contains("unauthenticated")) {
        "authentication refused (the server requires a password)".to_string()
    } else if is_auth_refusal(e) {
        format!("authentication refused ({})", e.detail().unwrap_or("bad credentials").trim())
    } else if e.is_connection_dropped() {
        format!("connection lost ({e})")
    } else {
        e.to_string()
    }
}

/// What a passing state's error reply says, with what the state is.
fn passing_state(e: &RedisError) -> String {
    let what = match e.code() {
        Some("LOADING") => "it is loading its dataset",
        Some("MASTERDOWN") => "it is a replica that lost its master",
        Some("READONLY") => "it is a replica (a failover under way?)",
        Some("BUSY") => "a script is still running",
        Some("TRYAGAIN") => "the slot is being migrated",
        Some("CLUSTERDOWN") => "the cluster is down",
        _ => "a passing state",
    };
    format!("{what} ({} {})", e.code().unwrap_or(""), e.detail().unwrap_or("").trim())
}

/// Runs `op` on this thread's connection for `ep`, connecting first if needed.
///
/// `op` receives the connection and whether this is the second try. The connection
/// is used where it lies in the registry; after an error that breaks it, it is
/// dropped, so the next use reconnects; whether `op` runs again right away is what
/// `retry` says. (A panic in `op` drops every connection: see `registry`.)
pub fn run<T>(
    ep: &Endpoint,
    retry: Retry,
    mut op: impl FnMut(&mut Connection, bool) -> RedisResult<T>,
) -> Result<T> {
    with_registry(|reg| {
        let (at, reused) = match reg.conns.position(&ep.key) {
            Some(at) => (at, true),
            None => (reg.conns.put(&ep.key, connect(ep)?, reg.cap), false),
        };
        let err = match op(reg.conns.used(at), false) {
            Ok(v) => return Ok(v),
            Err(e) if !breaks_connection(&e) && !ep.on_replica(&e) => return Err(ep.error(&e)),
            Err(e) => e,
        };
        reg.conns.take(&ep.key);
        let again = match retry {
            Retry::ToSettle => true,
            Retry::IfStale => reused && !err.is_timeout(),
        };
        if !again {
            return Err(ep.error(&err));
        }
        let timed_out = err.is_timeout();
        let started = std::time::Instant::now();
        let reconnected = if timed_out {
            let budget = settle_budget(ep);
            connect_within(ep, ep.connect_timeout.min(budget), budget, Use::Commands)
        } else {
            connect(ep)
        };
        let mut conn = reconnected.map_err(|second| match second {
            // The first try was sent: what it did is unknown.
            LockError::Connection { addr, cause, .. } => LockError::Connection {
                addr,
                cause: format!("{}; reconnecting: {cause}", describe(&err, ep)),
                sent: true,
            },
            other => other,
        })?;
        if timed_out {
            let left = settle_budget(ep).saturating_sub(started.elapsed()).max(Duration::from_millis(1));
            conn.set_read_timeout(Some(left)).map_err(|e| ep.error(&e))?;
        }
        match op(&mut conn, true) {
            Ok(v) => {
                if timed_out {
                    // Back to the normal bound before the connection is shared again.
                    conn.set_read_timeout(Some(ep.read_timeout)).map_err(|e| ep.error(&e))?;
                    conn.set_write_timeout(Some(ep.read_timeout)).map_err(|e| ep.error(&e))?;
                }
                reg.conns.put(&ep.key, conn, reg.cap);
                Ok(v)
            }
            Err(e) => {
                if !breaks_connection(&e) && !ep.on_replica(&e) && !timed_out {
                    reg.conns.put(&ep.key, conn, reg.cap);
                }
                Err(ep.error(&e))
            }
        }
    })
}

/// The serial of this thread's connection for `ep` (`Plain::serial`), if it has one
/// now: what a hold taken on it remembers (`intact`).
pub(crate) fn serial(ep: &Endpoint) -> Option<u64> {
    with_registry(|reg| reg.conns.position(&ep.key).map(|at| reg.conns.used(at).serial()))
}

/// Whether this thread's connection for `ep` is still the one of serial `serial`, and
/// the server has not closed it. A hold taken on it is then known to the server as
/// far as this process can tell without asking; otherwise the server may have
/// restarted, or failed over, and forgotten it.
pub(crate) fn intact(ep: &Endpoint, serial: u64) -> bool {
    with_registry(|reg| {
        reg.conns.position(&ep.key).is_some_and(|at| {
            let conn = reg.conns.used(at);
            conn.serial() == serial && !conn.hung_up()
        })
    })
}

/// What subscribing the command connection came to (`subscribe`).
pub(crate) enum Inline {
    /// It listens on this channel; `true`: a sharded one.
    Listening(String, bool),
    /// Not on this connection: redis-rs's (`?protocol=resp3`), or a server without RESP3.
    Unsupported,
    /// The server refused the subscription (ACL).
    Denied,
    /// The connection failed.
    Failed,
}

/// How `wake` names a connection's channel: from the connection's random id, the
/// cluster slot whose shard it is in (if any), and the channel's generation.
pub(crate) type Naming = fn(&str, Option<u16>, u64) -> String;

/// The current wake channel of `wire`'s connection (`naming` its random id, made on
/// first use, and its generation).
fn wake_channel(p: &mut Plain, slot: Option<u16>, naming: Naming) -> Option<String> {
    if p.wake_id.is_none() {
        p.wake_id = Some(String::from_utf8_lossy(&crate::token::generate().ok()?).into_owned());
    }
    Some(naming(p.wake_id.as_deref()?, slot, p.wake_generation))
}

/// The channel this thread's command connection for `ep` listens on for a wait in
/// `slot` (sharded) or on the server, if it does; its kept messages are dropped then
/// (they were for earlier waits).
pub(crate) fn listening(ep: &Endpoint, slot: Option<u16>, naming: Naming) -> Option<(String, bool)> {
    with_registry(|reg| {
        let at = reg.conns.position(&ep.key)?;
        let p = reg.conns.used(at).plain()?;
        let channel = wake_channel(p, slot, naming)?;
        if !p.listens(&channel) {
            return None;
        }
        p.forget_pushes();
        Some((channel, slot.is_some()))
    })
}

/// Retires `channel`, which a wait that ended in doubt listened on (an entry of its
/// may still be queued, naming it): this thread's command connection for `ep` stops
/// listening on it (unsubscribed without waiting for the confirmation), and the next
/// wait listens on the connection's next channel. A release then finds nobody on the
/// retired one, and passes its entries over. Nothing to do when the connection is
/// gone: its subscriptions went with it.
pub(crate) fn retire(ep: &Endpoint, channel: &str) {
    with_registry(|reg| {
        let Some(at) = reg.conns.position(&ep.key) else { return };
        let Some(p) = reg.conns.used(at).plain() else { return };
        if !p.listens(channel) {
            return;
        }
        p.wake_generation += 1;
        if p.unsubscribe(channel).is_err() {
            reg.conns.take(&ep.key);
        }
    });
}

/// Subscribes this thread's command connection for `ep` (connecting it if needed)
/// to its current wake channel: in RESP3, `HELLO 3` first, once in the connection's
/// life. For a wait in a cluster `slot`, the channel is sharded, unless the server has
/// no sharded pub/sub (Redis 6) or refuses it.
pub(crate) fn subscribe(ep: &Endpoint, slot: Option<u16>, naming: Naming) -> Inline {
    with_registry(|reg| {
        let at = match reg.conns.position(&ep.key) {
            Some(at) => at,
            None => match connect(ep) {
                Ok(conn) => reg.conns.put(&ep.key, conn, reg.cap),
                Err(_) => return Inline::Failed,
            },
        };
        let Some(p) = reg.conns.used(at).plain() else { return Inline::Unsupported };
        let outcome = subscribe_plain(p, slot, naming);
        if matches!(outcome, Inline::Failed) {
            reg.conns.take(&ep.key);
        }
        outcome
    })
}

fn subscribe_plain(p: &mut Plain, slot: Option<u16>, naming: Naming) -> Inline {
    match p.resp3() {
        Ok(true) => {}
        Ok(false) => return Inline::Unsupported,
        Err(_) => return Inline::Failed,
    }
    if slot.is_some() {
        let Some(channel) = wake_channel(p, slot, naming) else { return Inline::Failed };
        match p.subscribe(&channel, true) {
            Ok(true) => return Inline::Listening(channel, true),
            Ok(false) => {}
            Err(_) => return Inline::Failed,
        }
    }
    let Some(channel) = wake_channel(p, None, naming) else { return Inline::Failed };
    match p.subscribe(&channel, false) {
        Ok(true) => Inline::Listening(channel, false),
        Ok(false) => Inline::Denied,
        Err(_) => Inline::Failed,
    }
}

/// Waits up to `timeout` for a message on `channel`, which this thread's command
/// connection for `ep` listens on. An error when it broke or no longer listens.
pub(crate) fn listen(ep: &Endpoint, channel: &str, timeout: Duration) -> RedisResult<Option<Vec<u8>>> {
    let gone = || RedisError::from(std::io::Error::new(std::io::ErrorKind::NotConnected, "the wake channel is no longer listened to"));
    with_registry(|reg| {
        let at = reg.conns.position(&ep.key).ok_or_else(gone)?;
        let conn = reg.conns.used(at);
        let heard = match conn.plain() {
            Some(p) => p.next_push(channel, timeout),
            None => return Err(gone()),
        };
        let reset = conn.set_read_timeout(Some(ep.read_timeout));
        match (heard, reset) {
            (Ok(Heard::Message(m)), Ok(())) => Ok(Some(m)),
            (Ok(Heard::Nothing), Ok(())) => Ok(None),
            (Ok(Heard::Unsubscribed), Ok(())) => Err(gone()),
            (Err(e), _) | (_, Err(e)) => {
                reg.conns.take(&ep.key);
                Err(e)
            }
        }
    })
}

/// Takes this thread's connection for `ep` out of the registry, or makes one within
/// `budget`, for a caller that talks to several servers at once and must not hold
/// the registry meanwhile. `check_in` gives it back.
pub(crate) fn check_out(ep: &Endpoint, budget: Duration) -> Result<Connection> {
    let pooled = {
        with_registry(|reg| reg.conns.take(&ep.key))
    };
    match pooled {
        Some(conn) => Ok(conn),
        None => connect_within(ep, ep.connect_timeout.min(budget).max(Duration::from_millis(1)), ep.read_timeout, Use::Commands),
    }
}

/// Gives back a connection taken with `check_out`, its timeouts reset. Only a
/// connection whose last exchange went well may come back.
pub(crate) fn check_in(ep: &Endpoint, conn: Connection) {
    if conn.set_read_timeout(Some(ep.read_timeout)).is_err() || conn.set_write_timeout(Some(ep.read_timeout)).is_err() {
        return;
    }
    let mut conn = Some(conn);
    with_registry(|reg| {
        if let Some(conn) = conn.take() {
            reg.conns.put(&ep.key, conn, reg.cap);
        }
    });
}

/// Describes a failure on `ep` for messages (no credentials).
pub(crate) fn describe_failure(ep: &Endpoint, e: &RedisError) -> String {
    describe(e, ep)
}

/// Reads, without blocking, what this thread's connections owe to unawaited
/// commands and has come (request end); the rest is read at their next use.
pub fn settle_arrived() {
    with_registry(|reg| reg.conns.each(Connection::settle_arrived));
}

/// Drops every connection of this process (used at module shutdown), after reading
/// what they still owe to unawaited commands.
pub fn close_all() {
    with_registry(|reg| {
        reg.conns.each(Connection::settle_all);
        reg.conns.clear()
    });
}

/// How many endpoints keep an idle connection (`max_endpoints`, as last set).
pub(crate) fn cap() -> usize {
    with_registry(|reg| reg.cap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn endpoint_keys_are_the_formatted_ones() {
        let mut s = Settings::default();
        let formatted = |dsn: &str, s: &Settings| {
            format!("{dsn}\u{0}{}\u{0}{}\u{0}{}", s.connect_timeout.as_nanos(), s.read_timeout.as_nanos(), s.tls)
        };
        assert_eq!(endpoint_key("redis://127.0.0.1:6379", &s), formatted("redis://127.0.0.1:6379", &s));
        s.connect_timeout = Duration::ZERO;
        s.read_timeout = Duration::MAX; // more nanoseconds than a u64 holds
        s.tls.ca_file = Some("/ca.pem".into());
        s.tls.key_file = Some("/k\u{0}ey".into());
        assert_eq!(endpoint_key("rediss://h:1/2", &s), formatted("rediss://h:1/2", &s));
    }
}
