//! An object's claim on its last hold: the token it took, and the hold's entry in the
//! table when this process made it. Recording a hold that is to be renewed starts the
//! process's watchdog, if it has none yet.

use crate::clock::Boot;
use crate::fork_wiped;
use crate::hold::table::{
    add, forget, mark_lost, orphan, remove, set_lease, status, Hold, HoldId, Status,
};
use crate::hold::watchdog;
use crate::token::Token;
use std::time::Duration;

/// An object's claim on its last hold: the token it took, and the hold's entry in
/// the table when this process made it (a forked child's copy of the object has the
/// token but no entry of its own: the hold is its parent's).
#[derive(Debug, Default)]
pub struct Claim {
    /// The token of the last hold, while the object believes it holds it.
    pub token: Option<Token>,
    entry: Option<(HoldId, u32)>,
}

impl Claim {
    /// The hold's entry, when this process made it.
    pub fn own(&self) -> Option<HoldId> {
        self.entry.filter(|&(_, pid)| pid == fork_wiped::pid()).map(|(id, _)| id)
    }

    /// Whether `token` is this object's.
    pub fn is(&self, token: &[u8]) -> bool {
        self.token.as_deref() == Some(token)
    }

    /// This process's entry for `token`, when it is this object's.
    pub fn own_for(&self, token: &[u8]) -> Option<HoldId> {
        self.own().filter(|_| self.is(token))
    }

    /// Whether the watchdog found `token`, this object's, taken from it.
    pub fn lost(&self, token: &[u8]) -> bool {
        self.own_for(token).is_some_and(|id| status(id) == Status::Lost)
    }

    /// How long ago the watchdog found `token`, this object's, taken from it.
    pub fn lost_ago(&self, token: &[u8]) -> Option<Duration> {
        self.own_for(token).and_then(crate::hold::table::lost_at).map(|at| at.elapsed())
    }

    /// Whether `token` is this object's hold and surely still held for more than
    /// `margin`, as far as this process knows (`Hold::until`: from the acquisition, the
    /// watchdog's last confirmed renewal, or the last extension). Then a release need
    /// not wait for Redis's answer to learn whether the hold lasted
    /// (`synchronized()`'s unawaited release).
    pub fn surely_held(&self, token: &[u8], margin: Duration) -> bool {
        let Some(id) = self.own_for(token) else { return false };
        match crate::hold::table::held_until(id) {
            Some(until) => until.is_none_or(|until| until > Boot::now().plus(margin)),
            None => false,
        }
    }

    /// Until when this object's hold surely lasts (`Hold::until`): `None` for no hold
    /// (or a lost one), `Some(None)` for a lease that never ends.
    pub fn until(&self) -> Option<Option<Boot>> {
        crate::hold::table::held_until(self.own()?)
    }

    /// How long this object's hold surely lasts from now, as this process counts it
    /// (see `surely_held`): `None` when its lease never ends; zero when it holds
    /// nothing, its hold was found lost, or the bound has passed.
    pub fn remaining(&self) -> Option<Duration> {
        let Some(id) = self.own() else { return Some(Duration::ZERO) };
        match crate::hold::table::held_until(id) {
            Some(Some(until)) => Some(until.left()),
            Some(None) => None,
            None => Some(Duration::ZERO),
        }
    }

    /// Records a new hold (the one before it is over: forgotten, without Redis).
    pub fn record(&mut self, hold: Hold) {
        if hold.renew.is_some() {
            // Built here, on the request's thread, not first by the watchdog: a fork
            // while the watchdog was building it would leave the child's copy stuck.
            hold.part.renew(&hold.token, b"0").call().prepare();
        }
        self.forget();
        self.token = Some(hold.token.clone());
        self.entry = Some((add(hold, watchdog::spawn), fork_wiped::pid()));
    }

    /// Drops the entry from the table, without touching Redis.
    pub fn forget(&mut self) {
        if let Some(id) = self.own() {
            remove(id);
        }
        self.entry = None;
    }

    /// Before releasing `token`: takes this object's hold of it out of the table, in
    /// one step, so that no renewal races the release. Returns whether the token is
    /// this object's, and the hold when this process made it.
    pub fn take_for_release(&mut self, token: &[u8]) -> (bool, Option<Hold>) {
        if !self.is(token) {
            return (false, None);
        }
        let hold = self.own().and_then(remove);
        self.entry = None;
        (true, hold)
    }

    /// After a release failed: the hold goes back in the table, unrenewed, so that the
    /// object's end or request end tries again; otherwise its lease runs out.
    pub fn put_back(&mut self, hold: Option<Hold>) {
        if let Some(mut hold) = hold {
            hold.renew = None;
            self.entry = Some((add(hold, watchdog::spawn), fork_wiped::pid()));
        }
    }

    /// After a release of `token` went through (or found nothing to release): the
    /// hold is over for this object, or for this process when it was another's (on
    /// the lock key `lock`).
    pub fn released(&mut self, own: bool, lock: &[u8], token: &[u8]) {
        if own {
            self.clear();
        } else {
            forget(lock, token);
        }
    }

    /// The object's hold is over: forgotten, without Redis, and its token too.
    pub fn clear(&mut self) {
        self.forget();
        self.token = None;
    }

    /// After a renewal of `own` (see `own_for`) sent at `sent` with `lease` (None: no
    /// expiry): the hold lasts until the new lease ends, and the watchdog goes on with
    /// it; or the hold is known lost. A renewal is counted under `name`.
    pub fn renewed(
        own: Option<HoldId>,
        done: bool,
        lease: Option<Duration>,
        sent: Boot,
        name: crate::metrics::SlotId,
    ) {
        if done {
            name.note(crate::stats::Counter::Renewals);
        }
        if let Some(id) = own {
            if done {
                set_lease(id, lease, sent);
            } else {
                mark_lost(id);
            }
        }
    }

    /// After a renewal of `own` sent at `sent` with `lease` that may have landed but
    /// was not confirmed (`table::cap_lease`): the bound is at most the new lease's.
    pub fn unconfirmed(own: Option<HoldId>, lease: Option<Duration>, sent: Boot) {
        if let Some(id) = own {
            crate::hold::table::cap_lease(id, lease, sent);
        }
    }

    /// The object goes away: the hold to release, if any. With `auto_release` off it
    /// stays in the table while the watchdog renews it (see `orphan`).
    pub fn end(&mut self, auto_release: bool) -> Option<Hold> {
        let id = self.own()?;
        if !auto_release {
            orphan(id);
            return None;
        }
        remove(id).filter(|h| h.lost.is_none())
    }
}
