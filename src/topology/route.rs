//! Where a key's commands run: the one routing layer every kind of lock calls.
//!
//! A key lives on one server (which may be a Sentinel-monitored master, found
//! again through its sentinels, `sentinel::endpoint`, after a failover) or in one slot of a Redis Cluster, whose master
//! `cluster::Placement` finds and follows through `MOVED`, `ASK` and failovers.
//! Callers hand over a closure that runs on a connection; they never ask which.

use crate::topology::cluster::Placement;
use crate::topology::sentinel;
use crate::config::Settings;
use crate::error::Result;
use crate::keys;
use crate::net::pool::{self, Endpoint, Retry};
use crate::net::wire::Connection;
use redis::RedisResult;
use std::sync::Arc;

/// The server, or the cluster slot, that holds one key.
#[derive(Debug, Clone)]
pub enum Route {
    /// One server (a Sentinel master is found again by its endpoint).
    Node(Arc<Endpoint>),
    /// A Redis Cluster slot: commands go to its master, wherever it is now.
    Slot(Placement),
}

impl Route {
    /// The route of `key` under `settings` (`cluster`, or one server). Redlock's
    /// `servers` are not a route: a caller that supports them builds its quorum itself.
    pub fn for_key(settings: &Settings, key: &[u8]) -> Result<Route> {
        if settings.cluster.is_empty() {
            let ep = if settings.sentinels.is_empty() {
                pool::endpoint_for(&settings.dsn, settings)?
            } else {
                sentinel::endpoint(settings)?
            };
            return Ok(Route::Node(ep));
        }
        Ok(Route::Slot(Placement { cluster: crate::topology::cluster::get(settings)?, slot: keys::slot(key) }))
    }

    /// Runs `op` on the key's server (see `pool::run` for `retry` and the closure's
    /// second argument, true on a retry that must settle a lost reply).
    pub fn run<T>(&self, retry: Retry, op: impl FnMut(&mut Connection, bool) -> RedisResult<T>) -> Result<T> {
        match self {
            Route::Node(ep) => pool::run(ep, retry, op),
            Route::Slot(p) => p.run(retry, op),
        }
    }

    /// The server that holds the key, as far as this process knows (no round trip).
    pub fn node(&self) -> Arc<Endpoint> {
        match self {
            Route::Node(ep) => ep.clone(),
            Route::Slot(p) => p.node(),
        }
    }

    /// Whether the key's server can change under a wait (a cluster slot can move):
    /// a waiter then listens where releases run now, and confirms a grant it heard.
    pub fn moves(&self) -> bool {
        matches!(self, Route::Slot(_))
    }
}
