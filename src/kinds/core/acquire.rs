//! The way in, for every kind: the parts are taken in order, one try each. A part
//! found busy ends the round: the parts taken in it are given back first, so that an
//! object never waits while it holds anything (two MultiLocks never wait on each other
//! in a circle), and then it waits for that part (`waiting::Waiting`, which queues and
//! listens until the part is handed over), and the next round tries the others. A
//! `Lock` and a `Semaphore` have one part: a try, then the wait. The rounds are steps
//! (`Rounds`), which `acquire` drives, blocking.
//!
//! Every acquisition comes with a bound on when its lease ends, on this process's
//! clock (`clock::lease_bound`, counted from before the try was sent): a hold whose
//! reply came after that (a paused process) is stale, no acquisition.

use crate::clock::{self, Boot, Until};
use crate::error::{LockError, Result};
use crate::hold::table::Part;
use crate::hold::table::{Hold, Owner, Renewal};
use crate::kinds::core::steps::{Step, Waiting};
use crate::kinds::core::wait::PartWait;
use crate::kinds::core::waiting::{self, Fences, Numbers, Try, Waited, Woken};
use crate::kinds::core::{Holder, Kind, PerPart};
use crate::stats::{self, Counter};
use crate::terms::Durable;
use crate::token::Token;
use crate::topology::landed::Landed;
use std::time::{Duration, Instant};

/// What a round took of one part: its fencing tokens, and when its lease ends at the
/// earliest.
type Taken = (Fences, Until);

/// How much longer than `durable_timeout` a durable check of what `got` took may wait
/// for replicas that are online but slow: until the wait's `deadline` (none without
/// a wait), and no more than half of what the lease has left after the first wait,
/// so that a hold granted late still has the other half.
fn ride_patience(got: &[Option<Taken>], d: &Durable, deadline: Option<Instant>) -> Duration {
    let Some(deadline) = deadline else { return Duration::ZERO };
    let waiting = deadline.saturating_duration_since(Instant::now());
    match got.iter().flatten().filter_map(|(_, u)| *u).min() {
        Some(until) => waiting.min(until.left().saturating_sub(d.timeout) / 2),
        None => waiting,
    }
}

/// An acquisition's rounds, as steps (`Holder::begin`, then `Holder::advance` and,
/// after a `RoundStep::Listen`, `Holder::heard`, until it is done): `acquire` drives
/// them blocking; nothing in them blocks but the commands they send.
pub(crate) struct Rounds {
    start: Instant,
    deadline: Instant,
    token: Token,
    wait: bool,
    /// What this round took of each part.
    got: PerPart<Option<Taken>>,
    waited: bool,
    /// Why the last durable grant was undone: a wait that ends says so, not "busy".
    undone: Option<LockError>,
    /// The part being waited for.
    part: Option<OnePart>,
}

impl Rounds {
    /// The subscriber its wait listens on, while it does (`RoundStep::Listen`).
    pub(crate) fn ear(&mut self) -> Option<&mut crate::net::wake::Listener> {
        self.part.as_mut().and_then(|p| p.waiting.ear())
    }
}

/// The wait for one part (`Rounds::part`).
struct OnePart {
    i: usize,
    /// The connection the wait started on: a grant heard after it changed (a
    /// reconnect: a failover, a node back from its files) may come from a node that
    /// no longer masters the key, so the hold is checked where it lives now.
    before: Option<Option<u64>>,
    /// Its first try may find the hold this waiter's already.
    may_hold: bool,
    waiting: Waiting,
}

/// What an acquisition does next.
pub(crate) enum RoundStep {
    /// It ended: the token, `None` when busy at the deadline (or at once, not waiting).
    Done(Result<Option<Token>>),
    /// It goes on (`Holder::advance`) at this instant.
    Pause(Instant),
    /// It listens on its wait's subscriber until `until`, then hands
    /// what came to `Holder::heard` (see `waiting::Step::Listen`).
    Listen { until: Instant, exact: bool },
}

