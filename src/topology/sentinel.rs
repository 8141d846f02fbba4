//! Sentinel: the master of a monitored service, found through its sentinels.
//!
//! Each connection to the service starts by asking the sentinels, in turn, where
//! the master is (`SENTINEL GET-MASTER-ADDR-BY-NAME`), and then asks the server
//! itself (`ROLE`): during a failover a sentinel may still name the old master,
//! which may be back as a replica. A connection that later finds itself on a
//! replica (`READONLY`) is dropped, so the next use asks the sentinels again.

use crate::config::{Settings, TlsFiles};
use crate::dsn;
use crate::net::pool::{self, Discovery, Endpoint};
use crate::net::wire::{self, Connection};
use redis::{ConnectionInfo, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The endpoint of a Sentinel-monitored service (`settings.sentinels` is set): the
/// registry finds its master through the sentinels for each new connection.
pub fn endpoint(settings: &Settings) -> crate::error::Result<Arc<Endpoint>> {
    let key = format!(
        "sentinel\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
        settings.sentinels.join(","),
        settings.service,
        settings.dsn,
        settings.connect_timeout.as_nanos(),
        settings.read_timeout.as_nanos(),
        settings.tls,
        settings.max_reply
    );
    let mut sentinels = Sentinels::new(&settings.sentinels, &settings.service, &settings.tls)?;
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
}

impl Sentinels {
    /// Parses the sentinels' dsns (already checked by the settings).
    pub fn new(dsns: &[String], service: &str, tls: &TlsFiles) -> crate::error::Result<Self> {
        let nodes = dsns.iter().map(|d| dsn::parse_dsn(d)).collect::<crate::error::Result<Vec<_>>>()?;
        Ok(Sentinels { nodes, service: service.to_string(), tls: tls.clone(), max_reply: crate::config::DEFAULT_MAX_REPLY })
    }

    /// How messages name the service.
    pub fn describe(&self) -> String {
        let addrs: Vec<String> = self.nodes.iter().map(dsn::display_addr).collect();
        format!("service \"{}\" via sentinels {}", self.service, addrs.join(", "))
    }

    /// A connection to the current master, with the credentials and database of
    /// `master` (its host is replaced by the one the sentinels name). The error is
    /// the cause, naming what each sentinel said.
    pub fn connect_master(
        &self,
        master: &ConnectionInfo,
        connect_timeout: Duration,
        read_timeout: Duration,
    ) -> Result<Connection, String> {
        let start = Instant::now();
        let mut causes = Vec::new();
        for node in &self.nodes {
            let left = connect_timeout.saturating_sub(start.elapsed()).max(Duration::from_millis(1));
            let named = match self.ask(node, left, read_timeout) {
                Ok(addr) => addr,
                Err(cause) => {
                    causes.push(format!("{}: {cause}", dsn::display_addr(node)));
                    continue;
                }
            };
            let info = dsn::info_at(master, &named.0, named.1);
            match self.open(&info, left, read_timeout, true).and_then(|mut conn| role_is_master(&mut conn).map(|_| conn)) {
                Ok(conn) => return Ok(conn),
                Err(cause) => causes.push(format!("master {} named by {}: {cause}", display(&named), dsn::display_addr(node))),
            }
        }
        Err(format!("no master found: {}", causes.join("; ")))
    }

    /// A connection to a master (`lock_server`: asked whether it can evict lock keys)
    /// or a sentinel.
    fn open(&self, info: &ConnectionInfo, connect_timeout: Duration, read_timeout: Duration, lock_server: bool) -> Result<Connection, String> {
        pool::open(info, &self.tls, connect_timeout, read_timeout, self.max_reply, lock_server)
            .map_err(|e| pool::setup_failure(&e, info).unwrap_or_else(|| e.to_string()))
    }

    fn ask(&self, node: &ConnectionInfo, connect_timeout: Duration, read_timeout: Duration) -> Result<(String, u16), String> {
        let mut conn = self.open(node, connect_timeout, read_timeout, false)?;
        let reply = wire::request(&mut conn, &[b"SENTINEL", b"GET-MASTER-ADDR-BY-NAME", self.service.as_bytes()]).map_err(|e| e.to_string())?;
        match reply {
            Value::Array(items) if items.len() == 2 => {
                let text = |v: &Value| match v {
                    Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
                    Value::SimpleString(s) => Some(s.clone()),
                    _ => None,
                };
                let host = text(&items[0]).ok_or("a malformed reply")?;
                let port = text(&items[1]).and_then(|p| p.parse().ok()).ok_or("a malformed reply")?;
                Ok((host, port))
            }
            Value::Nil => Err(format!("does not know the service \"{}\"", self.service)),
            other => Err(format!("an unexpected reply {other:?}")),
        }
    }
}

impl Discovery for Sentinels {
    fn connect(&self, info: &ConnectionInfo, connect_timeout: Duration, read_timeout: Duration) -> Result<Connection, String> {
        self.connect_master(info, connect_timeout, read_timeout)
    }
}

fn display((host, port): &(String, u16)) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn role_is_master(conn: &mut Connection) -> Result<(), String> {
    let reply = wire::request(conn, &[b"ROLE"]).map_err(|e| e.to_string())?;
    match reply {
        Value::Array(items) if matches!(items.first(), Some(Value::BulkString(r)) if r == b"master") => Ok(()),
        Value::Array(items) => match items.first() {
            Some(Value::BulkString(r)) => Err(format!("its role is {}", String::from_utf8_lossy(r))),
            _ => Err("an unexpected ROLE reply".to_string()),
        },
        _ => Err("an unexpected ROLE reply".to_string()),
    }
}
