//! The thread's connections, and how a command runs on one.
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
//! A command runs on the connection where it lies (`run`); after an error that
//! breaks it, it is dropped, and the command runs again on a new one when `Retry`
//! says so: a reused connection found dead, or an acquire whose reply was lost and
//! must be settled, within one more `read_timeout` in all.
//!
//! Fork safety: the registry remembers the pid that made its connections. A
//! forked child sees another pid and forgets the inherited sockets without
//! closing them, which could disturb the parent, then connects afresh.

use crate::config::Settings;
use crate::dsn::{info_at, parse_dsn};
use crate::error::{LockError, Result};
use crate::fork_wiped;
use crate::net::endpoint::connect_within;
use crate::net::failure::breaks_connection;
use crate::net::idle::Idle;
use crate::net::wire::Connection;
use redis::{ConnectionInfo, RedisError, RedisResult};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

// Where the callers above `net` have always found them.
pub use crate::net::endpoint::{connect, open, Discovery, Endpoint, Undiscovered};
pub(crate) use crate::net::failure::{closed_at_first, setup_failure};

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

/// The endpoint registered under `key` whose server `discovery` finds (the dsn
/// gives its credentials and database, `addr` names it in messages).
pub fn endpoint_discovered(
    key: String,
    dsn: &str,
    settings: &Settings,
    discovery: Box<dyn Discovery>,
    addr: String,
) -> Result<Arc<Endpoint>> {
    register(key, || parse_dsn(dsn), settings, Some(discovery), Some(addr))
}

/// The endpoint for `dsn` with the timeouts of `settings` (one of several servers).
pub fn endpoint_for(dsn: &str, settings: &Settings) -> Result<Arc<Endpoint>> {
    register(endpoint_key(dsn, settings), || parse_dsn(dsn), settings, None, None)
}

