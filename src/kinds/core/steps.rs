//! A wait for one part, as steps (`Waiting`): on a route that keeps a queue, the
//! queued wait's steps (`queued`); on a Redlock quorum, polls with back-off. The
//! acquisition's rounds drive it (`acquire`).

use crate::clock::{self, Boot};
use crate::kinds::core::backoff::Backoff;
use crate::kinds::core::queued::{Next, Queued};
use crate::kinds::core::waiting::{unsure, Try, Waited, Waiter, Woken};
use crate::net::wake;
use std::time::Instant;

/// A wait for one part until `deadline`, after a first try that found it busy
/// (`tried`), or as the first try (the caller expects it busy), counted (`stats`) once
/// a try found it busy; as steps: `start`, then `advance` (and `heard`, after a
/// `Step::Listen`) until it is done, pausing or listening between as each step says.
/// The acquisition's rounds drive it (`Holder::acquire`, blocking); nothing in the
/// steps blocks but the commands they send.
pub(crate) struct Waiting {
    started: Instant,
    deadline: Instant,
    how: How,
}

enum How {
    /// A route that keeps no queue (a Redlock quorum): a try after each pause (`due`:
    /// the pause comes next). `busy`: the first try found it busy.
    Poll { backoff: Backoff, due: bool, busy: bool },
    /// A route that keeps a queue: the wait's steps and its listener.
    Queue(Box<Queued>, wake::Listener),
    /// Done: its listener is given back.
    Ended,
}

/// What a wait does next.
pub(crate) enum Step {
    /// It ended, and whether a try found the hold busy.
    Done(Waited, bool),
    /// It looks again (`Waiting::advance`) at this instant.
    Pause(Instant),
    /// It listens on its subscriber (`Waiting::ear`) until `until` (a notice may bring
    /// that forward), then hands what came to `Waiting::heard`. `exact`: a grant heard
    /// is this waiter's (else the next try confirms it).
    Listen { until: Instant, exact: bool },
}

impl Waiting {
    /// A wait for `w`'s part until `deadline`. `may_hold`: the first try may find the
    /// hold this waiter's already (an earlier try took it too late to be used: stale).
    pub(crate) fn start(w: &impl Waiter, deadline: Instant, may_hold: bool, tried: bool) -> Self {
        if tried {
            w.meter().wait_started();
        }
        let route = w.route();
        let how = if route.lease_only() {
            if may_hold {
                // A stale hold on a quorum: it goes first, or the polls would find it busy.
                w.abandon();
            }
            How::Poll { backoff: w.backoff(), due: true, busy: tried }
        } else {
            // In a cluster, the first try found the slot's master: grants are published there.
            let mut ear = wake::Listener::lend(route.node(), route.slot());
            How::Queue(Box::new(Queued::new(w, &mut ear, deadline, may_hold, tried)), ear)
        };
        Waiting { started: Instant::now(), deadline, how }
    }

    /// The next step: a try (queueing the waiter where the route keeps a queue), and
    /// what to wait for next; at the deadline, the end.
    pub(crate) fn advance(&mut self, w: &impl Waiter) -> Step {
        let next = match &mut self.how {
            How::Poll { backoff, due, .. } => poll_step(w, backoff, due, self.deadline),
            How::Queue(q, ear) => q.advance(w, ear),
            How::Ended => return Step::Done(Waited::TimedOut, false),
        };
        self.step(w, next)
    }

    /// Its subscriber, while it listens (`Step::Listen`).
    pub(crate) fn ear(&mut self) -> Option<&mut wake::Listener> {
        match &mut self.how {
            How::Queue(_, ear) => Some(ear),
            _ => None,
        }
    }

    /// What listening brought, after a `Step::Listen`: the next step.
    pub(crate) fn heard(&mut self, w: &impl Waiter, woken: Woken, exact: bool) -> Step {
        let done = match &mut self.how {
            How::Queue(q, ear) => q.heard(w, ear, woken, exact),
            _ => None,
        };
        match done {
            Some(waited) => self.finish(w, waited),
            None => self.advance(w),
        }
    }

    /// Ends the wait before its deadline (see `Queued::cancel`); its listener is
    /// given back (in doubt when Redis could not be told).
    pub(crate) fn cancel(&mut self, w: &impl Waiter) {
        if let How::Queue(mut q, mut ear) = std::mem::replace(&mut self.how, How::Ended) {
            if !q.cancel(w) {
                ear.in_doubt();
            }
        }
        w.meter().wait_cancelled();
    }

    fn step(&mut self, w: &impl Waiter, next: Next) -> Step {
        match next {
            Next::Done(waited) => self.finish(w, waited),
            Next::Pause(at) => Step::Pause(at),
            Next::Listen { until, exact } => Step::Listen { until, exact },
        }
    }

    /// The end: counted once a try found the hold busy, and the listener given back
    /// (in doubt after a failure: an entry of this wait may still be queued, and nobody
    /// must be found listening for it: `wake::Listener::in_doubt`).
    fn finish(&mut self, w: &impl Waiter, waited: Waited) -> Step {
        let busy = match std::mem::replace(&mut self.how, How::Ended) {
            How::Poll { busy, .. } => busy,
            How::Queue(q, mut ear) => {
                if matches!(waited, Waited::Failed(_)) {
                    ear.in_doubt();
                }
                q.busy
            }
            How::Ended => false,
        };
        if busy {
            let took = self.started.elapsed();
            let timed_out = matches!(waited, Waited::TimedOut);
            w.meter().wait_ended(took, timed_out);
        }
        Step::Done(waited, busy)
    }
}

/// One step of the wait on a route that keeps no queue to be woken from (a Redlock
/// quorum): a jittered pause (`due`), then a try, until the deadline. Redis trouble is
/// waited out until then too.
fn poll_step(w: &impl Waiter, backoff: &mut Backoff, due: &mut bool, deadline: Instant) -> Next {
    loop {
        if std::mem::take(due) {
            return match backoff.pause_until(deadline) {
                Some(at) => Next::Pause(at),
                None => Next::Done(Waited::TimedOut),
            };
        }
        *due = true;
        let sent = Boot::now();
        match w.try_poll(deadline) {
            Ok(Try::Acquired(fence)) => {
                if let Some(until) = clock::taken(sent, w.lease()) {
                    return Next::Done(Waited::Got(fence, until));
                }
                // Too late to use: it goes, and the polling goes on.
                w.abandon();
            }
            Ok(Try::Busy { .. }) => {}
            Ok(Try::Unsure) if Instant::now() >= deadline => {
                return Next::Done(Waited::Failed(unsure(w.route().node().addr())))
            }
            Ok(Try::Unsure) => {}
            Err(e) if Instant::now() >= deadline => return Next::Done(Waited::Failed(e)),
            Err(_) => {}
        }
    }
}
