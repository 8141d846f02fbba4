//! What a Redlock quorum (`servers`) cannot keep, in one place. A quorum keeps only
//! the key on each node, and its safety rests on the lease: no key without expiry,
//! no queue (fair mode; waiters poll), no readers' leases (shared locks), no
//! holders' leases (semaphores). Every kind asks here, before anything reaches Redis.

use crate::config::{Settings, Topology};
use crate::error::{LockError, Result};
use crate::terms::NO_EXPIRY;
use crate::topology::route::Route;

/// Something a kind needs that a quorum may not keep; the label names the PHP
/// argument or method in the message.
#[derive(Debug, Clone, Copy)]
pub enum Need<'a> {
    /// A lease of this many ms (`NO_EXPIRY`: none) for `label`.
    Expiry(&'a str, u64),
    /// A queue, when the settings ask for fair mode.
    Fair,
    /// Readers' leases (a shared hold), for `label`.
    Readers(&'a str),
    /// Holders' leases (a semaphore), for `label`.
    Holders(&'a str),
}

/// Whether keys on `topology` live on a Redlock quorum.
pub fn lease_only(topology: &Topology<'_>) -> bool {
    matches!(topology, Topology::Redlock(_))
}

/// Refuses what a quorum cannot keep, for an object about to be made on `topology`
/// under `settings`.
pub fn check(topology: &Topology<'_>, settings: &Settings, needs: &[Need<'_>]) -> Result<()> {
    if lease_only(topology) && (settings.durable > 0 || settings.durable_aof) {
        return Err(LockError::InvalidValue(
            "options \"durable\" and \"durable_aof\" need one server, Sentinel or Cluster: Redlock (\"servers\") counts on a majority of masters, not on their replicas".to_string(),
        ));
    }
    needs.iter().try_for_each(|&need| refused(lease_only(topology), settings.fair, need))
}

/// Refuses what a quorum cannot keep, for a call on a key that lives on `route`.
pub fn refuse(route: &Route, need: Need<'_>) -> Result<()> {
    refused(route.lease_only(), false, need)
}

fn refused(lease_only: bool, fair: bool, need: Need<'_>) -> Result<()> {
    if !lease_only {
        return Ok(());
    }
    let why = match need {
        Need::Expiry(label, ms) if ms == NO_EXPIRY => format!("{label} must be finite with Redlock (\"servers\"): its safety rests on the lease"),
        Need::Fair if fair => "option \"fair\" needs a queue, which Redlock (\"servers\") does not keep".to_string(),
        Need::Readers(label) => format!("{label}: shared locks need one server, Sentinel or Cluster; Redlock (\"servers\") keeps no readers' leases on a majority"),
        Need::Holders(label) => format!("{label}: a semaphore needs one server, Sentinel or Cluster; Redlock (\"servers\") keeps no holders' leases on a majority"),
        _ => return Ok(()),
    };
    Err(LockError::InvalidValue(why))
}
