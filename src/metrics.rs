//! The pool's lock metrics: counts and histograms per lock name, and gauges of the
//! holds and waits in progress, in memory every process of a pool shares
//! (`redis_lock.metrics`).
//!
//! The region is mapped at module startup (`setup`), before php-fpm's master or
//! Apache's parent forks its workers, so every worker writes to the same pages and a
//! worker recycled (`pm.max_requests`) or killed takes nothing counted with it. A CLI
//! process, which no parent forked, has a region of its own.
//!
//! Nothing here is a lock a process could die holding:
//! - a count is one atomic add;
//! - a name's slot is claimed by a compare-and-swap of the name's hash, and its bytes
//!   are written by whoever finds them missing (every writer writes the same bytes);
//! - the gauges are entries, one per object (its pid, its name's slot, whether it
//!   waits or holds), written with plain stores; an entry whose process is gone is
//!   not counted, and is reused (`reap`).
//!
//! When the names' table is full, a new name counts under `(other)`; when the
//! entries are, an object is counted but not in the gauges (`untracked`).
//!
//! An object writes here through its `meter::Meter`.

use crate::fold::{Fold, NAME_MAX};
use crate::stats::{self, Counter};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// What a name counts, in this order (`COUNT_NAMES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Acquisitions that succeeded.
    Acquired = 0,
    /// Acquisitions that found the name busy and waited.
    Waits,
    /// Waits that gave up at their deadline.
    Timeouts,
    /// Holds received from a release.
    HandedOver,
    /// Releases that removed a hold.
    Released,
    /// Holds found taken or expired under their holder.
    Lost,
    /// Leases renewed (the watchdog, `extendLock()`, `extend()`).
    Renewals,
    /// Errors, by kind (`ErrorKind`).
    ErrConnection,
    ErrUnavailable,
    ErrNotDurable,
    ErrServer,
    ErrOther,
    /// Of `Acquired`, those that waited (their wait is in the histogram already); the
    /// others are the histogram's waits of zero (`snapshot`), which so cost the
    /// uncontended cycle no add of their own.
    AcquiredAfterWait,
}

pub const COUNTS: usize = 13;

impl Count {
    /// What a process counter (`redis_lock_stats()`) counts under a name, if anything.
    #[inline]
    fn of(c: Counter) -> Option<Count> {
        Some(match c {
            Counter::Acquired => Count::Acquired,
            Counter::Contended => Count::Waits,
            Counter::Timeouts => Count::Timeouts,
            Counter::HandedOver => Count::HandedOver,
            Counter::Released => Count::Released,
            Counter::Renewals => Count::Renewals,
            Counter::Lost => Count::Lost,
            _ => return None,
        })
    }
}

/// The kinds of error counted: Redis unreachable or timed out, Redis in a passing
/// state (a failover, LOADING), a durable grant not acknowledged, an error reply,
/// anything else of the `LockException` family.
pub const ERROR_KINDS: [(Count, &str); 5] = [
    (Count::ErrConnection, "connection"),
    (Count::ErrUnavailable, "unavailable"),
    (Count::ErrNotDurable, "not_durable"),
    (Count::ErrServer, "server"),
    (Count::ErrOther, "other"),
];

/// Histogram buckets: upper bounds of 1 ms × 2^i (1 ms to 16.384 s), and +Inf.
pub const BUCKETS: usize = 16;

/// The finite bounds, in seconds.
pub fn bounds() -> [f64; BUCKETS - 1] {
    std::array::from_fn(|i| 0.001 * f64::from(1u32 << i))
}

/// Buckets as counted: `BUCKETS - 1` finite ones, then one per further power of two,
/// which `snapshot` adds up as +Inf (so that counting needs no bound check: a u64 of
/// nanoseconds, in milliseconds, has at most 45 bits).
const RAW_BUCKETS: usize = 46;

/// The bucket of a duration of `nanos`: the first whose bound it does not pass, or one
/// past the finite ones. With `ms` its whole milliseconds rounded up, that is the bit
/// length of `ms - 1`, which is `(nanos - 1) / 1 ms` rounded down.
#[inline]
pub(crate) fn bucket(nanos: u64) -> usize {
    let below = nanos.saturating_sub(1) / 1_000_000;
    (64 - below.leading_zeros()) as usize
}

#[repr(C)]
struct Hist {
    /// Per bucket, not cumulated (the exposition cumulates).
    buckets: [AtomicU64; RAW_BUCKETS],
    sum_nanos: AtomicU64,
}