impl<K: Kind> Holder<K> {
    /// The one way in for every acquisition, which started at `start`: `token`
    /// (`chosen`: the caller's, which another holder may use too) with one try on each
    /// part, or (`wait`) until the deadline. `Ok(None)` when busy then.
    pub fn acquire(
        &mut self,
        start: Instant,
        token: Token,
        chosen: bool,
        wait: bool,
    ) -> Result<Option<Token>> {
        let mut r = self.begin(start, token, chosen, wait);
        let mut step = self.advance(&mut r);
        loop {
            step = match step {
                RoundStep::Done(done) => return done,
                RoundStep::Pause(at) => {
                    std::thread::sleep(at.saturating_duration_since(Instant::now()));
                    self.advance(&mut r)
                }
                RoundStep::Listen { mut until, exact } => {
                    let woken = match r.part.as_mut().and_then(|p| p.waiting.ear()) {
                        Some(ear) => waiting::listen(ear, &r.token, &mut until),
                        None => Woken::Broken,
                    };
                    self.heard(&mut r, woken, exact)
                }
            };
        }
    }

    /// An acquisition's rounds (`acquire` for the arguments), not started yet.
    pub(crate) fn begin(
        &mut self,
        start: Instant,
        token: Token,
        chosen: bool,
        wait: bool,
    ) -> Rounds {
        self.c.caller_token = chosen;
        if self.c.owner_info {
            self.c.record = crate::owner::record();
        }
        Rounds {
            start,
            deadline: self.c.terms.deadline(start),
            token,
            wait,
            got: PerPart::new(self.parts.len(), |_| None),
            waited: false,
            undone: None,
            part: None,
        }
    }

    /// Ends `r` before it is done (an event loop's wait cancelled, or its object
    /// gone): its wait leaves the queue, and what it took is given back.
    pub(crate) fn cancel_rounds(&mut self, r: &mut Rounds) {
        if let Some(mut p) = r.part.take() {
            p.waiting.cancel(&PartWait { holder: self, part: p.i, token: &r.token });
        }
        self.give_back(&r.token, &mut r.got);
    }

    /// The next step of `r`: its wait's, or the next round's tries.
    pub(crate) fn advance(&mut self, r: &mut Rounds) -> RoundStep {
        loop {
            if let Some(p) = r.part.as_mut() {
                let step =
                    p.waiting.advance(&PartWait { holder: self, part: p.i, token: &r.token });
                if let Some(next) = self.waited(r, step) {
                    return next;
                }
                continue;
            }
            if let Some(done) = self.round(r) {
                return self.done(r, done);
            }
        }
    }

    /// What listening brought, after a `RoundStep::Listen`: the next step.
    pub(crate) fn heard(&mut self, r: &mut Rounds, woken: Woken, exact: bool) -> RoundStep {
        let Some(p) = r.part.as_mut() else { return self.advance(r) };
        let step =
            p.waiting.heard(&PartWait { holder: self, part: p.i, token: &r.token }, woken, exact);
        match self.waited(r, step) {
            Some(next) => next,
            None => self.advance(r),
        }
    }

    /// The end of `r` with `done`: a wait that ends busy after a durable grant was
    /// undone says why, not "busy". An error is counted under the object's name.
    fn done(&self, r: &mut Rounds, done: Result<Option<Token>>) -> RoundStep {
        RoundStep::Done(match done {
            Ok(None) => self.missed(r.undone.take().map_or(Ok(None), Err)),
            Err(e) => self.missed(Err(e)),
            taken => taken,
        })
    }

    /// An acquisition that ends without the hold, told to the object's meter (one
    /// that took it is told by `acquired`).
    #[cold]
    fn missed(&self, done: Result<Option<Token>>) -> Result<Option<Token>> {
        self.c.meter.missed(self.c.what, &self.c.name, done.as_ref().err());
        done
    }

