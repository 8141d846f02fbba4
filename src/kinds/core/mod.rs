//! The hold core: what every kind of hold does, written once. Like tokio's
//! `Mutex`, `RwLock` and `Semaphore` over one `batch_semaphore`, or Redisson's
//! `RedissonBaseLock` under each lock: a `Lock`, a `Semaphore` and a `MultiLock` are
//! each a `Holder` of their `Kind`, which brings only its scripts and what their
//! replies mean.
//!
//! - `acquire`: the way in: a first try on each part, the wait on a busy one
//!   (`wait`, the kind's side of `waiting`), a try taken too late (stale), a
//!   lost reply, and recording what was taken in the table of holds (renewed by the
//!   watchdog with `auto_renew`);
//! - `waiting`: the one waiting mechanism every kind waits through (a queue entry, a
//!   private wake channel, a timer at the holder's lease, polling when pub/sub is
//!   refused), and what a try found (`Try`, `Fences`): the core's only caller, kept
//!   apart from `acquire` because it knows no kind (a kind's scripts reach it through
//!   `waiting::Waiter`, which `wait` implements once); `entry` writes the queue entries
//!   and reads the messages that answer them (the scripts' side is
//!   `kinds/lib/entry.lua`); `backoff` the jittered, deadline-bound sleep of polling;
//! - `durable`: a hold that counts only once replicas acknowledged it (`durable`);
//! - here: the way out: a release that waits for its answer, one that does not
//!   (`synchronized()`'s end while the lease surely lasts, an object's end, request
//!   end), `extendLock()`, and what the object says of its hold.

mod acquire;
pub(crate) mod backoff;
mod common;
mod durable;
pub mod entry;
mod kind;
mod mailbox;
mod pending;
mod queued;
mod steps;
mod wait;
pub(crate) mod waiting;

pub(crate) use common::{Common, PerPart};
pub(crate) use kind::{Attempt, Kind};

use crate::clock::Boot;
use crate::error::{LockError, Result};
use crate::hold::claim::Claim;
use crate::hold::table::{self, Hold, Part};
use crate::net::wire::Watch;
use crate::stats::Counter;
use crate::terms;
use crate::token::Token;
use crate::topology::landed::Landed;
use std::sync::Arc;
use std::time::Duration;

/// The queue outlives the longest wait in it by this much, so a waiter's last look at
/// it (at its deadline) still finds it.
pub(crate) const QUEUE_SLACK: Duration = Duration::from_secs(5);

/// How an acquisition's rounds are driven: blocking until they end, or started and
/// left for an event loop to step (`pending`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Drive {
    Block,
    Loop,
}

/// An object of a kind of hold: its parts, its claim on each (one hold each in the
/// table), and the kind's own state.
pub(crate) struct Holder<K: Kind> {
    pub c: Common,
    pub parts: PerPart<Arc<K::Part>>,
    /// One claim per part, in the parts' order.
    pub claims: PerPart<Claim>,
    pub kind: K,
    /// An acquisition an event loop drives, while it goes on (`pending`).
    pub(crate) pending: Option<Box<pending::Pending>>,
}

impl<K: Kind> Holder<K> {
    /// An object of `kind` on one part.
    pub fn one(c: Common, part: Arc<K::Part>, kind: K) -> Self {
        Holder {
            claims: PerPart::One([Claim::default()]),
            c,
            parts: PerPart::One([part]),
            kind,
            pending: None,
        }
    }

    /// An object of `kind` on `parts` (at least one).
    pub fn new(c: Common, parts: Vec<Arc<K::Part>>, kind: K) -> Self {
        let claims = PerPart::new(parts.len(), |_| Claim::default());
        Holder { claims, c, parts: PerPart::Many(parts), kind, pending: None }
    }

    /// An acquisition (`acquire`), driven as `drive` says: with `Drive::Loop`,
    /// `Ok(None)` with `self.pending` set means it goes on (`poll_pending`).
    pub fn take(
        &mut self,
        drive: Drive,
        start: std::time::Instant,
        token: Token,
        chosen: bool,
        wait: bool,
    ) -> Result<Option<Token>> {
        self.refuse_pending(&token, chosen)?;
        match drive {
            Drive::Block => self.acquire(start, token, chosen, wait),
            Drive::Loop => self.start_pending(start, token, chosen, wait),
        }
    }

