//! Sentinel: the master of a monitored service, found through its sentinels.
//!
//! Each connection to the service starts by asking the sentinels, in turn, where
//! the master is (`SENTINEL GET-MASTER-ADDR-BY-NAME`), and then asks the server
//! itself (`ROLE`): during a failover a sentinel may still name the old master,
//! which may be back as a replica. A connection that later finds itself on a
//! replica (`READONLY`) is dropped, so the next use asks the sentinels again.

use crate::config::{Settings, TlsFiles};
use crate::dsn;
use crate::net::pool::{self, Discovery, Endpoint, Undiscovered};
use crate::net::wire::{self, Connection};
use redis::{ConnectionInfo, RedisError, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The endpoint of the master of `service`, which `sentinels` name
/// (`Topology::Sentinel`), with the credentials of `settings.dsn`: the registry finds
/// it through the sentinels for each new connection.
pub fn endpoint(
    sentinels: &[String],
    service: &str,
    settings: &Settings,
) -> crate::error::Result<Arc<Endpoint>> {
    let tls = settings.tls();
    let key = format!(
        "sentinel\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
        sentinels.join(","),
        service,
        settings.dsn,
        settings.connect_timeout.as_nanos(),
        settings.read_timeout.as_nanos(),
        tls,
        settings.max_reply
    );
    let mut sentinels = Sentinels::new(sentinels, service, &tls)?;
    sentinels.max_reply = settings.max_reply;
    let addr = sentinels.describe();
    pool::endpoint_discovered(key, &settings.dsn, settings, Box::new(sentinels), addr)
}

/// The sentinels of one service.
#[derive(Debug)]
pub struct Sentinels {
    nodes: Vec<ConnectionInfo>,
    service: String,
    /// For `rediss://` sentinels and masters alike.
    tls: TlsFiles,
    /// The largest reply read from a sentinel or the master (`max_reply`).
    pub max_reply: usize,
    /// A master of this service was reached once in this process over these settings:
    /// a master named later that closes the connection at its first command is gone
    /// behind something that still accepts (a proxy, a load balancer), not a TLS port.
    reached: std::sync::atomic::AtomicBool,
}

impl Sentinels {
    /// Parses the sentinels' dsns (already checked by the settings).
    pub fn new(dsns: &[String], service: &str, tls: &TlsFiles) -> crate::error::Result<Self> {
        let nodes =
            dsns.iter().map(|d| dsn::parse_dsn(d)).collect::<crate::error::Result<Vec<_>>>()?;
        Ok(Sentinels {
            nodes,
            service: service.to_string(),
            tls: tls.clone(),
            max_reply: crate::config::DEFAULT_MAX_REPLY,
            reached: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// How messages name the service.
    pub fn describe(&self) -> String {
        let addrs: Vec<String> = self.nodes.iter().map(dsn::display_addr).collect();
        format!("service \"{}\" via sentinels {}", self.service, addrs.join(", "))
    }

    /// A connection to the current master, with the credentials and database of
    /// `master` (its host is replaced by the one the sentinels name). The error names
    /// what each sentinel said, and whether a failover is in progress: a sentinel
    /// named a master that cannot be reached, or that is a replica now.
    pub fn connect_master(
        &self,
        master: &ConnectionInfo,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Result<Connection, Undiscovered> {
        let start = Instant::now();
        let mut causes = Vec::new();
        let mut failing_over = false;
        for node in &self.nodes {
            let left =
                connect_timeout.saturating_sub(start.elapsed()).max(Duration::from_millis(1));
            let t0 = crate::trace::now_ns();
            let named = match self.ask(node, left, read_timeout) {
                Ok(addr) => addr,
                Err(cause) => {
                    trace_named(node, None, &cause, t0);
                    causes.push(format!("{}: {cause}", dsn::display_addr(node)));
                    continue;
                }
            };
            let info = dsn::info_at(master, &named.0, named.1);
            let reached = pool::open(&info, &self.tls, left, read_timeout, self.max_reply, true)
                .map_err(|e| Found::Unreachable(e, Box::new(info.clone())));
            match reached.and_then(|mut conn| role_is_master(&mut conn).map(|_| conn)) {
                Ok(mut conn) => {
                    conn.set_named(display(&named));
                    trace_named(node, Some((&named, conn.serial())), "master", t0);
                    self.reached.store(true, std::sync::atomic::Ordering::Relaxed);
                    return Ok(conn);
                }
                Err(found) => {
                    trace_named(node, Some((&named, 0)), &found.describe(), t0);
                    failing_over |=
                        found.failing_over(self.reached.load(std::sync::atomic::Ordering::Relaxed));
                    causes.push(format!(
                        "master {} named by {}: {}",
                        display(&named),
                        dsn::display_addr(node),
                        found.describe()
                    ));
                }
            }
        }
        let cause = match failing_over {
            true => {
                format!("sentinel failover of {} in progress: {}", self.service, causes.join("; "))
            }
            false => format!("no master found: {}", causes.join("; ")),
        };
        Err(Undiscovered { cause, passing: failing_over })
    }

    /// A connection to a master (`lock_server`: asked whether it can evict lock keys)
    /// or a sentinel.
    fn open(
        &self,
        info: &ConnectionInfo,
        connect_timeout: Duration,
        read_timeout: Duration,
        lock_server: bool,
    ) -> Result<Connection, String> {
        pool::open(info, &self.tls, connect_timeout, read_timeout, self.max_reply, lock_server)
            .map_err(|e| unreachable(&e, info))
    }

    fn ask(
        &self,
        node: &ConnectionInfo,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Result<(String, u16), String> {
        let mut conn = self.open(node, connect_timeout, read_timeout, false)?;
        let reply = wire::request(
            &mut conn,
            &[b"SENTINEL", b"GET-MASTER-ADDR-BY-NAME", self.service.as_bytes()],
        )
        .map_err(|e| e.to_string())?;
        match reply {
            Value::Array(items) if items.len() == 2 => {
                let text = |v: &Value| match v {
                    Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
                    Value::SimpleString(s) => Some(s.clone()),
                    _ => None,
                };
                let host = text(&items[0]).ok_or("a malformed reply")?;
                let port =
                    text(&items[1]).and_then(|p| p.parse().ok()).ok_or("a malformed reply")?;
                Ok((host, port))
            }
            Value::Nil => Err(format!("does not know the service \"{}\"", self.service)),
            other => Err(format!("an unexpected reply {other:?}")),
        }
    }
}

impl Discovery for Sentinels {
    fn connect(
        &self,
        info: &ConnectionInfo,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Result<Connection, Undiscovered> {
        self.connect_master(info, connect_timeout, read_timeout)
    }

    /// The first sentinel that answers decides: a lagging one may still name the old
    /// master for a moment, which costs a check, never a grant (`WAIT` decides those).
    fn still_names(
        &self,
        conn: &Connection,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Option<bool> {
        let was = conn.named()?;
        let start = Instant::now();
        for node in &self.nodes {
            let left =
                connect_timeout.saturating_sub(start.elapsed()).max(Duration::from_millis(1));
            let t0 = crate::trace::now_ns();
            if let Ok(named) = self.ask(node, left, read_timeout) {
                let now = display(&named);
                let same = now == was;
                trace_named(
                    node,
                    Some((&named, conn.serial())),
                    if same { "still named" } else { "replaced" },
                    t0,
                );
                return Some(same);
            }
        }
        None
    }
}

/// The debug trace (`crate::trace`) of one sentinel asked: the master it named (and
/// the serial of the connection made to it, 0 for none), and what was found there.
fn trace_named(
    sentinel: &ConnectionInfo,
    named: Option<(&(String, u16), u64)>,
    found: &str,
    t0: u64,
) {
    if !crate::trace::on() {
        return;
    }
    use crate::trace::json;
    let (named, conn) = named.map_or(("".to_string(), 0), |(n, c)| (display(n), c));
    crate::trace::write(
        "sentinel-named",
        t0,
        &format!(
            "\"sentinel\":{},\"named\":{},\"conn\":{conn},\"found\":{}",
            json(&dsn::display_addr(sentinel)),
            json(&named),
            json(found)
        ),
    );
}

fn display((host, port): &(String, u16)) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// What reaching the master a sentinel named found, when it was no usable master.
enum Found {
    /// It could not be reached (or set up: TLS, credentials).
    Unreachable(RedisError, Box<ConnectionInfo>),
    /// It answered `ROLE` with this role: a replica (demoted, or not promoted yet).
    Role(String),
    /// Cut off before it answered `ROLE`: gone, as far as can be told.
    CutOff(String),
    /// `ROLE` was refused, or its reply was not understood.
    Broken(String),
}

impl Found {
    /// Whether this is what a failover in progress looks like: the master named is
    /// gone (refused, timed out, cut off; once a master was `reached`, also closed at
    /// the first command), or a replica. A refusal of the settings (TLS, credentials)
    /// stays what it is: waiting does not change it.
    fn failing_over(&self, reached: bool) -> bool {
        match self {
            Found::Unreachable(e, _) if reached && pool::closed_at_first(e) => true,
            Found::Unreachable(e, info) => {
                pool::setup_failure(e, info).is_none()
                    && (e.is_io_error() || e.is_timeout() || e.is_connection_dropped())
            }
            Found::Role(role) => role == "slave" || role == "replica",
            Found::CutOff(_) => true,
            Found::Broken(_) => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            Found::Unreachable(e, info) => unreachable(e, info),
            Found::Role(role) => format!("its role is {role}"),
            Found::CutOff(why) | Found::Broken(why) => why.clone(),
        }
    }
}

/// A failure to reach `info`, in words (no credentials).
fn unreachable(e: &RedisError, info: &ConnectionInfo) -> String {
    if let Some(why) = pool::setup_failure(e, info) {
        why
    } else if e.is_connection_refusal() {
        "connection refused".to_string()
    } else if e.is_timeout() {
        "timed out".to_string()
    } else {
        e.to_string()
    }
}

fn role_is_master(conn: &mut Connection) -> Result<(), Found> {
    let reply =
        wire::request(conn, &[b"ROLE"]).map_err(|e| match e.is_io_error() || e.is_timeout() {
            true => Found::CutOff(format!("cut off before it answered ROLE ({e})")),
            false => Found::Broken(e.to_string()),
        })?;
    match reply {
        Value::Array(items) => match items.first() {
            Some(Value::BulkString(r)) if r == b"master" => Ok(()),
            Some(Value::BulkString(r)) => Err(Found::Role(String::from_utf8_lossy(r).into_owned())),
            _ => Err(Found::Broken("an unexpected ROLE reply".to_string())),
        },
        _ => Err(Found::Broken("an unexpected ROLE reply".to_string())),
    }
}
