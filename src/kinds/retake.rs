//! What this process remembers of the locks it used lately, for two heuristics:
//! the re-take of the default (not fair) mode, where a process in a tight loop of
//! very short holds may take the lock straight back instead of handing it over (see
//! the module comment of `lock`); and the way in to a lock (or a semaphore) that is
//! contended, which goes straight to the script that queues (`contended_lately`);
//! and a semaphore found held by others, whose next tries go straight to the script
//! (`shared_lately`).

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Holds shorter than this may be followed by a re-take ahead of the queue (default mode).
const SHORT_HOLD: Duration = Duration::from_micros(500);

/// A process that comes back for a lock within this long of releasing it, with no
/// other release between, is in a tight loop: its next short hold may be re-taken
/// ahead of the queue. About the time a hand-over takes (a grant, and the waiter's
/// wake-up). Only the last release is remembered, so loops over several locks hand over.
const QUICK_RETURN: Duration = Duration::from_micros(200);

/// An acquisition that had to wait, this long ago at most, makes the next one of the
/// same lock skip its plain `SET NX PX` (see `contended_lately`).
const CONTENDED_LATELY: Duration = Duration::from_secs(1);

/// What this thread (the PHP process) last did with lock names: which lock
/// (`LockKeys::id`) it last released and when, which one it last made a `Lock`
/// object for and when, which one it last had to wait for and when, and which
/// semaphore it last found held by others when it tried to take it alone.
#[derive(Clone, Copy)]
struct Recent {
    released: (u64, Option<Instant>),
    made: (u64, Option<Instant>),
    waited: (u64, Option<Instant>),
    shared: (u64, Option<Instant>),
}

thread_local! {
    static RECENT: Cell<Recent> = const {
        Cell::new(Recent {
            released: (0, None),
            made: (0, None),
            waited: (0, None),
            shared: (0, None),
        })
    };
}

/// An acquisition of lock (or semaphore) `id` found it busy (`true`) or free (`false`) at `now`.
pub(in crate::kinds) fn note_contended(id: u64, busy: bool, now: Instant) {
    RECENT.with(|r| {
        let recent = r.get();
        if busy {
            r.set(Recent { waited: (id, Some(now)), ..recent });
        } else if recent.waited.0 == id {
            r.set(Recent { waited: (0, None), ..recent });
        }
    });
}

/// Whether the last acquisition of lock `id` by this process had to wait, within
/// `CONTENDED_LATELY` of `start`, with none found free since. The next one then most
/// likely waits too: its first try is the script that queues, which takes the lock
/// as well when it is free, instead of a `SET NX PX` that would find it busy and
/// cost the server a round trip more.
pub(in crate::kinds) fn contended_lately(id: u64, start: Instant) -> bool {
    let (last, at) = RECENT.with(|r| r.get().waited);
    last == id && at.is_some_and(|at| start.saturating_duration_since(at) < CONTENDED_LATELY)
}

/// A semaphore's first try found `id` held by others at `now` (its `SET NX` failed).
pub(in crate::kinds) fn note_shared(id: u64, now: Instant) {
    RECENT.with(|r| r.set(Recent { shared: (id, Some(now)), ..r.get() }));
}

/// Whether this process found semaphore `id` held by others within `CONTENDED_LATELY`
/// of `start`: its next try is then the script, which takes free permits beside the
/// other holders, instead of a `SET NX` that would most likely fail first.
pub(in crate::kinds) fn shared_lately(id: u64, start: Instant) -> bool {
    let (last, at) = RECENT.with(|r| r.get().shared);
    last == id && at.is_some_and(|at| start.saturating_duration_since(at) < CONTENDED_LATELY)
}

/// A `Lock` object for lock `id` was made just now.
pub(in crate::kinds) fn note_made(id: u64) {
    RECENT.with(|r| r.set(Recent { made: (id, Some(Instant::now())), ..r.get() }));
}

/// This process released lock `id` at `now`.
pub(in crate::kinds) fn note_released(id: u64, now: Instant) {
    RECENT.with(|r| r.set(Recent { released: (id, Some(now)), ..r.get() }));
}

/// Whether an acquisition of lock `id` starting at `start` comes back within
/// `QUICK_RETURN` of this process's last release, which was of the same lock.
pub(in crate::kinds) fn came_back(id: u64, start: Instant) -> bool {
    let (last, at) = RECENT.with(|r| r.get().released);
    last == id && at.is_some_and(|at| start.saturating_duration_since(at) < QUICK_RETURN)
}

/// Whether a release may only free the lock for its releaser's re-take: not in fair
/// mode, in a tight loop (`quick`), after a hold shorter than `SHORT_HOLD`.
/// `acquired_at` is a reading of `clock::mono_nanos`.
pub(in crate::kinds) fn short_hold(fair: bool, quick: bool, acquired_at: Option<u64>) -> bool {
    !fair
        && quick
        && acquired_at.is_some_and(|at| {
            crate::clock::mono_nanos().saturating_sub(at) < SHORT_HOLD.as_nanos() as u64
        })
}

/// Whether a new object for lock `id` was made after `at`: it is about to take again
/// the lock its predecessor left free.
pub(in crate::kinds) fn remade_since(id: u64, at: Instant) -> bool {
    let (last, made) = RECENT.with(|r| r.get().made);
    last == id && made.is_some_and(|made| made > at)
}