    /// Whether its parts live on a Redlock quorum, whose safety rests on the lease
    /// alone (every part does, or none).
    pub fn lease_only(&self) -> bool {
        self.parts[0].route().lease_only()
    }

    /// The token it last acquired, while it believes it holds it.
    pub fn token(&self) -> Option<&[u8]> {
        self.claims[0].token.as_deref()
    }

    /// `token`, or this object's by default. No token is empty: an empty one (the
    /// scripts' sign of a forced release, and a read lock's value) owns nothing.
    pub fn pick(&self, token: Option<&[u8]>) -> Option<Token> {
        match token {
            Some([]) => None,
            Some(t) => Some(t.to_vec()),
            None => self.claims[0].token.clone(),
        }
    }

    /// Whether the watchdog found any part of this object's hold `token` taken from it.
    pub fn lost(&self, token: &[u8]) -> bool {
        self.claims.iter().any(|c| c.lost(token))
    }

    /// `token` (default: this object's), unless the watchdog found it taken from this
    /// object: then there is nothing to ask Redis (`None`).
    pub fn live(&self, token: Option<&[u8]>) -> Option<Token> {
        self.pick(token).filter(|t| !self.lost(t))
    }

    /// How long this object's hold surely lasts from now, as this process counts it:
    /// the shortest of its parts' (`Claim::remaining`); `None` when no lease ends.
    pub fn remaining(&self) -> Option<Duration> {
        self.claims.iter().map(Claim::remaining).fold(None, |least, r| match (least, r) {
            (None, r) => r,
            (l, None) => l,
            (Some(a), Some(b)) => Some(a.min(b)),
        })
    }

    /// How many keys the object holds in all.
    fn keys(&self) -> u64 {
        self.parts.iter().map(|p| self.kind.keys_in(p)).sum()
    }