impl Hist {
    #[inline(always)]
    fn observe(&self, nanos: u64) {
        self.buckets[bucket(nanos)].fetch_add(1, Ordering::Relaxed);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

const NAME_WORDS: usize = NAME_MAX / 8;

/// One name's figures.
#[repr(C)]
pub struct Slot {
    /// The name's hash, 0 while the slot is free.
    hash: AtomicU64,
    /// The name's length plus one once its bytes are written, 0 before.
    len: AtomicU64,
    name: [AtomicU64; NAME_WORDS],
    counts: [AtomicU64; COUNTS],
    wait: Hist,
    hold: Hist,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("name", &self.name().map(|n| String::from_utf8_lossy(&n).into_owned()))
            .finish()
    }
}

impl Slot {
    #[inline]
    pub(crate) fn count(&self, c: Count) {
        self.counts[c as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// A wait that lasted `took`.
    pub(crate) fn observe_wait(&self, took: Duration) {
        self.wait.observe(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX));
    }

    /// A hold that lasted `nanos`.
    #[inline(always)]
    pub(crate) fn observe_hold(&self, nanos: u64) {
        self.hold.observe(nanos);
    }

    /// Counts the error `e` by its kind (none for a timeout, a loss or a bad argument).
    #[cold]
    pub(crate) fn count_error(&self, e: &crate::error::LockError) {
        if let Some(kind) = error_kind(e) {
            self.count(kind);
        }
    }

    fn write_name(&self, name: &[u8]) {
        if self.len.load(Ordering::Acquire) != 0 {
            return;
        }
        for (i, word) in self.name.iter().enumerate() {
            let mut bytes = [0u8; 8];
            for (j, b) in bytes.iter_mut().enumerate() {
                *b = name.get(i * 8 + j).copied().unwrap_or(0);
            }
            word.store(u64::from_le_bytes(bytes), Ordering::Relaxed);
        }
        self.len.store(name.len() as u64 + 1, Ordering::Release);
    }

    fn name(&self) -> Option<Vec<u8>> {
        let len = self.len.load(Ordering::Acquire).checked_sub(1)? as usize;
        let mut out: Vec<u8> =
            self.name.iter().flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes()).collect();
        out.truncate(len.min(NAME_MAX));
        Some(out)
    }
}

/// An object's place in the gauges.
#[repr(C)]
pub(crate) struct Entry {
    pid: AtomicU32,
    slot: AtomicU32,
    state: AtomicU32,
    /// When its process started (`start_of`), 0 until written: with the pid, which
    /// the system may give to a new process once this one is gone, it names the
    /// process.
    start: AtomicU64,
}

pub(crate) const IDLE: u32 = 0;
pub(crate) const WAITING: u32 = 1;
pub(crate) const HOLDING: u32 = 2;

impl Entry {
    pub(crate) const fn empty() -> Entry {
        Entry {
            pid: AtomicU32::new(0),
            slot: AtomicU32::new(0),
            state: AtomicU32::new(IDLE),
            start: AtomicU64::new(0),
        }
    }

    #[inline(always)]
    pub(crate) fn set_state(&self, state: u32) {
        self.state.store(state, Ordering::Relaxed);
    }

