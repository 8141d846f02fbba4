//! One lock object's view of what it does (`Meter`): each event is one call, which
//! counts it in the process's counters (`stats`), under the object's name in the
//! pool's metrics (`metrics`), and in the request's journal (`journal`).

use crate::clock::mono_nanos;
use crate::metrics::{
    self, error_name, journal_on, watched, watching, Count, Entry, Slot, SlotId, HOLDING, IDLE,
    JOURNAL, WAITING,
};
use crate::stats::{self, Counter};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Where an object outside the gauges (the metrics off, or no free entry) writes its
/// state: nobody reads it, and a write needs no test.
static NOWHERE: Entry = Entry::empty();

/// An object's view of what it does: each event is one call here, which counts it in
/// the process's counters (`redis_lock_stats()`), under the object's name in the
/// pool's metrics, and in the request's journal. With neither metrics nor a journal,
/// an event costs the process's count and one test of `watched`.
pub struct Meter {
    slot: Option<&'static Slot>,
    id: SlotId,
    /// Its entry in the gauges, or `NOWHERE`.
    entry: &'static Entry,
    /// When the hold began (`clock::mono_nanos`), while it lasts; 0 otherwise.
    since: u64,
    /// Whether the acquisition in progress waited (its wait time is counted then).
    waited: AtomicBool,
    /// The request journal's handle of this object's hold, 0 when none (`journal`).
    journal: AtomicU64,
    /// The acquisition in progress's wait in nanoseconds, and whether a grant ended
    /// it: kept while a journal is on, taken at its end.
    last_wait: AtomicU64,
    handed: AtomicBool,
}

impl Default for Meter {
    fn default() -> Self {
        Meter {
            slot: None,
            id: SlotId::NONE,
            entry: &NOWHERE,
            since: 0,
            waited: AtomicBool::new(false),
            journal: AtomicU64::new(0),
            last_wait: AtomicU64::new(0),
            handed: AtomicBool::new(false),
        }
    }
}

impl Meter {
    /// The meter of an object named `key` (a MultiLock: its keys).
    pub fn new(key: &[u8]) -> Meter {
        let Some((slot, id, entry)) = metrics::claim(key) else { return Meter::default() };
        let mut m = Meter::default();
        m.slot = Some(slot);
        m.id = id;
        m.entry = entry.unwrap_or(&NOWHERE);
        m
    }

    /// Its name, as a hold in the table counts its renewals and loss under it.
    pub fn id(&self) -> SlotId {
        self.id
    }

    #[inline]
    fn state(&self, state: u32) {
        self.entry.set_state(state);
    }

    /// Counts `c` (not an acquisition, a wait or a release: those have their own call).
    #[inline]
    pub fn note(&self, c: Counter) {
        self.id.note(c);
    }

    /// Counts the error of a call on the object, by its kind: a timeout and a loss are
    /// counted as such where they are found, and a bad argument is no Redis trouble.
    #[cold]
    pub fn failed(&self, e: &crate::error::LockError) {
        if let Some(s) = self.slot {
            s.count_error(e);
        }
    }

    /// A wait began: a try found the name busy.
    pub fn wait_started(&self) {
        stats::note(Counter::Contended);
        if let Some(s) = self.slot {
            s.count(Count::Waits);
            self.state(WAITING);
        }
    }

    /// A wait that lasted `took` ended; `timed_out`: at its deadline.
    pub fn wait_ended(&self, took: Duration, timed_out: bool) {
        stats::waited(took);
        if timed_out {
            stats::note(Counter::Timeouts);
        }
        if journal_on() {
            let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
            self.last_wait.fetch_add(nanos, Ordering::Relaxed);
        }
        if let Some(s) = self.slot {
            s.observe_wait(took);
            if timed_out {
                s.count(Count::Timeouts);
            }
            self.waited.store(true, Ordering::Relaxed);
            self.state(IDLE);
        }
    }

