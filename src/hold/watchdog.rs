//! The watchdog: one background thread per process that renews the leases of the
//! locks held with `auto_renew`, so that work may outlive `$lockOut`.
//!
//! It wakes when the earliest renewal is due, and hands every due hold's renewal (its
//! part's, `Part::renew`) to the topology's `Renewer`, which sends them on connections
//! of its own (never the request's, which may be in use): one pipeline per endpoint,
//! a quorum's to all its nodes. This file keeps the schedule and what an answer does
//! to a hold: a lock whose key expired during a stall, or that someone else now
//! holds, is marked lost and no longer renewed; the object reports it on its next
//! call. A renewal that fails on the network is retried soon after, well before the
//! lease runs out if the network comes back.
//!
//! The thread never calls into PHP, blocks every signal (they belong to the
//! request's thread: pcntl handlers, SIGALRM timeouts), is started on the first
//! auto-renewed acquisition, and is stopped and joined at module shutdown.

use crate::clock::{lease_end, Boot};
use crate::hold::table::{self, HoldId, Part, Shared};
use crate::stats::Counter;
use crate::terms::Durable;
use crate::topology::landed::Landed;
use crate::topology::renew::{Renewer, Renewing};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One renewal to send.
struct Due {
    id: HoldId,
    /// What is held, where, and how it is renewed.
    part: Arc<dyn Part>,
    token: Vec<u8>,
    /// The hold's lease when the round began: an `extendLock()` meanwhile changes it.
    lease: Duration,
    /// The lease this renewal sets (shorter than `lease` when `max_hold` cuts it).
    sets: Duration,
    lease_ms: String,
    /// The lease was cut short by `max_hold`: this renewal is the last.
    last: bool,
    /// A durable hold: renewed once acknowledged (`durable`).
    durable: Option<Durable>,
}

/// Starts the thread with every signal blocked; `None` if the system refuses a thread,
/// in which case renewal does not happen and leases run out as without `auto_renew`.
pub(crate) fn spawn(shared: &'static Shared) -> Option<JoinHandle<()>> {
    // The new thread inherits the mask of the thread that creates it, so block
    // everything here for the instant of the spawn: no window where a signal could
    // land on the watchdog.
    // SAFETY: plain sigset manipulation on local storage.
    let old = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        old
    };
    let handle = std::thread::Builder::new()
        .name("rl-watchdog".to_string())
        .stack_size(256 * 1024)
        .spawn(move || run(shared))
        .ok();
    // SAFETY: restores the mask saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    handle
}

fn run(shared: &'static Shared) {
    let mut renewer = Renewer::default();
    let mut table = shared.lock();
    loop {
        if table.stop {
            return;
        }
        let now = Instant::now();
        // The renewals of this round are sent after this instant: their leases count
        // from it, on the clock bounds are kept on.
        let sent = Boot::now();
        let mut batch = Vec::new();
        let mut next: Option<Instant> = None;
        for (&id, hold) in table.holds.iter_mut() {
            let Some(r) = hold.renew.as_mut() else { continue };
            if r.due > now {
                next = Some(next.map_or(r.due, |n| n.min(r.due)));
                continue;
            }
            let lease = match r.until {
                None => r.lease,
                Some(until) => {
                    let left = until.saturating_duration_since(now);
                    if left < Duration::from_millis(1) {
                        // max_hold reached: the lease set last runs out by itself.
                        hold.renew = None;
                        continue;
                    }
                    left.min(r.lease)
                }
            };
            // Not due again until this round's answer is in.
            r.due = now + r.lease;
            batch.push(Due {
                id,
                part: hold.part.clone(),
                token: hold.token.clone(),
                lease: r.lease,
                sets: lease,
                lease_ms: lease.as_millis().max(1).to_string(),
                last: lease < r.lease,
                durable: r.durable,
            });
        }
        if batch.is_empty() {
            if next.is_none() {
                // Nothing to renew: no connection is kept open for nothing.
                renewer.clear();
            }
            table.asleep = Some(next);
            table = match next {
                Some(at) => {
                    let (t, _) = shared
                        .wake
                        .wait_timeout(table, at.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner());
                    t
                }
                None => shared.wake.wait(table).unwrap_or_else(|p| p.into_inner()),
            };
            table.asleep = None;
            continue;
        }
        // No lock held during the network round trips: the request's thread must
        // never wait on them.
        drop(table);
        let outcomes = {
            let calls: Vec<_> =
                batch.iter().map(|d| d.part.renew(&d.token, d.lease_ms.as_bytes())).collect();
            let sending: Vec<Renewing<'_>> = batch
                .iter()
                .zip(&calls)
                .map(|(d, call)| Renewing {
                    route: d.part.route(),
                    call: call.call(),
                    lease: d.sets,
                    durable: d.durable,
                })
                .collect();
            renewer.renew_all(&sending)
        };
        table = shared.lock();
        let done = Instant::now();
        for (due, outcome) in batch.iter().zip(outcomes) {
            let Some(hold) = table.holds.get_mut(&due.id) else { continue };
            let Some(r) = hold.renew.as_mut() else { continue };
            match outcome {
                Landed::Lost => hold.mark_lost(done),
                Landed::Yes if due.last => {
                    hold.meter.note(Counter::Renewals);
                    hold.until = Some(lease_end(sent, due.sets));
                    hold.renew = None
                }
                Landed::Yes if r.lease != due.lease => {
                    // extendLock() ran meanwhile, on another connection: this renewal
                    // may have landed after it with the old lease. Set the new one now.
                    let renewed = lease_end(sent, due.sets);
                    hold.until = hold.until.map(|u| u.min(renewed));
                    r.due = done;
                }
                Landed::Yes => {
                    hold.meter.note(Counter::Renewals);
                    hold.until = Some(lease_end(sent, due.sets));
                    r.due = done + table::interval(r.lease);
                }
                Landed::Unsure(_) | Landed::Slow(_)
                    if hold.until.is_some_and(|u| Boot::now() >= u) =>
                {
                    // Unconfirmed for a whole lease: Redis has let the key go by now.
                    hold.mark_lost(done);
                }
                Landed::Unsure(_) | Landed::Slow(_) => {
                    // It may have landed: a last renewal (cut by max_hold) shortens
                    // the lease the server keeps.
                    hold.cap(lease_end(sent, due.sets));
                    if let Some(r) = hold.renew.as_mut() {
                        r.due = done + retry_after(r.lease);
                    }
                }
            }
        }
        // Orphans (auto_release off, object gone) leave the table when renewal ends.
        table.holds.retain(|_, h| !(h.orphan && h.renew.is_none()));
        // Endpoints no lock is renewed on any more: close their connections.
        renewer
            .keep(|id| table.holds.values().any(|h| h.renew.is_some() && h.part.route().uses(id)));
    }
}

/// After a failed renewal, the next try comes sooner than the normal interval, so
/// that a short network blip costs nothing.
fn retry_after(lease: Duration) -> Duration {
    (lease / 12).clamp(Duration::from_millis(5), Duration::from_millis(250))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_come_well_inside_the_lease() {
        assert_eq!(retry_after(Duration::from_millis(30)), Duration::from_millis(5));
        assert!((Duration::from_millis(83)..Duration::from_millis(84))
            .contains(&retry_after(Duration::from_secs(1))));
        assert_eq!(retry_after(Duration::from_secs(60)), Duration::from_millis(250));
        assert_eq!(table::interval(Duration::from_millis(1)), Duration::from_millis(1));
        assert_eq!(table::interval(Duration::from_secs(3)), Duration::from_secs(1));
    }
}