    /// Given back by its process: its start cleared before its pid, so that whoever
    /// claims it next never finds another process's start in it (0 is "not yet
    /// known"). A forked child's copy of its parent's object leaves the parent's
    /// entry alone.
    pub(crate) fn free(&self) {
        if self.pid.load(Ordering::Relaxed) == crate::fork_wiped::pid() {
            self.state.store(IDLE, Ordering::Relaxed);
            self.start.store(0, Ordering::Relaxed);
            self.pid.store(0, Ordering::Release);
        }
    }
}

/// How many objects the gauges follow at once, in all the pool's processes.
const ENTRIES: usize = 4096;
/// How many entries a new object looks at for a free one.
const PROBES: usize = 64;

#[repr(C)]
struct Header {
    /// Objects not in the gauges: no free entry was found for them.
    untracked: AtomicU64,
    /// Where the next object starts looking for a free entry.
    cursor: AtomicU64,
}

struct Region {
    header: &'static Header,
    /// `names` slots, then `(other)`.
    slots: &'static [Slot],
    entries: &'static [Entry],
    fold: Fold,
}

static REGION: OnceLock<Region> = OnceLock::new();

/// What watches acquisitions beyond the process's counters: the pool's metrics
/// (`METRICS`, set at startup) and requests' journals (`JOURNAL`, set when one is
/// first started). While it is 0, an uncontended cycle pays one test of it per event,
/// and a `Meter` does nothing else.
static WATCHED: AtomicU8 = AtomicU8::new(0);
const METRICS: u8 = 1;
pub(crate) const JOURNAL: u8 = 2;

/// What watches: `METRICS`, `JOURNAL`, or neither (0).
#[inline(always)]
pub(crate) fn watching() -> u8 {
    WATCHED.load(Ordering::Relaxed)
}

#[inline(always)]
pub(crate) fn watched() -> bool {
    watching() != 0
}

/// Whether some thread's journal may be on.
#[inline(always)]
pub(crate) fn journal_on() -> bool {
    watching() & JOURNAL != 0
}

/// A request's journal is on from now (`journal::start`): meters note to it.
pub fn watch_journal() {
    WATCHED.fetch_or(JOURNAL, Ordering::Relaxed);
}

/// The name counted once the table is full.
pub const OTHER: &[u8] = b"(other)";

/// Maps the region for `names` names (module startup; a second call is refused).
pub fn setup(names: usize, fold: Fold) -> Result<(), String> {
    let names = names.clamp(1, 100_000);
    let size = std::mem::size_of::<Header>()
        + (names + 1) * std::mem::size_of::<Slot>()
        + ENTRIES * std::mem::size_of::<Entry>();
    // SAFETY: a fresh shared anonymous mapping, checked before use and never
    // unmapped; it is zero-filled, which is a valid Header, Slot and Entry (all
    // atomics), and each part's offset keeps the alignment of 8 they need.
    let region = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return Err(format!(
                "redis-lock: could not map {size} bytes for the metrics: {}",
                std::io::Error::last_os_error()
            ));
        }
        let header = &*p.cast::<Header>();
        let slots_at = p.cast::<u8>().add(std::mem::size_of::<Header>()).cast::<Slot>();
        let slots = std::slice::from_raw_parts(slots_at, names + 1);
        let entries_at = slots_at.add(names + 1).cast::<Entry>();
        let entries = std::slice::from_raw_parts(entries_at, ENTRIES);
        Region { header, slots, entries, fold }
    };
    region.slots[names].write_name(OTHER);
    REGION.set(region).map_err(|_| "redis-lock: the metrics are set up already".to_string())?;
    WATCHED.fetch_or(METRICS, Ordering::Relaxed);
    Ok(())
}

/// Whether the metrics are on in this process.
pub fn on() -> bool {
    REGION.get().is_some()
}

impl Region {
    /// The slot of `key`'s name, claimed if it is new, or `(other)`.
    fn slot_of(&self, key: &[u8]) -> (&'static Slot, u32) {
        let h = self.fold.hash(key);
        let names = self.slots.len() - 1;
        let start = (h % names as u64) as usize;
        for probe in 0..names {
            let i = (start + probe) % names;
            let slot = &self.slots[i];
            let mut found = slot.hash.load(Ordering::Acquire);
            if found == 0 {
                found = match slot.hash.compare_exchange(0, h, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => h,
                    Err(other) => other,
                };
            }
            if found == h {
                if slot.len.load(Ordering::Acquire) == 0 {
                    slot.write_name(&self.fold.apply(key));
                }
                return (slot, i as u32);
            }
        }
        (&self.slots[names], names as u32)
    }

    fn claim_entry(&self, slot: u32) -> Option<&'static Entry> {
        let pid = crate::fork_wiped::pid();
        let start = self.header.cursor.fetch_add(1, Ordering::Relaxed) as usize;
        for probe in 0..PROBES {
            let e = &self.entries[(start + probe) % ENTRIES];
            if e.pid.load(Ordering::Relaxed) == 0
                && e.pid.compare_exchange(0, pid, Ordering::AcqRel, Ordering::Relaxed).is_ok()
            {
                e.slot.store(slot, Ordering::Relaxed);
                e.start.store(own_start(pid), Ordering::Relaxed);
                e.state.store(IDLE, Ordering::Release);
                return Some(e);
            }
        }
        self.header.untracked.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// Counts `c` in the process's counters and under the name of `key` (where no
/// object is at hand: a release's reply read after its call returned).
pub fn note_key(key: &[u8], c: Counter) {
    stats::note(c);
    if let (Some(r), Some(k)) = (REGION.get(), Count::of(c)) {
        r.slot_of(key).0.count(k);
    }
}

/// A release sent without waiting for its answer found, when its reply was read,
/// that the hold of the `what` named `name` was gone before it: counted as lost,
/// and told (`stats::tell_lost_late`).
pub fn lost_late(what: &str, name: &[u8]) {
    note_key(name, Counter::Lost);
    stats::tell_lost_late(what, name);
}

/// The slot, its index and the gauge entry of a new object named `key` (`Meter::new`),
/// or `None` when the metrics are off; no entry when none was free.
pub(crate) fn claim(key: &[u8]) -> Option<(&'static Slot, SlotId, Option<&'static Entry>)> {
    let r = REGION.get()?;
    let (slot, index) = r.slot_of(key);
    Some((slot, SlotId(index), r.claim_entry(index)))
}

/// A name's slot as a hold in the table keeps it (`Meter::id`): an index, which fits
/// where the hold had padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotId(u32);

impl SlotId {
    /// No name: the metrics are off.
    pub const NONE: SlotId = SlotId(u32::MAX);

