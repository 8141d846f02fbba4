//! Where a key's commands run: the one interface every kind of lock calls.
//!
//! A key lives on one server (which may be a Sentinel-monitored master, found
//! again through its sentinels, `sentinel::endpoint`, after a failover), in one slot
//! of a Redis Cluster, whose master `cluster::Placement` finds and follows through
//! `MOVED`, `ASK` and failovers, or on a Redlock quorum of independent masters,
//! where it is held when a majority has it. The kinds hand over their commands
//! (`Call`, or a closure that runs on one connection) and never ask which.
//!
//! A quorum keeps nothing beside the key: no queue of waiters, no readers' leases,
//! no fencing counter, and its safety rests on the lease (`lease_only`). The kinds'
//! one-server scripts are never sent to it; `run` refuses them, should one slip through.

use crate::config::{Settings, Topology};
use crate::error::{LockError, Result};
use crate::keys;
use crate::net::call::Call;
use crate::net::pool::{self, Endpoint, Retry};
use crate::net::resp;
use crate::net::wire::{Connection, Watch};
use crate::terms::Durable;
use crate::topology::cluster::Placement;
use crate::topology::redlock::Quorum;
use crate::topology::sentinel;
use redis::{RedisResult, Value};
use std::sync::Arc;
use std::time::Duration;

/// The server, the cluster slot, or the quorum that holds one key.
#[derive(Debug, Clone)]
pub enum Route {
    /// One server (a Sentinel master is found again by its endpoint).
    Node(Arc<Endpoint>),
    /// A Redis Cluster slot: commands go to its master, wherever it is now.
    Slot(Placement),
    /// Redlock's independent masters (`servers`): every command goes to all of them.
    Quorum(Arc<Quorum>),
}

impl Route {
    /// The route of `key` on `topology` (what `Settings::check` chose), with the
    /// connection settings of `settings`.
    pub fn for_key(topology: &Topology<'_>, settings: &Settings, key: &[u8]) -> Result<Route> {
        Ok(match *topology {
            Topology::One => Route::Node(pool::endpoint_for(&settings.dsn, settings)?),
            Topology::Sentinel { sentinels, service } => {
                Route::Node(sentinel::endpoint(sentinels, service, settings)?)
            }
            Topology::Cluster(seeds) => Route::Slot(Placement {
                cluster: crate::topology::cluster::get(seeds, settings)?,
                slot: keys::slot(key),
            }),
            Topology::Redlock(servers) => {
                let nodes = servers
                    .iter()
                    .map(|dsn| pool::endpoint_for(dsn, settings))
                    .collect::<Result<Vec<_>>>()?;
                Route::Quorum(Arc::new(Quorum::new(nodes)))
            }
        })
    }

    /// Whether the key is all this route keeps, its safety resting on the lease (a
    /// Redlock quorum): no queue to wait in (waiters poll), no readers, no fencing
    /// counter, and never a key without expiry.
    pub fn lease_only(&self) -> bool {
        matches!(self, Route::Quorum(_))
    }

    /// Runs `op` on the key's server (see `pool::run` for `retry` and the closure's
    /// second argument, true on a retry that must settle a lost reply). A quorum has
    /// no one server: it refuses, and the kinds never ask it (`lease_only`).
    pub(crate) fn on_server<T>(
        &self,
        retry: Retry,
        op: impl FnMut(&mut Connection, bool) -> RedisResult<T>,
    ) -> Result<T> {
        match self {
            Route::Node(ep) => pool::run(ep, retry, op),
            Route::Slot(p) => p.run(retry, op),
            Route::Quorum(q) => Err(LockError::InvalidValue(format!(
                "this needs one server, Sentinel or Cluster; Redlock (\"servers\": {}) keeps only the key on a majority",
                q.describe()
            ))),
        }
    }