/// The registry key of `dsn` with `settings`: the same as
/// `format!("{dsn}\0{}\0{}\0{}", timeouts in ns, settings.tls())`, written by hand,
/// because every `new Lock` makes one and `format!` was a tenth of it.
fn endpoint_key(dsn: &str, settings: &Settings) -> String {
    let files = [&settings.tls_ca_file, &settings.tls_cert_file, &settings.tls_key_file]
        .map(|f| f.as_deref().unwrap_or(""));
    let mut key =
        String::with_capacity(dsn.len() + 48 + files.iter().map(|f| f.len()).sum::<usize>());
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
pub(crate) fn endpoint_at(
    base: &ConnectionInfo,
    host: &str,
    port: u16,
    scope: &str,
    settings: &Settings,
) -> Result<Arc<Endpoint>> {
    let key = format!(
        "{scope}\u{0}{host}:{port}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
        settings.connect_timeout.as_nanos(),
        settings.read_timeout.as_nanos(),
        settings.tls(),
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
    let ep = Arc::new(Endpoint::new(&key, info()?, settings, discovery, addr));
    with_registry(|reg| {
        if reg.endpoints.len() >= MAX_ENDPOINTS {
            reg.endpoints.clear();
        }
        reg.endpoints.insert(key.clone(), ep.clone());
    });
    Ok(ep)
}

/// The time a second try may take after the first timed out: one `read_timeout`
/// in all, connect included, so a stalled server costs about two of them, not three.
fn settle_budget(ep: &Endpoint) -> Duration {
    ep.read_timeout().max(Duration::from_millis(1))
}

/// Runs `op` on this thread's connection for `ep`, connecting first if needed.
///
/// `op` receives the connection and whether this is the second try. The connection
/// is used where it lies in the registry; after an error that breaks it, it is
/// dropped, so the next use reconnects; whether `op` runs again right away is what
/// `retry` says. (A panic in `op` drops every connection: see `with_registry`.)
pub fn run<T>(
    ep: &Endpoint,
    retry: Retry,
    mut op: impl FnMut(&mut Connection, bool) -> RedisResult<T>,
) -> Result<T> {
    with_registry(|reg| {
        let (at, reused) = match reg.conns.position(ep.id()) {
            Some(at) => (at, true),
            None => (reg.conns.put(ep.id(), connect(ep)?, reg.cap), false),
        };
        let err = match op(reg.conns.used(at), false) {
            Ok(v) => return Ok(v),
            Err(e)
                if !breaks_connection(&e)
                    && !ep.on_replica(&e)
                    && !ep.short_and_replaced(&e, reg.conns.used(at)) =>
            {
                return Err(ep.error(&e))
            }
            Err(e) => e,
        };
        reg.conns.take(ep.id());
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
            connect_within(ep, ep.connect_timeout().min(budget), budget)
        } else {
            connect(ep)
        };
        // The first try was sent: what it did is unknown, unless a demoted master
        // refused it (READONLY, or NOREPLICAS: refused whole). A failover found while
        // reconnecting stays a passing state.
        let ran = !ep.on_replica(&err) && err.code() != Some("NOREPLICAS");
        let mut conn = reconnected.map_err(|second| match second {
            LockError::Connection { addr, cause, .. } => LockError::Connection {
                addr,
                cause: format!("{}; reconnecting: {cause}", ep.describe(&err)),
                sent: ran,
            },
            LockError::Passing { addr, cause, sent } => LockError::Passing {
                addr,
                cause: format!("{}; reconnecting: {cause}", ep.describe(&err)),
                sent: sent || ran,
            },
            other => other,
        })?;
        if timed_out {
            let left =
                settle_budget(ep).saturating_sub(started.elapsed()).max(Duration::from_millis(1));
            conn.set_read_timeout(Some(left)).map_err(|e| ep.error(&e))?;
        }
        match op(&mut conn, true) {
            Ok(v) => {
                if timed_out {
                    // Back to the normal bound before the connection is shared again.
                    conn.set_read_timeout(Some(ep.read_timeout())).map_err(|e| ep.error(&e))?;
                    conn.set_write_timeout(Some(ep.read_timeout())).map_err(|e| ep.error(&e))?;
                }
                reg.conns.put(ep.id(), conn, reg.cap);
                Ok(v)
            }
            Err(e) => {
                if !breaks_connection(&e) && !ep.on_replica(&e) && !timed_out {
                    reg.conns.put(ep.id(), conn, reg.cap);
                }
                Err(ep.error(&e))
            }
        }
    })
}

/// The serial of this thread's connection for `ep` (`Connection::serial`), if it has one
/// now: what a hold taken on it remembers (`intact`).
pub(crate) fn serial(ep: &Endpoint) -> Option<u64> {
    with_registry(|reg| reg.conns.position(ep.id()).map(|at| reg.conns.used(at).serial()))
}

/// Whether this thread's connection for `ep` is still the one of serial `serial`, and
/// the server has not closed it. A hold taken on it is then known to the server as
/// far as this process can tell without asking; otherwise the server may have
/// restarted, or failed over, and forgotten it.
pub(crate) fn intact(ep: &Endpoint, serial: u64) -> bool {
    with_registry(|reg| {
        reg.conns.position(ep.id()).is_some_and(|at| {
            let conn = reg.conns.used(at);
            conn.serial() == serial && !conn.hung_up()
        })
    })
}

/// Runs `f` on this thread's connection for `ep`, made first when `make` and there
/// is none; `None` when there is none, or it could not be made. `f` returns what it
/// found and whether the connection broke, which drops it.
pub(super) fn with_connection<T>(
    ep: &Endpoint,
    make: bool,
    f: impl FnOnce(&mut Connection) -> (T, bool),
) -> Option<T> {
    let mut f = Some(f);
    with_registry(|reg| {
        let at = match reg.conns.position(ep.id()) {
            Some(at) => at,
            None if make => reg.conns.put(ep.id(), connect(ep).ok()?, reg.cap),
            None => return None,
        };
        let (found, broke) = (f.take()?)(reg.conns.used(at));
        if broke {
            reg.conns.take(ep.id());
        }
        Some(found)
    })
}

/// Takes this thread's connection for `ep` out of the registry, or makes one within
/// `budget`, for a caller that talks to several servers at once and must not hold
/// the registry meanwhile. `check_in` gives it back.
pub(crate) fn check_out(ep: &Endpoint, budget: Duration) -> Result<Connection> {
    match with_registry(|reg| reg.conns.take(ep.id())) {
        Some(conn) => Ok(conn),
        None => connect_within(
            ep,
            ep.connect_timeout().min(budget).max(Duration::from_millis(1)),
            ep.read_timeout(),
        ),
    }
}

/// Gives back a connection taken with `check_out`, its timeouts reset. Only a
/// connection whose last exchange went well may come back.
pub(crate) fn check_in(ep: &Endpoint, conn: Connection) {
    if conn.set_read_timeout(Some(ep.read_timeout())).is_err()
        || conn.set_write_timeout(Some(ep.read_timeout())).is_err()
    {
        return;
    }
    let mut conn = Some(conn);
    with_registry(|reg| {
        if let Some(conn) = conn.take() {
            reg.conns.put(ep.id(), conn, reg.cap);
        }
    });
}

/// Describes a failure on `ep` for messages (no credentials).
pub(crate) fn describe_failure(ep: &Endpoint, e: &RedisError) -> String {
    ep.describe(e)
}

/// Reads, without blocking, what this thread's connections owe to unawaited
/// commands and has come (request end); the rest is read at their next use.
pub fn settle_arrived() {
    with_registry(|reg| reg.conns.each(Connection::settle_arrived));
}

/// Drops every connection of this thread (module shutdown); each reads what it
/// still owes to unawaited commands before it closes.
pub fn close_all() {
    with_registry(|reg| reg.conns.clear());
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
            format!(
                "{dsn}\u{0}{}\u{0}{}\u{0}{}",
                s.connect_timeout.as_nanos(),
                s.read_timeout.as_nanos(),
                s.tls()
            )
        };
        assert_eq!(
            endpoint_key("redis://127.0.0.1:6379", &s),
            formatted("redis://127.0.0.1:6379", &s)
        );
        s.connect_timeout = Duration::ZERO;
        s.read_timeout = Duration::MAX; // more nanoseconds than a u64 holds
        s.tls_ca_file = Some("/ca.pem".into());
        s.tls_key_file = Some("/k\u{0}ey".into());
        assert_eq!(endpoint_key("rediss://h:1/2", &s), formatted("rediss://h:1/2", &s));
    }
}
