//! Redis Cluster: each lock lives on the master that serves its key's hash slot.
//!
//! The process keeps a map of slots to masters per cluster, read with
//! `CLUSTER SLOTS` from any node that answers (the seeds first time, the known
//! masters after). Every command for a lock goes to its slot's master; the lock's
//! auxiliary keys share that slot (`keys`), so each script touches one node only.
//!
//! The map is corrected when the cluster says it is wrong:
//! - `MOVED` (the slot has a new owner, after a failover or resharding): the map is
//!   read again, and the command goes to the node named;
//! - `ASK` (the slot is migrating): the command goes once to the node named, after
//!   `ASKING`, and the map is left alone;
//! - `TRYAGAIN` (a script's keys are split by a migration): a short pause, then again;
//! - a master that cannot be reached: the map is read again from the other nodes, and
//!   the command goes to the slot's new master if there is one; until the cluster has
//!   promoted a replica, it is a passing state naming the slot (`LockError::Passing`),
//!   as `CLUSTERDOWN` is, which an acquisition with time to wait waits out (the core's
//!   `acquire`), the map read again on each try.
//!
//! Only the request's thread uses the map (the watchdog renews on the node of the
//! acquisition), so a fork never finds its mutex held.

use crate::config::{self, Settings};
use crate::dsn;
use crate::error::{LockError, Result};
use crate::net::pool::{self, Endpoint, Retry};
use crate::net::wire::{self, Connection};
use redis::{ConnectionInfo, ErrorKind, RedisError, RedisResult, ServerErrorKind, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Redirects and retries one command may go through before it is an error.
const MAX_HOPS: usize = 5;

/// Pause before a command that got `TRYAGAIN` is sent again (for up to a
/// `read_timeout` in all).
const TRY_AGAIN_PAUSE: Duration = Duration::from_millis(20);

/// Distinct clusters remembered per process (a guard against settings built per request).
const MAX_CLUSTERS: usize = 16;

/// One cluster, as this process knows it.
#[derive(Debug)]
pub struct Cluster {
    /// What identifies the settings; the nodes' endpoints are registered under it.
    scope: String,
    seeds: Vec<Arc<Endpoint>>,
    /// Credentials and TLS for the nodes the cluster names: the first seed's.
    base: ConnectionInfo,
    settings: Settings,
    map: Mutex<Option<SlotMap>>,
}

/// Which master serves which slots, from one `CLUSTER SLOTS` reply.
#[derive(Debug)]
struct SlotMap {
    /// Sorted by first slot, not overlapping.
    ranges: Vec<(u16, u16, Arc<Endpoint>)>,
}

impl SlotMap {
    fn master(&self, slot: u16) -> Option<&Arc<Endpoint>> {
        let i = self.ranges.partition_point(|(_, last, _)| *last < slot);
        self.ranges.get(i).filter(|(first, _, _)| *first <= slot).map(|(_, _, ep)| ep)
    }
}

static CLUSTERS: Mutex<Option<HashMap<String, Arc<Cluster>>>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing half-written under these locks can hurt: a map is replaced whole.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The process's view of the cluster of these seed nodes (`Topology::Cluster`), with
/// the connection settings of `settings`, shared by every `Lock` that names it. No
/// connection is made here.
pub fn get(seeds: &[String], settings: &Settings) -> Result<Arc<Cluster>> {
    let scope = format!(
        "cluster\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
        seeds.join(","),
        settings.connect_timeout.as_nanos(),
        settings.read_timeout.as_nanos(),
        settings.tls()
    );
    let mut guard = lock(&CLUSTERS);
    let all = guard.get_or_insert_with(HashMap::new);
    if let Some(c) = all.get(&scope) {
        return Ok(c.clone());
    }
    let base = dsn::parse_dsn(seeds.first().map(String::as_str).unwrap_or(config::DEFAULT_DSN))?;
    let seeds =
        seeds.iter().map(|dsn| pool::endpoint_for(dsn, settings)).collect::<Result<Vec<_>>>()?;
    let cluster = Arc::new(Cluster {
        scope: scope.clone(),
        seeds,
        base,
        settings: settings.clone(),
        map: Mutex::new(None),
    });
    if all.len() >= MAX_CLUSTERS {
        all.clear();
    }
    all.insert(scope, cluster.clone());
    Ok(cluster)
}

/// One lock's place in a cluster: the cluster and the slot of the lock's key.
#[derive(Debug, Clone)]
pub struct Placement {
    pub cluster: Arc<Cluster>,
    pub slot: u16,
}

impl Placement {
    /// The master the map names for the slot, without asking the cluster; the
    /// first seed before the map is known.
    pub fn node(&self) -> Arc<Endpoint> {
        let known = lock(&self.cluster.map).as_ref().and_then(|m| m.master(self.slot).cloned());
        known.unwrap_or_else(|| self.cluster.seeds[0].clone())
    }

    /// Runs `op` on the slot's master, like `pool::run`, following the cluster's
    /// redirects and finding the master again after a failover.
    pub fn run<T>(
        &self,
        retry: Retry,
        mut op: impl FnMut(&mut Connection, bool) -> RedisResult<T>,
    ) -> Result<T> {
        let c = &self.cluster;
        let mut node = c.master(self.slot)?;
        let mut asking = false;
        let mut refreshed = false;
        let started = std::time::Instant::now();
        let mut hops = 0;
        while hops < MAX_HOPS {
            hops += 1;
            let ask = std::mem::take(&mut asking);
            let outcome = pool::run(&node, retry, |conn, again| {
                if ask {
                    wire::request(conn, &[b"ASKING"])?;
                }
                // The cluster's own answers come back as values, to be acted on here.
                // After a failure on the old master, the first run's outcome is unknown
                // (it may have been replicated): the op must settle, not assume.
                match op(conn, again || refreshed) {
                    Err(e) if redirect_kind(&e).is_some() => Ok(Err(e)),
                    other => other.map(Ok),
                }
            });
            let e = match outcome {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) => e,
                Err(LockError::Connection { addr, cause, sent }) => {
                    // The master may be gone: ask the others who serves the slot now. No
                    // node answering at all is no failover: that stays a connection error.
                    let dead = node.id().clone();
                    if !refreshed {
                        if c.refresh(Some(&dead)).is_err() {
                            return Err(LockError::Connection { addr, cause, sent });
                        }
                        refreshed = true;
                        match c.master(self.slot) {
                            Ok(next) if next.id() != &dead => {
                                node = next;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    // The other nodes still name it (or a new master that cannot be
                    // reached either): the cluster has not promoted a replica yet (node
                    // timeout, then an election).
                    return Err(LockError::Passing {
                        addr,
                        cause: format!("cluster slot {} has no master that answers ({cause}; the other nodes name no other yet: a failover in progress)", self.slot),
                        sent,
                    });
                }
                Err(other) => return Err(other),
            };
            match redirect_kind(&e) {
                Some(ServerErrorKind::Moved) => {
                    node = c.redirected(&node, &e)?;
                    // The whole map is out of date, not just this slot; read it again,
                    // but follow the redirect even if the nodes disagree for a moment.
                    let _ = c.refresh(None);
                }
                Some(ServerErrorKind::Ask) => {
                    node = c.redirected(&node, &e)?;
                    asking = true;
                }
                Some(ServerErrorKind::TryAgain) => {
                    // A migration is moving the slot's keys: it will not take long.
                    if started.elapsed() + TRY_AGAIN_PAUSE > node.read_timeout() {
                        return Err(LockError::Passing {
                            addr: node.addr().to_string(),
                            cause: format!("cluster slot {} is being migrated ({e})", self.slot),
                            // Refused here; but a try on a master that died may have run.
                            sent: refreshed,
                        });
                    }
                    std::thread::sleep(TRY_AGAIN_PAUSE);
                    // Same node, same terms: after an ASK, the importing node again.
                    asking = ask;
                    hops -= 1;
                }
                _ => {
                    // CLUSTERDOWN: no master serves the slot, for now.
                    let _ = c.refresh(None);
                    return Err(LockError::Passing {
                        addr: node.addr().to_string(),
                        cause: format!(
                            "cluster slot {} has no master (CLUSTERDOWN {})",
                            self.slot,
                            e.detail().unwrap_or("").trim()
                        ),
                        sent: refreshed,
                    });
                }
            }
        }
        // Nodes that disagree on who serves the slot, for the moment of a failover or
        // a reshard: a passing state too.
        Err(LockError::Passing {
            addr: node.addr().to_string(),
            cause: format!("cluster slot {} is still redirected after {MAX_HOPS} tries (the cluster is resharding or failing over)", self.slot),
            sent: refreshed,
        })
    }
}

impl Cluster {
    /// How messages name the cluster: its seeds.
    pub fn describe(&self) -> String {
        let seeds: Vec<&str> = self.seeds.iter().map(|s| s.addr()).collect();
        format!("cluster (seeds {})", seeds.join(", "))
    }

    /// Every master, from a slot map read now (a listing must not miss a node the
    /// process has not heard of yet).
    pub fn masters(&self) -> Result<Vec<Arc<Endpoint>>> {
        self.refresh(None)?;
        let mut seen = std::collections::HashSet::new();
        let map = lock(&self.map);
        Ok(map
            .iter()
            .flat_map(|m| m.ranges.iter())
            .map(|(_, _, ep)| ep.clone())
            .filter(|ep| seen.insert(ep.id().clone()))
            .collect())
    }

    /// The master of `slot`, reading the map first if it is not known yet.
    fn master(&self, slot: u16) -> Result<Arc<Endpoint>> {
        if lock(&self.map).is_none() {
            self.refresh(None)?;
        }
        lock(&self.map).as_ref().and_then(|m| m.master(slot).cloned()).ok_or_else(|| LockError::Passing {
            addr: self.describe(),
            cause: format!("cluster slot {slot} has no master in the slot map (the cluster is down or failing over)"),
            sent: false,
        })
    }

    /// The node a MOVED or ASK reply names. A node that does not know its own address
    /// names only a port: the host is the replying node's.
    fn redirected(&self, from: &Endpoint, e: &RedisError) -> Result<Arc<Endpoint>> {
        let (addr, _) = e.redirect_node().ok_or_else(|| LockError::Server {
            addr: from.addr().to_string(),
            cause: format!("a malformed redirect ({e})"),
        })?;
        let (host, port) = split_addr(addr).ok_or_else(|| LockError::Server {
            addr: from.addr().to_string(),
            cause: format!("a redirect to an unreadable address \"{addr}\""),
        })?;
        let host = if host.is_empty() { host_of(from.info()) } else { host.to_string() };
        self.node_at(&host, port)
    }

    fn node_at(&self, host: &str, port: u16) -> Result<Arc<Endpoint>> {
        pool::endpoint_at(&self.base, host, port, &self.scope, &self.settings)
    }

    /// Reads the slot map again from the first node that answers: the known masters
    /// (`dead` last), then the seeds.
    fn refresh(&self, dead: Option<&Arc<str>>) -> Result<()> {
        let mut candidates: Vec<Arc<Endpoint>> = Vec::new();
        if let Some(m) = lock(&self.map).as_ref() {
            candidates.extend(m.ranges.iter().map(|(_, _, ep)| ep.clone()));
        }
        candidates.extend(self.seeds.iter().cloned());
        let mut seen = std::collections::HashSet::new();
        candidates.retain(|ep| seen.insert(ep.id().clone()));
        candidates.sort_by_key(|ep| Some(ep.id()) == dead);
        let mut causes = Vec::new();
        for ep in candidates {
            let reply = pool::run(&ep, Retry::IfStale, |conn, _| {
                wire::request(conn, &[b"CLUSTER", b"SLOTS"])
            });
            let parsed = reply.and_then(|v| {
                parse_slots(&v, &host_of(ep.info())).ok_or_else(|| LockError::Server {
                    addr: ep.addr().to_string(),
                    cause: "an unexpected CLUSTER SLOTS reply".to_string(),
                })
            });
            match parsed {
                Ok(ranges) if !ranges.is_empty() => {
                    let ranges = ranges
                        .into_iter()
                        .map(|(first, last, host, port)| {
                            Ok((first, last, self.node_at(&host, port)?))
                        })
                        .collect::<Result<Vec<_>>>()?;
                    *lock(&self.map) = Some(SlotMap { ranges });
                    return Ok(());
                }
                Ok(_) => causes.push(format!("{}: serves no slots yet", ep.addr())),
                Err(
                    LockError::Connection { addr, cause, .. }
                    | LockError::Passing { addr, cause, .. }
                    | LockError::Server { addr, cause },
                ) => causes.push(format!("{addr}: {cause}")),
                Err(other) => return Err(other),
            }
        }
        Err(LockError::Connection {
            addr: self.describe(),
            cause: format!("no node gave the slot map: {}", causes.join("; ")),
            sent: false,
        })
    }
}

/// Which of the cluster's own answers `e` is, if it is one.
fn redirect_kind(e: &RedisError) -> Option<ServerErrorKind> {
    match e.kind() {
        ErrorKind::Server(
            k @ (ServerErrorKind::Moved
            | ServerErrorKind::Ask
            | ServerErrorKind::TryAgain
            | ServerErrorKind::ClusterDown),
        ) => Some(k),
        _ => None,
    }
}

/// `host:port`, where the host may be empty, or an IPv6 address (with or without brackets).
fn split_addr(addr: &str) -> Option<(&str, u16)> {
    let (host, port) = addr.rsplit_once(':')?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    Some((host, port.parse().ok().filter(|&p| p != 0)?))
}

fn host_of(info: &ConnectionInfo) -> String {
    match info.addr() {
        redis::ConnectionAddr::Tcp(host, _) | redis::ConnectionAddr::TcpTls { host, .. } => {
            host.clone()
        }
        _ => "127.0.0.1".to_string(),
    }
}

/// The masters' ranges in a `CLUSTER SLOTS` reply: `[first, last, [host, port, id, ...],
/// replicas...]` per range. An empty or unknown host (`""`, `"?"`) means the answering
/// node's, `fallback`. `None` when the reply has another shape.
fn parse_slots(reply: &Value, fallback: &str) -> Option<Vec<(u16, u16, String, u16)>> {
    let Value::Array(ranges) = reply else { return None };
    let mut out = Vec::with_capacity(ranges.len());
    for range in ranges {
        let Value::Array(parts) = range else { return None };
        let number = |v: &Value| match v {
            Value::Int(n) => u16::try_from(*n).ok(),
            _ => None,
        };
        let (first, last) = (number(parts.first()?)?, number(parts.get(1)?)?);
        let Value::Array(master) = parts.get(2)? else { return None };
        let host = match master.first()? {
            Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            Value::SimpleString(s) => s.clone(),
            Value::Nil => String::new(),
            _ => return None,
        };
        let host = if host.is_empty() || host == "?" { fallback.to_string() } else { host };
        let port = number(master.get(1)?)?;
        if first > last || last >= crate::keys::SLOTS {
            return None;
        }
        out.push((first, last, host, port));
    }
    out.sort_by_key(|r| r.0);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn slot_map_replies_are_read_and_looked_up() {
        let node =
            |host: &str, port: i64| Value::Array(vec![bulk(host), Value::Int(port), bulk("id")]);
        let reply = Value::Array(vec![
            Value::Array(vec![
                Value::Int(5461),
                Value::Int(10922),
                node("10.0.0.2", 7001),
                node("10.0.0.5", 7004),
            ]),
            Value::Array(vec![Value::Int(0), Value::Int(5460), node("", 7000)]),
            Value::Array(vec![Value::Int(10923), Value::Int(16383), node("?", 7002)]),
        ]);
        let ranges = parse_slots(&reply, "10.0.0.9").expect("a well-formed reply");
        assert_eq!(
            ranges,
            vec![
                (0, 5460, "10.0.0.9".to_string(), 7000),
                (5461, 10922, "10.0.0.2".to_string(), 7001),
                (10923, 16383, "10.0.0.9".to_string(), 7002),
            ]
        );
        assert_eq!(parse_slots(&Value::Array(vec![Value::Array(vec![Value::Int(0)])]), "h"), None);
        assert_eq!(
            parse_slots(
                &Value::Array(vec![Value::Array(vec![Value::Int(9), Value::Int(3), node("h", 1)])]),
                "h"
            ),
            None
        );
        assert_eq!(parse_slots(&bulk("ERR"), "h"), None);
    }

    #[test]
    fn redirect_addresses_are_split() {
        assert_eq!(split_addr("127.0.0.1:7000"), Some(("127.0.0.1", 7000)));
        assert_eq!(split_addr(":7000"), Some(("", 7000)));
        assert_eq!(split_addr("[::1]:7000"), Some(("::1", 7000)));
        assert_eq!(split_addr("::1:7000"), Some(("::1", 7000)));
        assert_eq!(split_addr("h:0"), None);
        assert_eq!(split_addr("h"), None);
    }
}
