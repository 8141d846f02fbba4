//! The process's lock statistics (`redis_lock_stats()`, phpinfo): what its locks,
//! shared locks and semaphores did since the process started or the last reset.
//!
//! Plain relaxed atomic counters, one add per event, kept in the fork-wiped page
//! (`fork_wiped::counters`) so that a forked child (a php-fpm worker, a
//! `pcntl_fork()` child) counts its own from zero. Threads of one process (ZTS)
//! share them: the figures are per process, as the name says.

use crate::fork_wiped;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Acquisitions that succeeded (write, read, permits).
    Acquired = 0,
    /// Acquisitions that had to wait.
    Contended,
    /// Waits that gave up at their deadline.
    Timeouts,
    /// Nanoseconds spent waiting, in total.
    WaitNanos,
    /// The longest wait, in nanoseconds.
    WaitNanosMax,
    /// Holds received from a release (a grant heard, or found at cancel).
    HandedOver,
    /// Releases that removed a hold.
    Released,
    /// Leases renewed (the watchdog, `extendLock()`, `extend()`).
    Renewals,
    /// Holds found taken or expired under their holder.
    Lost,
    /// Exceptions of the `LockException` family thrown.
    Errors,
    /// Connections opened, reconnects and subscribers included.
    Connects,
    /// Acquisitions that came too late to be used: their lease may have ended before
    /// the holder learned of them (a grant read late, a reply delayed past the lease).
    /// Each was given up, and the wait went on.
    Stale,
    /// Durable grants (`durable`) not acknowledged in time, and undone: an
    /// acquisition's, a hand-over's, or a renewal's.
    Undurable,
    /// Servers found able to evict lock keys (`evicting`), each address once.
    EvictingServers,
    /// Releases the server did by its own compare-and-delete (`net::cad`), no script.
    FastReleases,
    /// Renewals the server did by its own `SET … IFEQ` (`net::cad`), no script.
    FastRenewals,
    /// Of `FastReleases`, those that found a waiter queued during the hold, and handed
    /// the free lock to the queue (`kick`) in the next command.
    FastKicks,
    /// Durable checks (`durable`) acknowledged in time: an acquisition's, a
    /// hand-over's, an extension's or a renewal's.
    DurableAcks,
}

/// The counters' names as `redis_lock_stats()` gives them, in `Counter` order
/// (the wait times are turned into seconds there).
pub const NAMES: [&str; 18] = [
    "acquired",
    "contended",
    "timeouts",
    "wait_seconds_total",
    "wait_seconds_max",
    "handed_over",
    "released",
    "renewals",
    "lost",
    "errors",
    "connects",
    "stale",
    "not_durable",
    "evicting_servers",
    "cad_releases",
    "cad_renewals",
    "cad_kicks",
    "durable_acks",
];

/// Counts one event.
#[inline]
pub fn note(c: Counter) {
    fork_wiped::counters()[c as usize].fetch_add(1, Ordering::Relaxed);
}

/// What the binding does with what the core learns outside its caller's view (a hold
/// found lost after the call that released it had returned, a server that can evict):
/// a PHP warning, when it can raise one now; whether it did.
pub type Warn = fn(&str) -> bool;

static WARN: std::sync::OnceLock<Warn> = std::sync::OnceLock::new();

static LOG: std::sync::OnceLock<Warn> = std::sync::OnceLock::new();

/// Installs the binding's `warn` and `log` (module startup; later calls are ignored):
/// `log` writes to PHP's error log, where no user error handler turns it into an
/// exception.
pub fn install_warn(warn: Warn, log: Warn) {
    let _ = WARN.set(warn);
    let _ = LOG.set(log);
}

/// A release sent without waiting for its answer (the end of `synchronized()` while
/// the lease surely lasted) found, when its reply was read, that the hold of the
/// `what` named `name` was gone before it: told with a warning (on the thread that
/// read it, which is the one that released it); `metrics::lost_late` counts it.
pub fn tell_lost_late(what: &str, name: &[u8]) {
    if let Some(warn) = WARN.get() {
        warn(&format!(
            "redis-lock: the {what} \"{}\" was found lost by the release that ended synchronized(), read after it returned (someone forced it, the server evicted or forgot it, or its clock jumped): part of that work ran unprotected",
            String::from_utf8_lossy(name)
        ));
    }
}

/// The server at `addr` can evict lock keys (its `maxmemory-policy` is `policy`, not
/// `noeviction`, and `maxmemory` is `maxmemory` bytes, not 0): counted when `first`
/// (the first time this process found it), and told in PHP's error log, as a warning:
/// a property of the deployment, not an error of the call (a framework that turns
/// warnings into exceptions would fail the lock call). Whether it was told: it can
/// only be told inside a call, and an untold finding is told when a later connection
/// finds it again.
pub fn evicting(addr: &str, policy: &str, maxmemory: u64, first: bool) -> bool {
    if first {
        note(Counter::EvictingServers);
    }
    LOG.get().is_some_and(|log| {
        log(&format!(
            "redis-lock: the Redis server at {addr} can evict lock keys (maxmemory-policy {policy}, maxmemory {maxmemory} bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own"
        ))
    })
}

/// Counts a wait that lasted `took`, whatever its outcome.
pub fn waited(took: Duration) {
    let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
    let c = fork_wiped::counters();
    c[Counter::WaitNanos as usize].fetch_add(nanos, Ordering::Relaxed);
    c[Counter::WaitNanosMax as usize].fetch_max(nanos, Ordering::Relaxed);
}

/// One value of a snapshot: a count, or seconds for the wait times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    Count(u64),
    Seconds(f64),
}

/// The counters now, by name, in `NAMES` order; with `reset`, each is zeroed as it
/// is read (an event counted meanwhile goes to the next snapshot, never lost).
pub fn snapshot(reset: bool) -> Vec<(&'static str, Figure)> {
    let c = fork_wiped::counters();
    NAMES
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            let v =
                if reset { c[i].swap(0, Ordering::Relaxed) } else { c[i].load(Ordering::Relaxed) };
            let figure = if i == Counter::WaitNanos as usize || i == Counter::WaitNanosMax as usize
            {
                Figure::Seconds(v as f64 / 1e9)
            } else {
                Figure::Count(v)
            };
            (name, figure)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_resets() {
        // Other tests of this binary count too: compare differences only.
        let before = snapshot(false);
        note(Counter::Connects);
        waited(Duration::from_millis(1500));
        let after = snapshot(false);
        let get = |s: &[(&str, Figure)], n: &str| {
            s.iter().find(|(k, _)| *k == n).map(|(_, f)| *f).unwrap()
        };
        match (get(&before, "connects"), get(&after, "connects")) {
            (Figure::Count(a), Figure::Count(b)) => assert!(b > a),
            other => panic!("{other:?}"),
        }
        match get(&after, "wait_seconds_max") {
            Figure::Seconds(s) => assert!(s >= 1.5),
            other => panic!("{other:?}"),
        }
        assert_eq!(after.len(), NAMES.len());
    }
}
