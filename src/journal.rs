//! What one request did with locks, for a profiler (`redis_lock_journal()`, the
//! Symfony profiler panel): each acquisition of the thread's request, with how long
//! it waited, how it ended, and how long the hold lasted.
//!
//! Off unless a thread turns it on for its request (`start`): then each of its
//! acquisitions is one entry in a list of its own. Until a first `start`, the
//! objects' meters do not call here (`metrics::watch_journal`).

use std::cell::RefCell;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How an acquisition ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Acquired,
    /// Busy at its deadline (a try that found it busy, or a wait that gave up).
    Busy,
    /// A `LockException`, by kind (`metrics::ERROR_KINDS`' names, or "lost").
    Failed(&'static str),
}

/// One acquisition.
#[derive(Debug, Clone)]
pub struct Entry {
    pub what: &'static str,
    pub name: Vec<u8>,
    /// When it ended, in seconds since the epoch.
    pub at: f64,
    pub waited: Duration,
    pub outcome: Outcome,
    /// The hold came from a release (a grant), not a try.
    pub handed_over: bool,
    /// How long the hold lasted, once it ended (released, lost, its object gone).
    pub held: Option<Duration>,
    ended: Instant,
}

#[derive(Default)]
struct Log {
    on: bool,
    /// Each `start` begins a new one: an index kept from an earlier request is stale.
    generation: u32,
    entries: Vec<Entry>,
}

thread_local! {
    static LOG: RefCell<Log> = RefCell::new(Log::default());
}

/// Entries kept at most per request; later ones are dropped.
const MAX: usize = 10_000;

/// Turns this thread's journal on, empty.
pub fn start() {
    let _ = LOG.try_with(|l| {
        let mut l = l.borrow_mut();
        l.on = true;
        l.generation = l.generation.wrapping_add(1);
        l.entries.clear();
    });
}

/// Turns it off and empties it (request end: the next request starts clean).
pub fn stop() {
    let _ = LOG.try_with(|l| {
        let mut l = l.borrow_mut();
        l.on = false;
        l.entries = Vec::new();
    });
}

/// What it holds now.
pub fn entries() -> Vec<Entry> {
    LOG.try_with(|l| l.borrow().entries.clone()).unwrap_or_default()
}

/// Notes an acquisition's end; with `Outcome::Acquired`, a handle to note the hold's
/// end by (`held`), 0 when none.
pub fn note(
    what: &'static str,
    name: &[u8],
    waited: Duration,
    outcome: Outcome,
    handed_over: bool,
) -> u64 {
    LOG.try_with(|l| {
        let mut l = l.borrow_mut();
        if !l.on || l.entries.len() >= MAX {
            return 0;
        }
        let at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        l.entries.push(Entry {
            what,
            name: name.to_vec(),
            at,
            waited,
            outcome,
            handed_over,
            held: None,
            ended: Instant::now(),
        });
        if outcome == Outcome::Acquired {
            (u64::from(l.generation) << 32) | l.entries.len() as u64
        } else {
            0
        }
    })
    .unwrap_or(0)
}

/// The hold noted as `handle` ended now.
pub fn held(handle: u64) {
    let _ = LOG.try_with(|l| {
        let mut l = l.borrow_mut();
        if (handle >> 32) as u32 != l.generation {
            return;
        }
        let i = (handle & 0xffff_ffff) as usize;
        if let Some(e) = i.checked_sub(1).and_then(|i| l.entries.get_mut(i)) {
            if e.held.is_none() {
                e.held = Some(e.ended.elapsed());
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_while_on_and_forgets_stale_handles() {
        assert_eq!(note("lock", b"a", Duration::ZERO, Outcome::Acquired, false), 0);
        start();
        let h = note("lock", b"a", Duration::from_millis(5), Outcome::Acquired, true);
        assert_ne!(h, 0);
        note("lock", b"b", Duration::from_millis(9), Outcome::Busy, false);
        held(h);
        let e = entries();
        assert_eq!(e.len(), 2);
        assert!(e[0].held.is_some() && e[0].handed_over);
        assert_eq!(e[1].outcome, Outcome::Busy);
        start();
        held(h);
        let h2 = note("lock", b"c", Duration::ZERO, Outcome::Acquired, false);
        assert_eq!(entries().len(), 1);
        held(h); // from the earlier request: changes nothing
        assert!(entries()[0].held.is_none());
        held(h2);
        assert!(entries()[0].held.is_some());
        stop();
        assert_eq!(note("lock", b"d", Duration::ZERO, Outcome::Acquired, false), 0);
        assert!(entries().is_empty());
    }
}