    /// A step of the part's wait: passed on while it goes on; at its end, the part
    /// taken (`None`: the next round), or the acquisition's end.
    fn waited(&mut self, r: &mut Rounds, step: Step) -> Option<RoundStep> {
        let (outcome, was_busy) = match step {
            Step::Pause(at) => return Some(RoundStep::Pause(at)),
            Step::Listen { until, exact } => return Some(RoundStep::Listen { until, exact }),
            Step::Done(outcome, was_busy) => (outcome, was_busy),
        };
        let p = r.part.take()?;
        r.waited = true;
        self.kind.contended(was_busy, Instant::now());
        match outcome {
            Waited::Got(fences, until) => {
                let moved =
                    p.before.is_some_and(|b| b.is_none() || b != self.parts[p.i].route().serial());
                // Durable grants check every hold anyway (`confirm`).
                if (moved || p.may_hold) && self.c.terms.durable.is_none() {
                    match self.still_held(p.i, &r.token) {
                        Ok(true) => {}
                        // Not held where the key lives now: the wait goes on.
                        Ok(false) if Instant::now() >= r.deadline => {
                            return Some(self.done(r, Ok(None)))
                        }
                        Ok(false) => return None,
                        Err(e) => {
                            let token = std::mem::take(&mut r.token);
                            let e = self.maybe_taken(token, e);
                            return Some(self.done(r, Err(e)));
                        }
                    }
                }
                r.got[p.i] = Some((fences, until));
                None
            }
            Waited::TimedOut => Some(self.done(r, Ok(None))),
            Waited::Failed(e) => {
                let token = std::mem::take(&mut r.token);
                let e = e.after_waiting(r.start.elapsed());
                let e = self.maybe_taken(token, e);
                Some(self.done(r, Err(e)))
            }
        }
    }

    /// One round of `r`: a try on each part not taken yet, in order. `Some` when the
    /// acquisition ends; `None` when it goes on (a wait for the part found busy, now in
    /// `r.part`, or the next round).
    fn round(&mut self, r: &mut Rounds) -> Option<Result<Option<Token>>> {
        let (start, deadline, wait) = (r.start, r.deadline, r.wait);
        // The part found busy: whether a try found it so, and whether that try took
        // it too late to be used (the wait may find it this waiter's already).
        let mut busy: Option<(usize, bool, bool)> = None;
        for i in 0..self.parts.len() {
            if r.got[i].is_some() {
                continue;
            }
            let part = &self.parts[i];
            // Contended lately: the wait's first try, which queues, is the first try.
            if wait && !part.route().lease_only() && self.kind.straight_to_wait(&self.c, start) {
                busy = Some((i, false, false));
                break;
            }
            // Redis trouble on the first try is reported at once, as without a wait,
            // but for a passing state (a server loading its data, a failover: the
            // topology says which), waited out, here for every kind. The lease is
            // counted from before the try was sent.
            let sent = Boot::now();
            match self.kind.try_first(&self.c, part, &r.token) {
                Ok(Try::Acquired(fences)) => {
                    if let Some(until) = clock::taken(sent, self.c.terms.lease) {
                        r.got[i] = Some((fences, until));
                        continue;
                    }
                    // Its reply came after the lease may have ended: no acquisition.
                    if !wait || Instant::now() >= deadline {
                        self.abandon(i, &r.token);
                        self.give_back(&r.token, &mut r.got);
                        return Some(Ok(None));
                    }
                    busy = Some((i, true, true));
                }
                Ok(Try::Busy { .. }) => busy = Some((i, true, false)),
                // A lost reply, and the key holds the caller's token: not known whose.
                Ok(Try::Unsure) => {
                    let e = waiting::unsure(part.route().node().addr());
                    return Some(Err(self.fail(r, e)));
                }
                // Not found busy: the wait's first try is the next. A try sent before a
                // failover cut it off may have taken it: the wait settles that.
                Err(e) if wait && e.is_passing() && Instant::now() < deadline => {
                    busy = Some((i, false, e.sent()))
                }
                Err(e) => return Some(Err(self.fail(r, e))),
            }
            break;
        }
        let Some((i, tried, may_hold)) = busy else { return self.all_taken(r) };
        self.give_back(&r.token, &mut r.got);
        if !wait || (!may_hold && Instant::now() >= deadline) {
            return Some(Ok(None));
        }
        let route = self.parts[i].route();
        let before = (!route.lease_only()).then(|| route.serial());
        let waiting = Waiting::start(
            &PartWait { holder: self, part: i, token: &r.token },
            deadline,
            may_hold,
            tried,
        );
        r.part = Some(OnePart { i, before, may_hold, waiting });
        None
    }

