//! What every object keeps besides its kind's own state (`Common`), and a list of
//! one value per part that allocates nothing for the one part most objects have.

use crate::config::{Settings, Topology};
use crate::error::LockError;
use crate::kinds::core::waiting::Fences;
use crate::meter::Meter;
use crate::terms::Terms;
use crate::topology::rules;

/// One value per part: inline for an object of one part (a `Lock`, a `Semaphore`, a
/// MultiLock on one server), so that its cycle allocates nothing for it.
pub(crate) enum PerPart<T> {
    One([T; 1]),
    Many(Vec<T>),
}

impl<T> PerPart<T> {
    /// `f(i)` for each of `n` parts.
    pub fn new(n: usize, mut f: impl FnMut(usize) -> T) -> Self {
        if n == 1 {
            PerPart::One([f(0)])
        } else {
            PerPart::Many((0..n).map(f).collect())
        }
    }
}

impl<T> std::ops::Deref for PerPart<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            PerPart::One(one) => one,
            PerPart::Many(many) => many,
        }
    }
}

impl<'a, T> IntoIterator for &'a PerPart<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> std::ops::DerefMut for PerPart<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            PerPart::One(one) => one,
            PerPart::Many(many) => many,
        }
    }
}

/// What every object keeps besides its kind's own state.
pub(crate) struct Common {
    /// What it is, in messages: "lock", "semaphore", "multilock".
    pub what: &'static str,
    /// Its name in messages: the key as given, or a MultiLock's keys.
    pub name: Vec<u8>,
    /// Its wait, lease and keeping.
    pub terms: Terms,
    /// Whether it issues fencing tokens (never on a Redlock quorum).
    pub fencing: bool,
    /// Record who holds it (`owner_info`; never on a Redlock quorum).
    pub owner_info: bool,
    /// Whether the acquisition in progress takes a token the caller chose, which may
    /// be another holder's too, rather than one of its own.
    pub caller_token: bool,
    /// The record of the acquisition in progress (`owner::record`), empty when none is kept.
    pub record: Vec<u8>,
    /// The fencing tokens of the last acquisition, one per key, once issued (at the
    /// acquisition, or when first asked for); kept after the release.
    pub fences: Fences,
    /// Whether it ever acquired (a write hold): before that there is no fencing token
    /// to ask for.
    pub ever_held: bool,
    /// The connection each part's hold was taken (or last extended) on, for
    /// `synchronized()` (`Route::serial`): its release goes unawaited only while they
    /// are the same ones, unclosed (`Route::intact`). A server that restarted without
    /// its data, or a failover, closed it, and may have forgotten the hold: the
    /// release then waits for its answer, and tells the caller.
    pub serials: Vec<Option<u64>>,
    /// Its name's pool-wide metrics (`metrics`): empty when they are off.
    pub meter: Meter,
}

impl Common {
    /// The common state of a new object: `what` named `name`, on these terms, under
    /// `settings` on `topology`. A Redlock quorum keeps only the key: no fencing
    /// (independent counters give no order across holders: see docs/redlock.md), no
    /// records.
    pub fn new(
        what: &'static str,
        name: Vec<u8>,
        terms: Terms,
        settings: &Settings,
        topology: &Topology<'_>,
    ) -> Self {
        let more = !rules::lease_only(topology);
        let meter = Meter::new(&name);
        Common {
            what,
            name,
            terms,
            fencing: settings.fencing && more,
            owner_info: settings.owner_info && more,
            caller_token: false,
            record: Vec::new(),
            fences: None,
            ever_held: false,
            serials: Vec::new(),
            meter,
        }
    }

    /// A timeout error for `synchronized()`.
    pub fn timeout(&self) -> LockError {
        LockError::timeout(self.what, &self.name, self.terms.wait)
    }
}