    /// Counts `c` in the process's counters and under this name.
    #[inline]
    pub fn note(self, c: Counter) {
        stats::note(c);
        if self != SlotId::NONE {
            self.note_slot(c);
        }
    }

    #[cold]
    fn note_slot(self, c: Counter) {
        let slot = REGION.get().and_then(|r| r.slots.get(self.0 as usize));
        if let (Some(s), Some(k)) = (slot, Count::of(c)) {
            s.count(k);
        }
    }
}

/// The kind an error counts as (`None`: a timeout or a loss, counted as such, or a
/// bad argument, which is no Redis trouble).
pub fn error_kind(e: &crate::error::LockError) -> Option<Count> {
    use crate::error::LockError as E;
    match e {
        E::Connection { .. } => Some(Count::ErrConnection),
        E::Passing { .. } => Some(Count::ErrUnavailable),
        E::NotDurable { .. } => Some(Count::ErrNotDurable),
        E::Server { .. } => Some(Count::ErrServer),
        E::Unfenced { .. } | E::PermitsMismatch { .. } | E::Random(_) => Some(Count::ErrOther),
        E::InvalidValue(_) | E::InvalidType(_) | E::Timeout { .. } | E::Lost { .. } => None,
    }
}

/// The name of an error's kind, as the metrics' `kind` label says it ("lost", "timeout"
/// and "argument" for the others).
pub fn error_name(e: &crate::error::LockError) -> &'static str {
    use crate::error::LockError as E;
    match error_kind(e) {
        Some(k) => ERROR_KINDS.iter().find(|(c, _)| *c == k).map_or("other", |(_, n)| *n),
        None => match e {
            E::Lost { .. } => "lost",
            E::Timeout { .. } => "timeout",
            _ => "argument",
        },
    }
}

/// One name's figures now.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub name: Vec<u8>,
    pub counts: [u64; COUNTS],
    /// Per bucket, not cumulated, and the sum in seconds.
    pub wait: ([u64; BUCKETS], f64),
    pub hold: ([u64; BUCKETS], f64),
    pub holding: u64,
    pub waiting: u64,
}