    /// Releases `token` (default: this object's) on every part, waiting for the
    /// answers. True only
    /// when the token held every key, and none was found lost; keys it still held are
    /// released either way. The holds leave the table first, in one step, so that no
    /// renewal races the release; they come back, unrenewed, if it fails.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.pick(token) else { return Ok(false) };
        let mut own = false;
        let claims = &mut self.claims;
        let mut holds = PerPart::new(claims.len(), |i| {
            let (mine, hold) = claims[i].take_for_release(&token);
            own |= mine;
            hold
        });
        let lost = holds.iter().flatten().any(|h| h.lost.is_some());
        let mut held = 0;
        let mut failed = None;
        if !lost || self.kind.releases_lost() {
            for part in &self.parts {
                match self.kind.release(&self.c, part, &token, own) {
                    Ok(n) => held += n,
                    Err(e) => failed = failed.or(Some(e)),
                }
            }
        }
        if let Some(e) = failed {
            let e = unconfirmed(e, holds.iter().flatten().next(), self.c.what, &self.c.name);
            if matches!(e, LockError::Lost { .. }) {
                self.c.meter.note(Counter::Lost);
            } else {
                self.c.meter.failed(&e);
            }
            // Tried again by the object's end or request end; otherwise the lease ends them.
            for (claim, hold) in self.claims.iter_mut().zip(holds.iter_mut()) {
                claim.put_back(hold.take());
            }
            return Err(e);
        }
        // Released now, or already gone: either way the hold is over (this process's
        // hold of the token, when it was another object's).
        for (claim, part) in self.claims.iter_mut().zip(&self.parts) {
            claim.released(own, part.key(), &token);
        }
        self.c.meter.released(held > 0, own);
        Ok(!lost && held == self.keys())
    }

    /// Releases this object's hold `token` on every part without waiting for the
    /// answers (each is checked when it is read: `Watch`), keeping the table right as
    /// `release` does. A hold the watchdog found lost sends nothing.
    pub fn release_unawaited(&mut self, token: &[u8]) -> Result<()> {
        let by = self.claims.iter().filter_map(|c| c.until().flatten()).min();
        let claims = &mut self.claims;
        let mut holds = PerPart::new(claims.len(), |i| claims[i].take_for_release(token).1);
        let lost = holds.iter().flatten().any(|h| h.lost.is_some());
        let send = !lost || self.kind.releases_lost();
        if send {
            for part in &self.parts {
                // The release answers how many of the part's keys it held.
                let watch = Watch {
                    what: self.c.what,
                    name: self.c.name.clone(),
                    at_least: self.kind.keys_in(part) as i64,
                    by,
                };
                if let Err(e) = self.kind.fire_release(&self.c, part, token, watch) {
                    self.c.meter.failed(&e);
                    for (claim, hold) in self.claims.iter_mut().zip(holds.iter_mut()) {
                        claim.put_back(hold.take());
                    }
                    return Err(e);
                }
            }
        }
        self.c.meter.released(send, true);
        for claim in self.claims.iter_mut() {
            claim.clear();
        }
        Ok(())
    }

    /// Whether `synchronized()`'s release of `token` may go unawaited: every part's
    /// lease surely lasts (by more than `read_timeout`, as this process counts) and no
    /// server closed the connection it was taken on; never on a quorum, which needs a
    /// majority's answer anyway.
    fn surely_held(&self, token: &[u8]) -> bool {
        let margin = self.c.terms.read_timeout;
        self.c.serials.len() == self.parts.len()
            && !self.lease_only()
            && self.parts.iter().zip(&self.c.serials).all(|(p, s)| p.route().intact(*s))
            && self.claims.iter().all(|c| c.surely_held(token, margin))
    }

    /// Releases `token` after the work it protected (`synchronized()`). An error when
    /// the token was still this object's but no longer held what it held: the work
    /// outlived the hold. A token the work released itself is no error. While the
    /// lease surely lasts, the release is sent unawaited: it cannot find the hold
    /// lost then (`surely_held`).
    pub fn finish(&mut self, token: &[u8]) -> Result<()> {
        if self.surely_held(token) {
            return self.release_unawaited(token);
        }
        let ours = self.claims[0].is(token);
        let lost_ago = self.claims.iter().filter_map(|c| c.lost_ago(token)).max();
        let released = self.release(Some(token))?;
        if released || !ours {
            return Ok(());
        }
        if lost_ago.is_none() {
            // Found by the release itself: the watchdog had not counted it.
            self.c.meter.note(Counter::Lost);
        }
        Err(LockError::lost(self.c.what, &self.c.name, lost_ago))
    }

    /// Releases `token` after work that did not return normally (`synchronized()`):
    /// this object's hold without waiting for the answer, errors ignored (the lease
    /// ends the hold then).
    pub fn release_unseen(&mut self, token: &[u8]) {
        if self.claims[0].own_for(token).is_some() && !self.lease_only() {
            let _ = self.release_unawaited(token);
        } else {
            let _ = self.release(Some(token));
        }
    }

    /// Remembers the connections the hold was taken (or extended) on, for `finish`.
    pub fn note_serials(&mut self) {
        self.c.serials = self.parts.iter().map(|p| p.route().serial()).collect();
    }

    /// Sets the lease of `token`'s hold (default: this object's) to `ms` (`NO_EXPIRY`:
    /// none) on every part, each with its kind's renewal (`Kind::renew`): true when
    /// every part still held it. A part whose renewal is not confirmed (a quorum's ran
    /// out of time) ends it: false, not known to be lost either.
    ///
    /// An extension that fails (an error, a part not confirmed, a durable check
    /// refused) may have set the new lease on some part: the hold keeps the
    /// lesser of its bound and the new lease, since a shorter one may now be the
    /// server's.
    pub fn extend(&mut self, token: Option<&[u8]>, ms: u64) -> Result<bool> {
        let Some(token) = self.live(token) else { return Ok(false) };
        let lease = (ms != terms::NO_EXPIRY).then(|| Duration::from_millis(ms));
        let sent = Boot::now();
        let mut reached = vec![false; self.parts.len()];
        let extended = self.extend_parts(&token, ms, &mut reached);
        let own = self.claims[0].own_for(&token);
        // Other objects of this process holding the same token follow the server: a
        // shorter lease bounds them on the parts it may have reached (a part whose
        // script refused changed nothing, unless a quorum's nodes answered apart); a
        // token found holding its one key no more holds it for them either.
        let mine: Vec<_> = self.claims.iter().filter_map(|c| c.own_for(&token)).collect();
        let gone = self.keys() == 1 && matches!(extended, Ok(Some(false)));
        let parts: Vec<&dyn Part> = self
            .parts
            .iter()
            .zip(&reached)
            .filter(|(_, r)| **r || gone)
            .map(|(p, _)| &**p as &dyn Part)
            .collect();
        table::follow(&parts, &token, &mine, lease, sent, gone);
        match extended {
            Ok(Some(done)) => {
                for claim in &self.claims {
                    Claim::renewed(claim.own_for(&token), done, lease, sent, self.c.meter.id());
                }
                if done && own.is_some() {
                    self.note_serials();
                }
                Ok(done)
            }
            failed => {
                if let Err(e) = &failed {
                    self.c.meter.failed(e);
                }
                // Even a failure to connect: on another part the renewal may have landed.
                for claim in &self.claims {
                    Claim::unconfirmed(claim.own_for(&token), lease, sent);
                }
                failed.map(|_| false)
            }
        }
    }

    /// `extend`'s renewals, then a durable hold's check: `Some(done)` when every part
    /// answered (`done`: each still held it), `None` when a part's renewal was not
    /// confirmed in time (a quorum). `reached[i]`: part `i` may have the new lease
    /// (renewed, or its answer not known); a part on one server whose script refused
    /// changed nothing.
    fn extend_parts(&self, token: &[u8], ms: u64, reached: &mut [bool]) -> Result<Option<bool>> {
        let own = self.claims[0].own_for(token).is_some();
        let ms_arg = ms.to_string();
        let mut done = true;
        for (part, reached) in self.parts.iter().zip(reached.iter_mut()) {
            *reached = true;
            match self.kind.renew(
                &self.c,
                part,
                token,
                ms_arg.as_bytes(),
                Duration::from_millis(ms),
                own,
            )? {
                Landed::Yes => {}
                Landed::Lost => {
                    done = false;
                    *reached = part.route().lease_only();
                }
                Landed::Unsure(_) | Landed::Slow(_) => return Ok(None),
            }
        }
        // A durable hold's extension counts once acknowledged.
        if let (true, Some(d)) = (done, &self.c.terms.durable) {
            done = self.confirm(token, ms_arg.as_bytes(), d, true, Duration::ZERO)? == Landed::Yes;
        }
        Ok(Some(done))
    }

    /// The object goes away: its hold, if any, is released unawaited (unless
    /// `auto_release` is off, or the object is a forked child's copy); holding nothing,
    /// what its kind still owes is done (`Kind::left`). Returns whether it held anything.
    pub fn end(&mut self) -> bool {
        self.cancel_pending();
        let auto = self.c.terms.auto_release;
        let ended: Vec<Hold> = self.claims.iter_mut().filter_map(|c| c.end(auto)).collect();
        for hold in &ended {
            release_hold(hold);
        }
        if ended.is_empty() {
            self.kind.left(&self.c, &self.parts);
        }
        !ended.is_empty()
    }
}

