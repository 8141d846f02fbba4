//! The way in, for every kind: the parts are taken in order, one try each. A part
//! found busy ends the round: the parts taken in it are given back first, so that an
//! object never waits while it holds anything (two MultiLocks never wait on each other
//! in a circle), and then it waits for that part (`waiting::wait`, which queues and
//! sleeps until the part is handed over), and the next round tries the others. A
//! `Lock` and a `Semaphore` have one part: a try, then the wait.
//!
//! Every acquisition comes with a bound on when its lease ends, on this process's
//! clock (`clock::lease_bound`, counted from before the try was sent): a hold whose
//! reply came after that (a paused process) is stale, no acquisition.

use crate::clock::{self, Boot, Until};
use crate::error::{LockError, Result};
use crate::hold::table::Part;
use crate::hold::table::{Hold, Owner, Renewal};
use crate::kinds::core::wait::PartWait;
use crate::kinds::core::waiting::{self, Fences, Numbers, Try, Waited};
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
        let mut undone = None;
        match self.acquire_rounds(start, token, chosen, wait, &mut undone) {
            // A wait that ends after a durable grant was undone says so, not "busy".
            Ok(None) => undone.map_or(Ok(None), Err),
            other => other,
        }
    }

    /// `acquire`'s rounds; `undone` keeps why the last durable grant was undone.
    fn acquire_rounds(
        &mut self,
        start: Instant,
        token: Token,
        chosen: bool,
        wait: bool,
        undone: &mut Option<LockError>,
    ) -> Result<Option<Token>> {
        let deadline = self.c.terms.deadline(start);
        self.c.caller_token = chosen;
        if self.c.owner_info {
            self.c.record = crate::owner::record();
        }
        let mut got: PerPart<Option<Taken>> = PerPart::new(self.parts.len(), |_| None);
        let mut waited = false;
        loop {
            // The part found busy: whether a try found it so, and whether that try took
            // it too late to be used (the wait may find it this waiter's already).
            let mut busy: Option<(usize, bool, bool)> = None;
            for i in 0..self.parts.len() {
                if got[i].is_some() {
                    continue;
                }
                let part = &self.parts[i];
                // Contended lately: the wait's first try, which queues, is the first try.
                if wait && !part.route().lease_only() && self.kind.straight_to_wait(&self.c, start)
                {
                    busy = Some((i, false, false));
                    break;
                }
                // Redis trouble on the first try is reported at once, as without a wait,
                // but for a passing state (a server loading its data, a failover: the
                // topology says which), waited out, here for every kind. The lease is
                // counted from before the try was sent.
                let sent = Boot::now();
                match self.kind.try_first(&self.c, part, &token) {
                    Ok(Try::Acquired(fences)) => {
                        if let Some(until) = clock::taken(sent, self.c.terms.lease) {
                            got[i] = Some((fences, until));
                            continue;
                        }
                        // Its reply came after the lease may have ended: no acquisition.
                        if !wait || Instant::now() >= deadline {
                            self.abandon(i, &token);
                            self.give_back(&token, &mut got);
                            return Ok(None);
                        }
                        busy = Some((i, true, true));
                    }
                    Ok(Try::Busy { .. }) => busy = Some((i, true, false)),
                    // A lost reply, and the key holds the caller's token: not known whose.
                    Ok(Try::Unsure) => {
                        let e = waiting::unsure(part.route().node().addr());
                        self.give_back(&token, &mut got);
                        return Err(self.maybe_taken(token, e));
                    }
                    // Not found busy: the wait's first try is the next. A try sent before a
                    // failover cut it off may have taken it: the wait settles that.
                    Err(e) if wait && e.is_passing() && Instant::now() < deadline => {
                        busy = Some((i, false, e.sent()))
                    }
                    Err(e) => {
                        self.give_back(&token, &mut got);
                        return Err(self.maybe_taken(token, e));
                    }
                }
                break;
            }
            let Some((i, tried, may_hold)) = busy else {
                if !waited {
                    self.kind.contended(false, start);
                }
                let durable = self.c.terms.durable;
                if let Some(d) = &durable {
                    let patience = ride_patience(&got, d, wait.then_some(deadline));
                    match self.confirm(&token, self.c.terms.ttl_arg.as_bytes(), d, false, patience)
                    {
                        Ok(Landed::Yes) => {}
                        // Undone, and the wait goes on while it lasts.
                        why @ (Ok(_) | Err(LockError::NotDurable { .. })) => {
                            self.give_back(&token, &mut got);
                            match why {
                                Err(e) => *undone = Some(e),
                                // Replicas online but slow: a wait that ends now ends as
                                // one for a busy lock (false), as the set is whole.
                                Ok(Landed::Slow(_)) => *undone = None,
                                Ok(_) => {}
                            }
                            if !wait || Instant::now() >= deadline {
                                return Ok(None);
                            }
                            continue;
                        }
                        // So too when the check was refused whole for a passing state
                        // (NOREPLICAS: the master lost its replicas since the try).
                        Err(e) if e.is_passing() && !e.sent() => {
                            self.give_back(&token, &mut got);
                            *undone = Some(e);
                            if !wait || Instant::now() >= deadline {
                                return Ok(None);
                            }
                            continue;
                        }
                        Err(e) => {
                            self.give_back(&token, &mut got);
                            return Err(self.maybe_taken(token, e));
                        }
                    }
                }
                // One part was found fresh as it was taken (unless a durable check took
                // time since); of several, the first ones taken may have run out since.
                if let (None, [Some((fences, until))]) = (&durable, &mut got[..]) {
                    let (fences, until) = (fences.take(), *until);
                    return Ok(Some(self.acquired(token, fences, until)));
                }
                let until = got.iter().flatten().filter_map(|(_, u)| *u).min();
                if !clock::is_stale(until) {
                    let fences: Fences = got
                        .iter_mut()
                        .map(|t| t.take().and_then(|(f, _)| f))
                        .collect::<Option<Vec<Numbers>>>()
                        .map(|f| {
                            Numbers::of(f.iter().flat_map(|n| n.as_slice()).copied().collect())
                        });
                    return Ok(Some(self.acquired(token, fences, until)));
                }
                // Taken too late to be used (a paused process): given back, and tried again.
                stats::note(Counter::Stale);
                self.give_back(&token, &mut got);
                if !wait || Instant::now() >= deadline {
                    return Ok(None);
                }
                continue;
            };
            self.give_back(&token, &mut got);
            if !wait || (!may_hold && Instant::now() >= deadline) {
                return Ok(None);
            }
            let route = self.parts[i].route();
            // The connection the wait starts on; a grant heard after it changed (a
            // reconnect: a failover, a node back from its files) may come from a node
            // that no longer masters the key, so the hold is checked where it lives now.
            let before = (!route.lease_only()).then(|| route.serial());
            let (outcome, was_busy) = waiting::wait(
                &PartWait { holder: self, part: i, token: &token },
                deadline,
                may_hold,
                tried,
            );
            waited = true;
            self.kind.contended(was_busy, Instant::now());
            match outcome {
                Waited::Got(fences, until) => {
                    let moved =
                        before.is_some_and(|b| b.is_none() || b != self.parts[i].route().serial());
                    // Durable grants check every hold anyway (`confirm`).
                    if (moved || may_hold) && self.c.terms.durable.is_none() {
                        match self.still_held(i, &token) {
                            Ok(true) => {}
                            // Not held where the key lives now: the wait goes on.
                            Ok(false) => {
                                if Instant::now() >= deadline {
                                    return Ok(None);
                                }
                                continue;
                            }
                            Err(e) => return Err(self.maybe_taken(token, e)),
                        }
                    }
                    got[i] = Some((fences, until));
                }
                Waited::TimedOut => return Ok(None),
                Waited::Failed(e) => {
                    return Err(self.maybe_taken(token, e.after_waiting(start.elapsed())))
                }
            }
        }
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
        let now = Instant::now();
        self.kind.acquiring(&mut self.c, &self.parts, &token, now);
        crate::stats::note(crate::stats::Counter::Acquired);
        self.record(&token, until, |terms| Renewal::for_terms(terms, until, now));
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
