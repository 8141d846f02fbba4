//! The wait on a route that keeps a queue, as steps (`Queued`): an entry naming the
//! waiter's wake channel, then grants, notices and timers until the hold is had or
//! the deadline passes. `waiting::Waiting` drives it; each step is handed the waiter
//! and its listener, so that the state is the wait's own.

use crate::clock::{self, Boot};
use crate::error::LockError;
use crate::kinds::core::backoff::Backoff;
use crate::kinds::core::entry;
use crate::kinds::core::waiting::{
    unsure, Try, Waited, Waiter, Woken, EXPIRY_SLACK, RECHECK_EVERY,
};
use crate::net::wake;
use std::time::Instant;

/// What a wait does next (`Queued::advance`).
pub(super) enum Next {
    /// It ended.
    Done(Waited),
    /// Nothing to listen to: it looks again at this instant (a back-off pause).
    Pause(Instant),
    /// Queued: it listens on its subscriber until `until` (a notice may bring that
    /// forward), and hands what came to `Queued::heard`. `exact`: a grant heard is this
    /// waiter's (else the next try confirms it: a cluster's unsharded PUBLISH).
    Listen { until: Instant, exact: bool },
}

/// A wait on a route that keeps a queue, as steps: `advance` tries (queueing the
/// waiter) and says what to wait for next; `heard` takes what listening brought. A
/// wait drives them (`waiting::Waiting`); nothing in them blocks but the
/// commands they send. It keeps only its own state: each step is handed the waiter
/// and its listener, so that a wait can be driven from elsewhere too.
pub(super) struct Queued {
    deadline: Instant,
    /// The next try may find the hold this waiter's already (stale, or a try cut off).
    may_hold: bool,
    /// A try found the hold busy (set, and counted, at the first that does).
    pub(super) busy: bool,
    backoff: Backoff,
    /// The channel and entry this wait last queued with (as queued, once a reply
    /// said so); it must not outlive the wait.
    queued_as: Option<(String, Vec<u8>)>,
    /// A grant heard on a cluster, which the next try confirms.
    heard: bool,
    /// This wait's latest exchange with the server that read its clock (a try that
    /// stamped the entry): a grant's lease is bounded from it (`grant_bound`).
    seen: Option<clock::Exchange>,
    /// The last try's error, while tries keep failing: what the wait ends with.
    failing: Option<LockError>,
}

impl Queued {
    pub(super) fn new(
        w: &impl Waiter,
        ear: &mut wake::Listener,
        deadline: Instant,
        may_hold: bool,
        busy: bool,
    ) -> Self {
        // Listening before the first try of the wait, that try queues at once.
        ear.ensure();
        let backoff = w.backoff();
        Queued {
            deadline,
            may_hold,
            busy,
            backoff,
            queued_as: None,
            heard: false,
            seen: None,
            failing: None,
        }
    }

    /// One try (queueing the waiter when busy), and what to wait for next; at the
    /// deadline, the end of the wait.
    pub(super) fn advance(&mut self, w: &impl Waiter, ear: &mut wake::Listener) -> Next {
        let (route, deadline) = (w.route(), self.deadline);
        if route.moves() {
            // The slot moved, or its master failed over: listen where releases run now.
            let node = route.node();
            if node.id() != ear.endpoint().id() {
                *ear = wake::Listener::lend(node, route.slot());
            }
        }
        if Instant::now() >= deadline {
            // Queued: the cancel says whether the hold was handed over meanwhile.
            if let Some((_, entry)) = &self.queued_as {
                return Next::Done(match (give_up(w, entry), self.failing.take()) {
                    (Waited::TimedOut, Some(e)) => Waited::Failed(e),
                    (outcome, _) => outcome,
                });
            }
            if self.may_hold {
                // A stale hold (or one a try cut off by a failover may have taken), and
                // no time to try again: it goes; Redis trouble that lasted is reported.
                w.abandon();
                return Next::Done(self.failing.take().map_or(Waited::TimedOut, Waited::Failed));
            }
        }
        let channel = ear.get().map(|sub| sub.channel().to_string());
        let entry = match (&channel, &self.queued_as) {
            (Some(ch), Some((was, entry))) if ch == was => entry.clone(),
            (Some(ch), _) => {
                let mut entry = entry::head(ear.endpoint(), deadline);
                entry.extend_from_slice(&w.entry(ch));
                entry
            }
            (None, _) => Vec::new(),
        };
        let may_be_queued = self.queued_as.is_some() || self.may_hold;
        if let Some(ch) = channel.filter(|_| !entry.is_empty()) {
            // Even if this try fails, it may have queued us: later tries and the
            // cancel at the deadline must know.
            self.queued_as = Some((ch, entry.clone()));
        }
        let sent = Boot::now();
        let (pttl, queued) = match w.try_part(&entry, may_be_queued, deadline) {
            Ok(Try::Acquired(fence)) => {
                let Some(until) = clock::taken(sent, w.lease()) else {
                    // Taken (or found its own) too late to use: the next try starts
                    // its lease again, or queues anew.
                    self.may_hold = true;
                    return Next::Pause(Instant::now());
                };
                if std::mem::take(&mut self.heard) {
                    w.meter().handed_over();
                }
                return Next::Done(Waited::Got(fence, until));
            }
            Ok(Try::Busy { pttl, queued, clock }) => {
                self.may_hold = false;
                if let Some(server_ms) = clock {
                    self.seen = Some(clock::Exchange { sent, server_ms });
                    ear.endpoint().note_server_clock(Boot::now(), server_ms);
                }
                if !std::mem::replace(&mut self.busy, true) {
                    w.meter().wait_started();
                }
                match (&queued, self.queued_as.as_mut()) {
                    (Some(stored), Some((_, entry))) => *entry = stored.clone(),
                    // Sent as queued and gone from the queue (granted, or passed
                    // over): never queued again; the next try queues anew.
                    (None, Some(_)) if !entry.is_empty() => self.queued_as = None,
                    _ => {}
                }
                (pttl, queued.is_some())
            }
            // Held by this token, not known to be this wait's: waited out like Redis
            // trouble (the other holder may release it), then reported as such.
            Ok(Try::Unsure) => return self.failed(unsure(route.node().addr())),
            // A refusal that waiting cannot change (an ACL) ends the wait at once.
            Err(e) if !e.may_pass() => return Next::Done(Waited::Failed(e)),
            // Mid-wait, a restart or a dropped connection is waited out until the deadline.
            Err(e) => return self.failed(e),
        };
        self.failing = None;
        if Instant::now() >= deadline {
            let Some((_, entry)) = &self.queued_as else { return Next::Done(Waited::TimedOut) };
            return Next::Done(give_up(w, entry));
        }
        // Wake at the holder's expiry, in case no grant ever comes, or at the deadline.
        let timer = Instant::now()
            + match pttl {
                Some(p) if queued => (p + EXPIRY_SLACK).min(RECHECK_EVERY),
                Some(p) => p + EXPIRY_SLACK,
                None => self.backoff.max(),
            };
        let wake_at = timer.min(deadline);
        if queued {
            let exact = !route.moves() || ear.get().is_some_and(|s| s.sharded());
            return Next::Listen { until: wake_at, exact };
        }
        if ear.ensure() {
            // With a subscriber now, the next try queues at once.
            return Next::Pause(Instant::now());
        }
        // No way to be woken: poll, never past the holder's expiry or the deadline.
        Next::Pause(self.backoff.pause_until(wake_at).unwrap_or_else(Instant::now))
    }