    /// Every part taken in this round: a durable grant's check, then the acquisition,
    /// unless the holds came too late to be used. `None`: the next round.
    fn all_taken(&mut self, r: &mut Rounds) -> Option<Result<Option<Token>>> {
        let (deadline, wait) = (r.deadline, r.wait);
        if !r.waited {
            self.kind.contended(false, r.start);
        }
        let durable = self.c.terms.durable;
        if let Some(d) = &durable {
            let patience = ride_patience(&r.got, d, wait.then_some(deadline));
            match self.confirm(&r.token, self.c.terms.ttl_arg.as_bytes(), d, false, patience) {
                Ok(Landed::Yes) => {}
                // Undone, and the wait goes on while it lasts.
                why @ (Ok(_) | Err(LockError::NotDurable { .. })) => {
                    self.give_back(&r.token, &mut r.got);
                    match why {
                        Err(e) => r.undone = Some(e),
                        // Replicas online but slow: a wait that ends now ends as one
                        // for a busy lock (false), as the set is whole.
                        Ok(Landed::Slow(_)) => r.undone = None,
                        Ok(_) => {}
                    }
                    return (!wait || Instant::now() >= deadline).then_some(Ok(None));
                }
                // So too when the check was refused whole for a passing state
                // (NOREPLICAS: the master lost its replicas since the try).
                Err(e) if e.is_passing() && !e.sent() => {
                    self.give_back(&r.token, &mut r.got);
                    r.undone = Some(e);
                    return (!wait || Instant::now() >= deadline).then_some(Ok(None));
                }
                Err(e) => return Some(Err(self.fail(r, e))),
            }
        }
        // One part was found fresh as it was taken (unless a durable check took time
        // since); of several, the first ones taken may have run out since.
        if let (None, [Some((fences, until))]) = (&durable, &mut r.got[..]) {
            let (fences, until) = (fences.take(), *until);
            let token = std::mem::take(&mut r.token);
            return Some(Ok(Some(self.acquired(token, fences, until))));
        }
        let until = r.got.iter().flatten().filter_map(|(_, u)| *u).min();
        if !clock::is_stale(until) {
            let fences: Fences = r
                .got
                .iter_mut()
                .map(|t| t.take().and_then(|(f, _)| f))
                .collect::<Option<Vec<Numbers>>>()
                .map(|f| Numbers::of(f.iter().flat_map(|n| n.as_slice()).copied().collect()));
            let token = std::mem::take(&mut r.token);
            return Some(Ok(Some(self.acquired(token, fences, until))));
        }
        // Taken too late to be used (a paused process): given back, and tried again.
        stats::note(Counter::Stale);
        self.give_back(&r.token, &mut r.got);
        (!wait || Instant::now() >= deadline).then_some(Ok(None))
    }

    /// Ends `r` with Redis trouble `e`: what this round took is given back, and the
    /// error says whether the token may hold a key (`maybe_taken`).
    fn fail(&mut self, r: &mut Rounds, e: LockError) -> LockError {
        self.give_back(&r.token, &mut r.got);
        let token = std::mem::take(&mut r.token);
        self.maybe_taken(token, e)
    }