/// What the region holds now.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub names: Vec<Figures>,
    /// How many names it can tell apart (then `(other)`).
    pub capacity: usize,
    pub untracked: u64,
    /// Processes with an object in the gauges.
    pub processes: usize,
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`'s 22nd
/// field), or 0 when it cannot be read (gone, or hidden from this user). A pid given
/// again within the tick (10 ms) its first process started in is not told apart.
fn start_of(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else { return 0 };
    // The command's name, in parentheses, may hold spaces: the fields after it count
    // from the state, the third.
    let Some(close) = stat.iter().rposition(|&b| b == b')') else { return 0 };
    let fields = String::from_utf8_lossy(&stat[close + 1..]).into_owned();
    fields.split_ascii_whitespace().nth(22 - 3).and_then(|f| f.parse().ok()).unwrap_or(0)
}

/// This process's start, read once per process (a forked child reads its own).
fn own_start(pid: u32) -> u64 {
    static OWN: (AtomicU32, AtomicU64) = (AtomicU32::new(0), AtomicU64::new(0));
    if OWN.0.load(Ordering::Acquire) != pid {
        OWN.1.store(start_of(pid), Ordering::Relaxed);
        OWN.0.store(pid, Ordering::Release);
    }
    OWN.1.load(Ordering::Relaxed)
}

/// Whether the process that wrote an entry with `pid` and `start` is alive: a live
/// process with that pid, which started then (a start not known matches any).
fn alive(pid: u32, start: u64, starts: &mut Vec<(u32, Option<u64>)>) -> bool {
    let now = match starts.iter().find(|(p, _)| *p == pid) {
        Some(&(_, now)) => now,
        None => {
            // SAFETY: kill(2) with signal 0 only checks; EPERM: it lives under another user.
            let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
            let live =
                r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
            let now = live.then(|| start_of(pid));
            starts.push((pid, now));
            now
        }
    };
    now.is_some_and(|now| start == 0 || now == 0 || now == start)
}

/// Frees the entries of processes that are gone (a pid now another process's
/// included); the pids still alive with entries.
fn reap(r: &Region) -> Vec<u32> {
    let mut starts = Vec::new();
    let mut live_pids: Vec<u32> = Vec::new();
    for e in r.entries {
        let pid = e.pid.load(Ordering::Acquire);
        if pid == 0 {
            continue;
        }
        if alive(pid, e.start.load(Ordering::Relaxed), &mut starts) {
            if !live_pids.contains(&pid) {
                live_pids.push(pid);
            }
        } else if e.pid.load(Ordering::Acquire) == pid {
            e.state.store(IDLE, Ordering::Relaxed);
            e.start.store(0, Ordering::Relaxed);
            let _ = e.pid.compare_exchange(pid, 0, Ordering::AcqRel, Ordering::Relaxed);
        }
    }
    live_pids
}

fn hist(h: &Hist) -> ([u64; BUCKETS], f64) {
    let mut buckets: [u64; BUCKETS] = std::array::from_fn(|i| h.buckets[i].load(Ordering::Relaxed));
    buckets[BUCKETS - 1] +=
        h.buckets[BUCKETS..].iter().map(|b| b.load(Ordering::Relaxed)).sum::<u64>();
    (buckets, h.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9)
}

/// The figures of every name counted so far (none when the metrics are off).
pub fn snapshot() -> Option<Snapshot> {
    let r = REGION.get()?;
    let processes = reap(r).len();
    let mut gauges = vec![(0u64, 0u64); r.slots.len()];
    for e in r.entries {
        if e.pid.load(Ordering::Acquire) == 0 {
            continue;
        }
        let i = e.slot.load(Ordering::Relaxed) as usize;
        if let Some(g) = gauges.get_mut(i) {
            match e.state.load(Ordering::Relaxed) {
                WAITING => g.1 += 1,
                HOLDING => g.0 += 1,
                _ => {}
            }
        }
    }
    let mut names = Vec::new();
    for (slot, (holding, waiting)) in r.slots.iter().zip(gauges) {
        if slot.hash.load(Ordering::Acquire) == 0 && slot.len.load(Ordering::Acquire) == 0 {
            continue;
        }
        let counts: [u64; COUNTS] = std::array::from_fn(|i| slot.counts[i].load(Ordering::Relaxed));
        let (mut wait, hold) = (hist(&slot.wait), hist(&slot.hold));
        // The acquisitions that did not wait: waits of zero.
        wait.0[0] += counts[Count::Acquired as usize]
            .saturating_sub(counts[Count::AcquiredAfterWait as usize]);
        let used = counts.iter().any(|&n| n > 0) || holding > 0 || waiting > 0;
        let Some(name) = slot.name() else { continue };
        if used || name != OTHER {
            names.push(Figures { name, counts, wait, hold, holding, waiting });
        }
    }
    names.sort_by(|a, b| a.name.cmp(&b.name));
    Some(Snapshot {
        names,
        capacity: r.slots.len() - 1,
        untracked: r.header.untracked.load(Ordering::Relaxed),
        processes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_bounds() {
        let b = bounds();
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1_000_000), 0);
        assert_eq!(bucket(1_000_001), 1);
        assert_eq!(bucket(2_000_000), 1);
        assert_eq!(bucket(16_384_000_000), 14);
        assert_eq!(bucket(16_384_000_001), 15);
        assert_eq!(bucket(32_768_000_001), 16);
        assert_eq!(bucket(u64::MAX), RAW_BUCKETS - 1);
        for nanos in [1u64, 999_999, 1_500_000, 3_999_999, 4_000_001, 700_000_000, 9_000_000_000] {
            let i = bucket(nanos);
            let secs = nanos as f64 / 1e9;
            assert!(i >= BUCKETS - 1 || secs <= b[i], "{nanos} in {i}");
            assert!(i == 0 || secs > b[i - 1], "{nanos} in {i}");
        }
    }
}