    /// A try that failed with `e` (Redis trouble, or a hold of this token not known to
    /// be this wait's): waited out with back-off until the deadline, then reported.
    fn failed(&mut self, e: LockError) -> Next {
        match self.backoff.pause_until(self.deadline) {
            None => Next::Done(Waited::Failed(e)),
            Some(at) => {
                self.failing = Some(e);
                Next::Pause(at)
            }
        }
    }

    /// What listening brought (`Next::Listen`): the end of the wait for a grant of
    /// this waiter's read in time, else nothing (the next `advance` tries again).
    pub(super) fn heard(
        &mut self,
        w: &impl Waiter,
        ear: &mut wake::Listener,
        woken: Woken,
        exact: bool,
    ) -> Option<Waited> {
        match woken {
            Woken::Granted(fence, at) if exact => {
                if let Some(granted) = at {
                    ear.endpoint().note_server_clock(Boot::now(), granted);
                }
                let lease = w.lease();
                let until = match (self.seen, at) {
                    (Some(seen), Some(granted)) => {
                        clock::grant_bound(seen, granted, lease, Boot::now())
                    }
                    // A grant that does not say when (an older releaser), or a wait
                    // that saw no clock: the next try confirms it.
                    _ if lease.is_none() => None,
                    _ => Some(Boot::now()),
                };
                if let Some(until) = clock::fresh(until) {
                    w.meter().handed_over();
                    return Some(Waited::Got(fence, until));
                }
                // Read too late: the next try finds the hold still this waiter's (and
                // starts its lease again), or queues anew.
                self.may_hold = true;
            }
            // Cluster PUBLISH (not sharded) reaches subscribers on every node, but the
            // releaser's script counts only its own node's: a grant heard here may
            // have been given to no one (the slot moved during the wait). The next
            // try, one round trip, confirms it.
            Woken::Granted(..) => self.heard = true,
            Woken::Nothing => {}
            Woken::Broken => ear.discard(),
        }
        None
    }
}

impl Queued {
    /// Ends the wait before its deadline (an event loop's wait cancelled, or its
    /// object gone): it leaves the queue, and a hold handed to it meanwhile (or one a
    /// stale try left it) is released. Whether that went well: `false` when Redis
    /// could not be told, and an entry of it may still be queued.
    pub(super) fn cancel(&mut self, w: &impl Waiter) -> bool {
        let mut told = true;
        if let Some((_, entry)) = self.queued_as.take() {
            match w.cancel(&entry) {
                Ok(Some(_)) => self.may_hold = true,
                Ok(None) => {}
                Err(_) => told = false,
            }
        }
        if self.may_hold {
            w.abandon();
        }
        told
    }
}

/// Leaves the queue at the deadline (`entry`, as queued or as sent). Cut off from
/// the server, the wait ends after one `read_timeout` more: the entry's time is up
/// on the server too, so no release hands it the hold after that.
fn give_up(w: &impl Waiter, entry: &[u8]) -> Waited {
    let sent = Boot::now();
    match w.cancel(entry) {
        Ok(Some(fence)) => {
            // Handed over just before the cancel, which started its lease again.
            let Some(until) = clock::taken(sent, w.lease()) else {
                w.abandon();
                return Waited::TimedOut;
            };
            w.meter().handed_over();
            Waited::Got(fence, until)
        }
        Ok(None) => Waited::TimedOut,
        Err(e) => Waited::Failed(e),
    }
}