/// A release of `hold` (the `what` named `name`) that failed with `e`. When Redis
/// could not be reached (or answered with a passing state) after the hold's lease had
/// ended, as this process counts it, the holder is told its hold is lost
/// (`LockError::Lost`, which the caller counts): its lease no longer protected the
/// work, and nothing could be learned of who holds the key now. Otherwise `e` as it is.
fn unconfirmed(e: LockError, hold: Option<&Hold>, what: &'static str, name: &[u8]) -> LockError {
    let ended = hold.is_some_and(|h| h.lost.is_some() || h.until.is_some_and(|u| Boot::now() >= u));
    match e {
        LockError::Connection { ref cause, .. } | LockError::Passing { ref cause, .. } if ended => {
            LockError::Lost {
                what,
                key: String::from_utf8_lossy(name).into_owned(),
                seen: format!("its lease had ended, as this process counts, before the release, which could not reach Redis ({cause})"),
            }
        }
        other => other,
    }
}

/// Releases a hold left at its object's end or the request's, whatever its kind,
/// without waiting for the answer. Errors are ignored: a hold that cannot be released
/// now runs out with its lease.
fn release_hold(hold: &Hold) {
    if hold.lost.is_some() {
        return;
    }
    if let Some(release) = hold.part.release(&hold.token) {
        if hold.part.route().fire(&release.call(), None).is_ok() {
            hold.meter.note(Counter::Released);
        }
    }
}

/// Releases every hold the calling thread's request still has (request end).
pub fn release_all_held() {
    for hold in table::take_auto_released() {
        release_hold(&hold);
    }
}

/// The end of a handled request under a worker SAPI (see `table::end_handled_request`):
/// releases what was taken during it, as request end would.
pub fn release_handled_request_held() {
    for hold in table::end_handled_request() {
        release_hold(&hold);
    }
}
