//! An endpoint: one set of connection settings (a server, or a service whose server
//! is found anew for each connection), how a new connection to it is made and
//! checked, and what this thread has learnt of its server's clock.

use crate::clock::Boot;
use crate::config::{Settings, TlsFiles};
use crate::error::{LockError, Result};
use crate::net::cad;
use crate::net::evict;
use crate::net::failure::{
    breaks_connection, describe, first_exchange_failure, is_auth_refusal, passing_state,
};
use crate::net::resp;
use crate::net::wire::{self, Connection};
use redis::{ConnectionInfo, RedisError, RedisResult, Value};
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

/// Finds the server for each new connection when it can move: a Sentinel-monitored
/// master. Implemented one floor up (`topology::sentinel`), so the net knows no
/// sentinel.
pub trait Discovery: Send + Sync + std::fmt::Debug {
    /// A new connection to the server as it is now, with the credentials and database
    /// of `info`, its timeouts set.
    fn connect(
        &self,
        info: &ConnectionInfo,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> std::result::Result<Connection, Undiscovered>;

    /// Whether it still finds the server `conn` reached (`Connection::named`), asked
    /// now within these timeouts: `Some(false)` when it names another, `None` when it
    /// could not tell.
    fn still_names(
        &self,
        conn: &Connection,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Option<bool>;
}

/// Why a discovery found no server to connect to.
#[derive(Debug)]
pub struct Undiscovered {
    /// What was found, for messages (no credentials).
    pub cause: String,
    /// A failover in progress (the server named is gone, or a replica now): a state
    /// that passes, which an acquisition with time to wait waits out.
    pub passing: bool,
}

/// A reading of a server's clock older than this is not used to bound it: the
/// drift allowed for grows with the age, and a cap that early would cut waits short.
const CLOCK_READING_LIFE: Duration = Duration::from_secs(60);

impl Endpoint {
    /// The endpoint `key` names: `info`'s server (or the one `discovery` finds, with
    /// `info`'s credentials and database), with `settings`' timeouts, TLS files and
    /// `max_reply`; `addr` names it in messages (by default `info`'s address).
    pub(super) fn new(
        key: &str,
        info: ConnectionInfo,
        settings: &Settings,
        discovery: Option<Box<dyn Discovery>>,
        addr: Option<String>,
    ) -> Endpoint {
        Endpoint {
            key: Arc::from(key),
            addr: addr.unwrap_or_else(|| crate::dsn::display_addr(&info)),
            info,
            discovery,
            tls: settings.tls(),
            connect_timeout: settings.connect_timeout,
            read_timeout: settings.read_timeout,
            max_reply: settings.max_reply,
            clock: std::sync::Mutex::new(None),
        }
    }

    /// Notes that the server's clock read `server_ms` before `at` (here): a reply
    /// that carried it came at `at`, or a message stamped with it was read then.
    pub(crate) fn note_server_clock(&self, at: Boot, server_ms: i64) {
        let mut clock = self.clock.lock().unwrap_or_else(|p| p.into_inner());
        let better = match *clock {
            None => true,
            Some((was_at, was_ms)) => {
                floor(at, server_ms, Boot::now()) >= floor(was_at, was_ms, Boot::now())
            }
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

    /// Whether `conn`'s server was found by the discovery (a Sentinel master) and is no
    /// longer the one it names: a master the sentinels replaced, which a connection
    /// reached before they did (or while they still named it) and keeps. Asked when a
    /// durable check went unacknowledged there; `false` when it cannot tell.
    pub(crate) fn replaced(&self, conn: &Connection) -> bool {
        self.discovery.as_ref().is_some_and(|d| {
            d.still_names(conn, self.connect_timeout, self.read_timeout) == Some(false)
        })
    }

    /// Whether `e`, an error reply on `conn`, says its server is a master short of the
    /// replicas its `min-replicas-to-write` asks for (`NOREPLICAS`) and is one the
    /// discovery no longer names (`replaced`): the connection is dropped like one on
    /// a replica, and the next finds the master named.
    pub(crate) fn short_and_replaced(&self, e: &RedisError, conn: &Connection) -> bool {
        e.code() == Some("NOREPLICAS") && self.replaced(conn)
    }

    /// The parsed settings: address, credentials, database.
    pub(crate) fn info(&self) -> &ConnectionInfo {
        &self.info
    }

    /// The address for messages: no credentials.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// What `e`, a failure on this endpoint, means, for messages (no credentials).
    pub(crate) fn describe(&self, e: &RedisError) -> String {
        describe(e, &self.info, self.connect_timeout, self.read_timeout)
    }

    /// Maps a Redis error on this endpoint onto the core error.
    pub fn error(&self, e: &RedisError) -> LockError {
        if self.on_replica(e) {
            // The master the discovery found was demoted: the command did not run, and
            // the next connection finds the new master once the failover is done.
            let said = format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or("").trim());
            LockError::Passing {
                addr: self.addr.clone(),
                cause: format!(
                    "a failover in progress: the master found is a replica now ({said})"
                ),
                sent: false,
            }
        } else if breaks_connection(e) || is_auth_refusal(e) {
            LockError::Connection { addr: self.addr.clone(), cause: self.describe(e), sent: true }
        } else if e.kind() == redis::ErrorKind::UnexpectedReturnType {
            // In step, but not what the command answers: a broken or hostile server.
            let what = e.detail().unwrap_or("").trim();
            LockError::Connection {
                addr: self.addr.clone(),
                cause: format!("the server broke the protocol: an unexpected reply ({what})"),
                sent: true,
            }
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

/// Sends `commands` in one write and reads their replies (an error reply is a
/// `Value::ServerError`).
fn send(conn: &mut Connection, commands: &[&[&[u8]]]) -> RedisResult<Vec<Value>> {
    wire::with_buffer(|buf| {
        buf.clear();
        for parts in commands {
            resp::push_command(buf, parts.len());
            parts.iter().for_each(|part| resp::push_bulk(buf, part));
        }
        wire::pipeline(conn, buf, commands.len())
    })
}

/// A new connection to `ep`, with its timeouts set.
pub fn connect(ep: &Endpoint) -> Result<Connection> {
    connect_within(ep, ep.connect_timeout, ep.read_timeout)
}

/// A new connection to `ep` (through its discovery, if any) made within
/// `connect_timeout`, its reads then bound by `read_timeout`. A failure here comes
/// before any command of the caller's was sent.
pub(super) fn connect_within(
    ep: &Endpoint,
    connect_timeout: Duration,
    read_timeout: Duration,
) -> Result<Connection> {
    let failed = |cause| LockError::Connection { addr: ep.addr.clone(), cause, sent: false };
    if let Some(discovery) = &ep.discovery {
        return discovery.connect(&ep.info, connect_timeout, read_timeout).map_err(|u| {
            match u.passing {
                true => LockError::Passing { addr: ep.addr.clone(), cause: u.cause, sent: false },
                false => failed(u.cause),
            }
        });
    }
    open(&ep.info, &ep.tls, connect_timeout, read_timeout, ep.max_reply, true)
        .map_err(|e| failed(ep.describe(&e)))
}

/// A new connection to `info`, with its timeouts set, checked with a `PING` within
/// `connect_timeout`: TLS finishes its handshake on the first exchange, and a server
/// that speaks another protocol shows it there, before any command that matters.
/// On a server that keeps locks (`lock_server`; not a sentinel), the same write asks
/// whether it can evict them (`evict`), and whether it has its own compare-and-delete
/// (`cad`): no round trip more, but when it refuses `CONFIG` for the first time.
pub fn open(
    info: &ConnectionInfo,
    tls: &TlsFiles,
    connect_timeout: Duration,
    read_timeout: Duration,
    max_reply: usize,
    lock_server: bool,
) -> RedisResult<Connection> {
    let started = Instant::now();
    let mut conn = Connection::connect(info, tls, connect_timeout, max_reply)?;
    let left = connect_timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
    conn.set_read_timeout(Some(left))?;
    conn.set_write_timeout(Some(left))?;
    let server = lock_server.then(|| evict::Server::of(info));
    let question = server.as_ref().and_then(evict::Server::question);
    let mut commands: Vec<&[&[u8]]> = vec![&[b"PING"]];
    // Whether it has its own compare-and-delete (`cad`): asked once per connection.
    if lock_server {
        commands.push(cad::PROBE);
    }
    let asked_at = commands.len();
    commands.extend(question.map(evict::Question::command));
    // An error reply (NOAUTH, or an ACL without PING) still proves a Redis speaking
    // RESP over a finished handshake; the caller's command will say more.
    let replies =
        send(&mut conn, &commands).map_err(|e| first_exchange_failure(e, info, connect_timeout))?;
    if lock_server {
        conn.cad = if cad::turned_off() {
            cad::Cad::None
        } else {
            replies.get(1).map_or(cad::Cad::None, cad::from_probe)
        };
    }
    if let (Some(server), Some(asked), Some(answer)) = (&server, question, replies.get(asked_at)) {
        if let Some(next) = server.answered(asked, answer) {
            // CONFIG refused: INFO, on this connection; the next ones ask it first.
            let replies = send(&mut conn, &[next.command()])
                .map_err(|e| first_exchange_failure(e, info, connect_timeout))?;
            if let Some(answer) = replies.first() {
                server.answered(next, answer);
            }
        }
    }
    conn.set_read_timeout(Some(read_timeout))?;
    conn.set_write_timeout(Some(read_timeout))?;
    // Counted once it works (sentinels' connections too).
    crate::stats::note(crate::stats::Counter::Connects);
    Ok(conn)
}