    /// Runs `op` where the key lives (see `pool::run` for `retry`), handing it a
    /// runner of calls on the key's server and whether this is the second try, which
    /// must settle a lost reply. A quorum has no one server: it refuses (`run`).
    pub fn call<T>(
        &self,
        retry: Retry,
        mut op: impl FnMut(&mut dyn FnMut(&Call<'_>) -> RedisResult<Value>, bool) -> RedisResult<T>,
    ) -> Result<T> {
        self.on_server(retry, |conn, settling| op(&mut |call: &Call<'_>| call.run(conn), settling))
    }

    /// Runs `call` where the key lives and returns its reply; on a quorum, the reply
    /// a majority gave, or `Nil` when no majority agrees.
    pub fn ask(&self, call: &Call<'_>) -> Result<Value> {
        match self {
            Route::Quorum(q) => q.agreed(call),
            _ => self.on_server(Retry::IfStale, |conn, _| call.run(conn)),
        }
    }

    /// Sends `call` where the key lives without waiting for its reply (see
    /// `Call::fire`): what it did is not known to the caller; its reply is checked
    /// against `watch` when it is read. On a quorum it is `ask`ed, answer awaited: a
    /// majority's outcome needs every reply.
    pub fn fire(&self, call: &Call<'_>, watch: Option<Watch>) -> Result<()> {
        match self {
            // A quorum waits for a majority's answer anyway: it is checked at once.
            Route::Quorum(q) => q.agreed(call).map(|reply| {
                if let Some(w) = watch.filter(|w| w.lost(&reply)) {
                    crate::metrics::lost_late(w.what, &w.name);
                }
            }),
            _ => self.on_server(Retry::IfStale, |conn, _| call.fire(conn, watch.clone())),
        }
    }

    /// Takes `key` for `token`. On one server, `one` runs (the kind's calls, which
    /// may also queue the caller; see `call` for `Retry::ToSettle`). On a quorum it is
    /// `SET NX PX` on every node for `lease`, taken when a majority took it with time
    /// left of the lease, and undone everywhere by `undo` otherwise; `majority` turns
    /// that outcome into the kind's answer.
    pub fn take<T>(
        &self,
        key: &[u8],
        token: &[u8],
        lease: Option<Duration>,
        undo: &Call<'_>,
        one: impl FnMut(&mut dyn FnMut(&Call<'_>) -> RedisResult<Value>, bool) -> RedisResult<T>,
        majority: impl FnOnce(bool) -> T,
    ) -> Result<T> {
        match self {
            Route::Quorum(q) => {
                let lease =
                    lease.ok_or_else(|| LockError::InvalidValue(NEEDS_LEASE.to_string()))?;
                Ok(majority(q.take(key, token, lease, undo)?.is_some()))
            }
            _ => self.call(Retry::ToSettle, one),
        }
    }

    /// On a quorum, `take` by the kind's own `call` on every node (a MultiLock's keys,
    /// all or none), answering `took` on a node where it took them, with `key` (the
    /// first) for a late reply's cleanup: `Some(true)` when a majority took them within
    /// the lease's validity. `None` on one server, where the kind runs its own script.
    pub fn take_on_quorum(
        &self,
        call: &Call<'_>,
        took: &Value,
        key: &[u8],
        token: &[u8],
        lease: Option<Duration>,
        undo: &Call<'_>,
    ) -> Result<Option<bool>> {
        let Route::Quorum(q) = self else { return Ok(None) };
        let lease = lease.ok_or_else(|| LockError::InvalidValue(NEEDS_LEASE.to_string()))?;
        Ok(Some(q.take_by(call, took, key, token, lease, undo)?.is_some()))
    }

    /// How long the key still lives, in ms: `None` when it does not exist,
    /// `Some(None)` when it has no expiry. On a quorum, the lease of the node at the
    /// majority's edge.
    pub fn pttl(&self, key: &[u8]) -> Result<Option<Option<u64>>> {
        if let Route::Quorum(q) = self {
            return q.pttl(key);
        }
        let ms = resp::int(&self.ask(&Call::Command(&[b"PTTL", key]))?).unwrap_or(-2);
        Ok(match ms {
            -2 => None,
            ms if ms < 0 => Some(None),
            ms => Some(Some(ms as u64)),
        })
    }

    /// Waits (at most half a `read_timeout`) until `replicas` replicas have the hold
    /// `prime` renews (`confirm`, in the same round trip). Best effort: whatever it
    /// finds, errors included, is ignored.
    pub fn wait_replicas(&self, replicas: u32, prime: &Call<'_>) {
        if replicas == 0 {
            return;
        }
        let timeout = (self.node().read_timeout() / 2).max(Duration::from_millis(1));
        let _ = self.confirm(prime, &Durable { replicas, aof: false, timeout }, Duration::ZERO);
    }

    /// A reply of a shape `script` never gives, as the error it is: the server broke
    /// the protocol (a broken or hostile server), named.
    pub fn unexpected(&self, script: &str, reply: &Value) -> LockError {
        let e = redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "unexpected reply",
            format!("{script} script: {reply:?}"),
        ));
        self.node().error(&e)
    }

    /// The server that holds the key, as far as this process knows (no round trip);
    /// a quorum's first node.
    pub fn node(&self) -> Arc<Endpoint> {
        match self {
            Route::Node(ep) => ep.clone(),
            Route::Slot(p) => p.node(),
            Route::Quorum(q) => q.first(),
        }
    }

    /// The serial of the connection this route's commands use now, if it is one of
    /// ours (`pool::serial`); none on a quorum.
    pub fn serial(&self) -> Option<u64> {
        match self {
            Route::Quorum(_) => None,
            _ => pool::serial(&self.node()),
        }
    }

    /// Whether the connection this route's commands use is still the one of `serial`,
    /// unclosed (`pool::intact`). `None` (not known) is never intact.
    pub fn intact(&self, serial: Option<u64>) -> bool {
        match (self, serial) {
            (Route::Quorum(_), _) | (_, None) => false,
            (_, Some(s)) => pool::intact(&self.node(), s),
        }
    }

    /// Every server that holds keys of this route's kind: the one server, every
    /// master of the cluster, every node of the quorum (for listings).
    pub fn masters(&self) -> Result<Vec<Arc<Endpoint>>> {
        match self {
            Route::Node(ep) => Ok(vec![ep.clone()]),
            Route::Slot(p) => p.cluster.masters(),
            Route::Quorum(q) => Ok(q.nodes().to_vec()),
        }
    }

    /// Whether the endpoint `id` serves this route (for a quorum, any of its nodes).
    pub fn uses(&self, id: &Arc<str>) -> bool {
        match self {
            Route::Quorum(q) => q.uses(id),
            _ => self.node().id() == id,
        }
    }

    /// Whether the key's server can change under a wait (a cluster slot can move):
    /// a waiter then listens where releases run now, and confirms a grant it heard.
    pub fn moves(&self) -> bool {
        matches!(self, Route::Slot(_))
    }

    /// The cluster slot of the key, whose shard its wake-ups stay in (see `wake`).
    pub fn slot(&self) -> Option<u16> {
        match self {
            Route::Slot(p) => Some(p.slot),
            _ => None,
        }
    }
}

/// Runs `op` on the server `ep` (one that `Route::masters` named), handing it a runner
/// of calls there (a connection that went stale is replaced once, as `Retry::IfStale`).
pub fn on_node<T>(
    ep: &Endpoint,
    mut op: impl FnMut(&mut dyn FnMut(&Call<'_>) -> RedisResult<Value>) -> RedisResult<T>,
) -> Result<T> {
    pool::run(ep, Retry::IfStale, |conn, _| op(&mut |call: &Call<'_>| call.run(conn)))
}

/// Why a quorum refuses a key without expiry.
pub const NEEDS_LEASE: &str = "Redlock (\"servers\") needs a finite lease: its safety rests on it";