    /// A wait ended early (cancelled): not counted as a wait's time.
    pub fn wait_cancelled(&self) {
        if self.slot.is_some() {
            self.state(IDLE);
        }
    }

    /// A hold received from a release (a grant).
    pub fn handed_over(&self) {
        self.note(Counter::HandedOver);
        if journal_on() {
            self.handed.store(true, Ordering::Relaxed);
        }
    }

    /// The acquisition of `what` `name` took the hold at `at` (`clock::mono_nanos`):
    /// counted, its hold's time starts, and it is noted in the request's journal.
    #[inline(always)]
    pub fn acquired(&mut self, what: &'static str, name: &[u8], at: u64) {
        stats::note(Counter::Acquired);
        let watched = watching();
        if watched == 0 {
            return;
        }
        if let Some(s) = self.slot {
            s.count(Count::Acquired);
            if self.waited.load(Ordering::Relaxed) {
                self.waited.store(false, Ordering::Relaxed);
                s.count(Count::AcquiredAfterWait);
            }
            self.since = at;
            self.state(HOLDING);
        }
        if watched & JOURNAL != 0 {
            self.journal_end(what, name, crate::journal::Outcome::Acquired);
        }
    }

    /// The acquisition of `what` `name` ended without the hold: busy (`None`), or
    /// with an error, counted by its kind.
    #[cold]
    pub fn missed(&self, what: &'static str, name: &[u8], e: Option<&crate::error::LockError>) {
        if let Some(e) = e {
            self.failed(e);
        }
        self.waited.store(false, Ordering::Relaxed);
        if journal_on() {
            let outcome = match e {
                None => crate::journal::Outcome::Busy,
                Some(e) => crate::journal::Outcome::Failed(error_name(e)),
            };
            self.journal_end(what, name, outcome);
        }
    }

    /// The acquisition's end in the request's journal (some thread's is on), with the
    /// wait it took and whether a grant ended it, both kept only while a journal is
    /// on (`wait_ended`, `handed_over`) and taken here.
    #[cold]
    fn journal_end(&self, what: &'static str, name: &[u8], outcome: crate::journal::Outcome) {
        let waited = Duration::from_nanos(self.last_wait.swap(0, Ordering::Relaxed));
        let handed = self.handed.swap(false, Ordering::Relaxed);
        let handle = crate::journal::note(what, name, waited, outcome, handed);
        if handle != 0 {
            self.journal.store(handle, Ordering::Relaxed);
        }
    }

    /// A release: `removed`, it removed a hold; `own`, this object's hold is over.
    #[inline(always)]
    pub fn released(&mut self, removed: bool, own: bool) {
        if removed {
            stats::note(Counter::Released);
        }
        if watched() {
            self.released_watched(removed, own);
        }
    }

    #[inline(always)]
    fn released_watched(&mut self, removed: bool, own: bool) {
        if let Some(s) = self.slot {
            if removed {
                s.count(Count::Released);
            }
            if own {
                self.hold_time(s);
            }
        }
        if own && self.journal.load(Ordering::Relaxed) != 0 {
            self.journal_held();
        }
    }

    /// The object ends: a hold it still has ends with it (released then, or by
    /// request end, or left to its lease), and its time is counted.
    #[inline]
    fn hold_ended(&mut self) {
        if !watched() {
            return;
        }
        if let Some(s) = self.slot {
            self.hold_time(s);
        }
        if self.journal.load(Ordering::Relaxed) != 0 {
            self.journal_held();
        }
    }

    #[inline(always)]
    fn hold_time(&mut self, s: &Slot) {
        if self.since != 0 {
            let nanos = mono_nanos().saturating_sub(std::mem::take(&mut self.since));
            s.observe_hold(nanos);
        }
        self.state(IDLE);
    }

    #[cold]
    fn journal_held(&self) {
        crate::journal::held(self.journal.swap(0, Ordering::Relaxed));
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.hold_ended();
        if !std::ptr::eq(self.entry, &NOWHERE) {
            self.entry.free();
        }
    }
}