    /// Whether `token` holds part `i` where its key lives now: its token-checked
    /// renewal (`Kind::held_as`), which also starts its lease again.
    fn still_held(&self, i: usize, token: &[u8]) -> Result<bool> {
        let held = self.kind.held_as(&self.parts[i]);
        let lease = self.c.terms.lease.unwrap_or(Duration::ZERO);
        let renew = held.renew(token, self.c.terms.ttl_arg.as_bytes());
        Ok(held.route().renew(&renew.call(), lease)? == Landed::Yes)
    }

    /// Releases the parts of `got` (those taken in this round), before a wait starts.
    /// Errors are left to the lease.
    fn give_back(&mut self, token: &[u8], got: &mut [Option<Taken>]) {
        for (slot, part) in got.iter_mut().zip(self.parts.iter()) {
            if slot.take().is_some() {
                let part = part.clone();
                let _ = self.kind.release(&self.c, &part, token, false);
            }
        }
    }

    /// Releases part `i`'s hold of `token` taken too late to be used (stale), if it
    /// still has it; errors are left to the lease.
    pub(super) fn abandon(&self, i: usize, token: &[u8]) {
        let part = &self.parts[i];
        if let Some(release) = self.kind.held_as(part).release(token) {
            let _ = part.route().fire(&release.call(), None);
        }
    }

    /// Records an acquisition whose lease ends at `until` at the earliest: in the
    /// object, and in the table of holds, one hold a part (renewed by the watchdog with
    /// `auto_renew`, on a schedule counted from when the lease began, not from now).
    pub(crate) fn acquired(&mut self, token: Token, fences: Fences, until: Until) -> Token {
        self.c.fences = if self.c.fencing { fences } else { None };
        // One reading of the clock for the kind and the meter.
        let at = crate::clock::mono_nanos();
        self.kind.acquiring(&mut self.c, &self.parts, &token, at);
        self.c.meter.acquired(self.c.what, &self.c.name, at);
        self.record(&token, until, |terms| Renewal::for_terms(terms, until));
        token
    }

    /// Makes `token` this object's hold on every part, in the table too; a hold the
    /// object had before is over (its keys were free for this one to be taken).
    fn record(
        &mut self,
        token: &Token,
        until: Until,
        renew: impl Fn(&crate::terms::Terms) -> Option<Box<Renewal>>,
    ) {
        let owner = Owner::current();
        for (claim, part) in self.claims.iter_mut().zip(&self.parts) {
            claim.record(Hold {
                owner,
                part: self.kind.held_as(part),
                token: token.clone(),
                renew: renew(&self.c.terms),
                until,
                lost: None,
                auto_release: self.c.terms.auto_release,
                orphan: false,
                meter: self.c.meter.id(),
            });
        }
    }

    /// After a failed try the hold may still have been taken (a lost reply): the token
    /// is kept, unrenewed, so that a later release (or the object's end) clears it;
    /// otherwise it expires with its lease. A failure while connecting sent nothing, so
    /// there is nothing to clear (and no reason to connect again when the object goes
    /// away).
    pub(super) fn maybe_taken(&mut self, token: Token, e: LockError) -> LockError {
        if self.claims[0].token.is_none()
            && !matches!(
                e,
                LockError::Connection { sent: false, .. } | LockError::Passing { sent: false, .. }
            )
        {
            // Not known to be held: it promises nothing (a bound already past), and a
            // fencing token, if asked for, is taken then, checked.
            self.record(&token, Some(Boot::now()), |_| None);
            self.c.fences = None;
            self.kind.maybe_taken(&mut self.c);
        }
        match e {
            LockError::Connection { addr, cause, sent: true } => LockError::Connection {
                addr,
                cause: format!("{cause}; the {} may have been taken: {} clears it, or it expires after lockOut", self.c.what, K::RELEASE),
                sent: true,
            },
            other => other,
        }
    }
}
