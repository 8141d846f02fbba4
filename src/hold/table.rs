//! What this process holds: every lock acquired and not yet released.
//!
//! The table lets request end release what a script forgot (or could not release,
//! after a fatal error), and it is the watchdog's work list: the holds that are
//! auto-renewed carry a `Renewal`, and the watchdog marks a hold lost when renewal
//! finds that its token no longer holds the key.
//!
//! One table per process, for every thread's holds: one watchdog renews them all.
//! Each hold names its owner, the thread whose request took it (`Owner`), and
//! request end takes out only the holds of the thread that ends its request:
//! under a threaded SAPI other threads are in the middle of theirs. Under a worker
//! SAPI (FrankenPHP's worker mode) the owner also names the handled request, and the
//! end of a handled request takes out that request's holds.
//!
//! Fork safety: the table belongs to the process that made it. A forked child gets
//! a fresh, empty table on first use and never touches the parent's: its mutex may
//! have been held by the parent's watchdog thread at the instant of the fork, and
//! that thread does not exist in the child.

use crate::clock::Boot;
use crate::fork_wiped;
use crate::net::call::Owned;
use crate::terms::Terms;
use crate::token::Token;
use crate::topology::route::Route;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Identifies one hold in the table; never reused within a process.
pub type HoldId = u64;

/// Whose request a hold belongs to: the thread that took it and, under a worker
/// SAPI that runs many requests inside one PHP request (FrankenPHP's worker mode),
/// the handled request it was taken in. Thread numbers are given on first use and
/// never reused within the process (a thread id can be, once its thread has ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    thread: u64,
    /// The handled request (`begin_handled_request`), or 0 outside any: then only the
    /// end of the PHP request releases the hold.
    handled: u64,
}

thread_local! {
    static THIS_THREAD: Cell<u64> = const { Cell::new(0) };
    /// The handled request in progress on this thread, or 0.
    static HANDLED: Cell<u64> = const { Cell::new(0) };
    /// The number the last handled request on this thread was given.
    static LAST_HANDLED: Cell<u64> = const { Cell::new(0) };
}

impl Owner {
    /// The calling thread, in its current handled request if any.
    pub fn current() -> Owner {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let thread = THIS_THREAD.with(|this| {
            if this.get() == 0 {
                this.set(NEXT.fetch_add(1, Ordering::Relaxed));
            }
            this.get()
        });
        Owner { thread, handled: HANDLED.with(Cell::get) }
    }
}

/// A worker SAPI starts a handled request on the calling thread: holds taken from now
/// until `end_handled_request` belong to it. Numbers are per thread; 0 is never given.
pub fn begin_handled_request() {
    let n = LAST_HANDLED.with(|last| {
        last.set(last.get().wrapping_add(1).max(1));
        last.get()
    });
    HANDLED.with(|h| h.set(n));
}

/// A hold's share of what its kind keeps, handed over with the hold so that the
/// table, the watchdog and request end know no kind: where it lives, and its
/// renewal and its release as script calls. A `Lock`'s key (in write or read mode), a
/// `Semaphore`'s permits, one slot group of a `MultiLock`.
pub trait Part: Send + Sync + std::fmt::Debug {
    /// Where its commands run.
    fn route(&self) -> &Route;
    /// The lock key that names it (its first, for a group of keys).
    fn key(&self) -> &[u8];
    /// Whether it holds the lock key `lock` (a release by token through another object).
    fn covers(&self, lock: &[u8]) -> bool {
        self.key() == lock
    }
    /// Its renewal of `token` to `lease_ms` ('0': no expiry): a token-checked write
    /// that answers 1 when renewed, 0 when the token no longer holds what it held.
    fn renew<'a>(&'a self, token: &'a [u8], lease_ms: &'a [u8]) -> Owned<'a>;
    /// Its release of `token`, as sent when nobody waits for the answer (request end,
    /// the object's end); `None` for a token that releases nothing.
    fn release<'a>(&'a self, token: &'a [u8]) -> Option<Owned<'a>>;
}

/// One acquisition, from the moment it succeeded until it is released.
#[derive(Debug)]
pub struct Hold {
    /// The thread whose request took it (and the handled request, under a worker
    /// SAPI): only that request's end releases it.
    pub owner: Owner,
    /// What it holds, where, and how it is renewed and released.
    pub part: Arc<dyn Part>,
    pub token: Token,
    /// Present while the watchdog renews this hold.
    pub renew: Option<Box<Renewal>>,
    /// Until when its lease surely lasts, on this host's boot clock (less the drift):
    /// from the acquisition, then from each confirmed renewal or extension. `None`:
    /// the lease never ends. This is what the hold promises (`getRemainingLifetime()`).
    pub until: Option<Boot>,
    /// When renewal found the key gone or held by another token, if it did.
    pub lost: Option<Instant>,
    /// Released when its object goes away or the request ends (`auto_release`).
    pub auto_release: bool,
    /// Its object is gone and it is not auto-released: it stays only while the
    /// watchdog renews it, and leaves the table when renewal ends.
    pub orphan: bool,
    /// Its name's pool-wide metrics (`metrics`), when they are on.
    pub meter: crate::metrics::SlotId,
}

/// The watchdog's schedule for one hold.
#[derive(Debug)]
pub struct Renewal {
    /// The lease each renewal sets.
    pub lease: Duration,
    /// When the next renewal is due.
    pub due: Instant,
    /// When renewal stops for good (`max_hold`), if ever.
    pub until: Option<Instant>,
    /// A durable hold's renewal counts once acknowledged (`durable`).
    pub durable: Option<crate::terms::Durable>,
}

impl Renewal {
    /// Renews every third of the lease, starting a third of a lease from `now`: two
    /// renewals can fail before the lease runs out.
    pub fn new(lease: Duration, now: Instant, max_hold: Option<Duration>) -> Self {
        Renewal {
            lease,
            due: now + interval(lease),
            until: max_hold.and_then(|m| now.checked_add(m)),
            durable: None,
        }
    }
}

impl Renewal {
    /// The schedule of a hold on these terms whose lease surely lasts `until`, found
    /// fresh just now: none without `auto_renew`, or for a lease that never ends. It
    /// counts from when the lease began (a lease before `until`), not from now.
    /// Boxed: most holds have none, and a small `Hold` moves cheaply.
    pub fn for_terms(terms: &Terms, until: Option<Boot>) -> Option<Box<Self>> {
        let lease = terms.lease.filter(|_| terms.auto_renew)?;
        let now = Instant::now();
        let gone = until.map_or(Duration::ZERO, |u| lease.saturating_sub(u.left()));
        let began = now.checked_sub(gone).unwrap_or(now);
        let mut r = Renewal::new(lease, began, terms.max_hold);
        r.durable = terms.durable;
        Some(Box::new(r))
    }
}

/// Time between two renewals of a lease.
pub fn interval(lease: Duration) -> Duration {
    (lease / 3).max(Duration::from_millis(1))
}

/// What the table says about a hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Held,
    /// The watchdog found the lock taken from it.
    Lost,
    /// Not in the table (released, or forgotten).
    Gone,
}

/// Hashes hold ids. They are this process's own sequence numbers, never a
/// caller's, so the table needs no flood-resistant hash (SipHash was two
/// hundred instructions of a lock cycle): one multiply spreads them.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) struct Table {
    next_id: HoldId,
    pub(crate) holds: HashMap<HoldId, Hold, BuildHasherDefault<IdHasher>>,
    /// Asks the watchdog thread to end.
    pub(crate) stop: bool,
    /// The watchdog sleeps, until this instant (`Some(None)`: until woken).
    pub(crate) asleep: Option<Option<Instant>>,
    thread: Option<JoinHandle<()>>,
}

/// The table of one process, with the condition the watchdog sleeps on.
pub(crate) struct Shared {
    pid: u32,
    table: Mutex<Table>,
    pub(crate) wake: Condvar,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Table> {
        // Nothing is left half-written by a panic that matters more than going on.
        self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

static CURRENT: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

/// This process's table, made on first use (and again in a forked child).
fn shared() -> &'static Shared {
    let pid = fork_wiped::pid();
    let current = CURRENT.load(Ordering::Acquire);
    // SAFETY: every pointer stored in CURRENT comes from Box::leak and is never freed.
    if let Some(s) = unsafe { current.as_ref() } {
        if s.pid == pid {
            return s;
        }
    }
    let fresh: &'static Shared = Box::leak(Box::new(Shared {
        pid,
        table: Mutex::new(Table {
            next_id: 1,
            holds: HashMap::default(),
            stop: false,
            asleep: None,
            thread: None,
        }),
        wake: Condvar::new(),
    }));
    // The parent's table (if any) is left as it is: leaked in this process, never locked.
    match CURRENT.compare_exchange(
        current,
        fresh as *const Shared as *mut Shared,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => fresh,
        // Another thread of this process got there first.
        // SAFETY: as above.
        Err(winner) => unsafe { winner.as_ref() }.unwrap_or(fresh),
    }
}

/// This process's table, if it has one: never makes one.
fn existing() -> Option<&'static Shared> {
    // SAFETY: as in `shared`.
    unsafe { CURRENT.load(Ordering::Acquire).as_ref() }.filter(|s| s.pid == fork_wiped::pid())
}

/// Records a new hold. When it is to be renewed and the process has no watchdog
/// thread yet, `spawn` starts one (the table runs no thread of its own: `claim`
/// hands in `watchdog::spawn`).
pub(crate) fn add(hold: Hold, spawn: fn(&'static Shared) -> Option<JoinHandle<()>>) -> HoldId {
    let s = shared();
    let mut t = s.lock();
    let id = t.next_id;
    t.next_id += 1;
    let due = hold.renew.as_ref().map(|r| r.due);
    t.holds.insert(id, hold);
    if let Some(due) = due {
        if t.thread.is_none() {
            t.stop = false;
            t.thread = spawn(s);
        }
        // Wake the watchdog only if it would sleep past this hold's first renewal: with
        // long leases that is rare, and a wake-up is a context switch on every acquire.
        if let Some(until) = t.asleep {
            if until.is_none_or(|u| due < u) {
                s.wake.notify_one();
            }
        }
    }
    id
}

/// Where a hold stands.
pub fn status(id: HoldId) -> Status {
    let Some(s) = existing() else { return Status::Gone };
    match s.lock().holds.get(&id) {
        Some(h) if h.lost.is_some() => Status::Lost,
        Some(_) => Status::Held,
        None => Status::Gone,
    }
}

/// Removes a hold from the table (its lock is released, or about to be).
pub fn remove(id: HoldId) -> Option<Hold> {
    existing()?.lock().holds.remove(&id)
}

/// Marks a hold lost: its token no longer holds the key.
pub fn mark_lost(id: HoldId) {
    if let Some(s) = existing() {
        if let Some(h) = s.lock().holds.get_mut(&id) {
            h.mark_lost(Instant::now());
        }
    }
}

/// Until when the hold `id` surely lasts (`Hold::until`), if it is in the table and
/// not lost: `Some(None)` when its lease never ends.
pub fn held_until(id: HoldId) -> Option<Option<Boot>> {
    let s = existing()?;
    let t = s.lock();
    let hold = t.holds.get(&id).filter(|h| h.lost.is_none())?;
    Some(hold.until)
}

/// When the hold `id` was found lost, if it was.
pub fn lost_at(id: HoldId) -> Option<Instant> {
    existing()?.lock().holds.get(&id).and_then(|h| h.lost)
}

impl Hold {
    /// Its token was found no longer holding the key, `at`: nothing more to renew.
    pub fn mark_lost(&mut self, at: Instant) {
        if self.lost.is_none() {
            self.meter.note(crate::stats::Counter::Lost);
            self.lost = Some(at);
        }
        self.renew = None;
    }
}

/// After `extendLock()`, sent at `sent`: the hold lasts until its new lease ends, and
/// the watchdog renews with that lease from now on. A lease of `None` (no expiry)
/// leaves nothing to renew.
pub fn set_lease(id: HoldId, lease: Option<Duration>, sent: Boot) {
    if let Some(s) = existing() {
        let mut t = s.lock();
        let Some(hold) = t.holds.get_mut(&id) else { return };
        let Some(lease) = lease else {
            hold.renew = None;
            hold.until = None;
            return;
        };
        hold.until = Some(crate::clock::lease_end(sent, lease));
        if let Some(r) = hold.renew.as_mut() {
            r.lease = lease;
            r.due = Instant::now() + interval(lease);
            // A shorter lease may need an earlier renewal than the watchdog plans.
            if t.asleep.is_some() {
                s.wake.notify_one();
            }
        }
    }
}

/// After a renewal sent at `sent` with `lease` (`None`: no expiry) that may have
/// landed without being confirmed (a lost reply, a durable check refused, a later
/// part failing): the hold lasts until the lesser of its bound and the new lease, as
/// the server may now keep either. The watchdog goes on as it was.
pub fn cap_lease(id: HoldId, lease: Option<Duration>, sent: Boot) {
    let Some(lease) = lease else { return };
    if let Some(s) = existing() {
        if let Some(hold) = s.lock().holds.get_mut(&id) {
            hold.cap(crate::clock::lease_end(sent, lease));
        }
    }
}

impl Hold {
    /// The bound is at most `end`.
    pub fn cap(&mut self, end: Boot) {
        self.until = Some(self.until.map_or(end, |u| u.min(end)));
    }
}

/// After an extension of `token` (sent at `sent`, to `lease`; `None`: no expiry) by
/// one object, on `parts`: this process's other holds of that token on those keys
/// (the token shared by several objects, a chosen one or one handed on) keep the
/// lesser of their bound and the new lease, since the server's may now be shorter;
/// with `lost`, the token holds none of them any more, and they are lost. `except`:
/// the extending object's own holds, which it updates itself.
pub fn follow(
    parts: &[&dyn Part],
    token: &[u8],
    except: &[HoldId],
    lease: Option<Duration>,
    sent: Boot,
    lost: bool,
) {
    let Some(s) = existing() else { return };
    let mut t = s.lock();
    let now = Instant::now();
    for (id, h) in t.holds.iter_mut() {
        let shared = h.token == token
            && !except.contains(id)
            && parts.iter().any(|p| p.covers(h.part.key()) || h.part.covers(p.key()));
        if !shared || h.lost.is_some() {
            continue;
        }
        if lost {
            h.mark_lost(now);
        } else if let Some(lease) = lease {
            h.cap(crate::clock::lease_end(sent, lease));
        }
    }
}

/// Drops the holds of `token` on the lock key `lock`, if this process has any (a
/// release by token, possibly through another object than the one that acquired).
pub fn forget(lock: &[u8], token: &[u8]) {
    if let Some(s) = existing() {
        s.lock().holds.retain(|_, h| !(h.token == token && h.part.covers(lock)));
    }
}

/// Its object is gone: an `auto_release => false` hold stays in the table only while
/// the watchdog renews it (as long as this process lives, or until `max_hold`).
pub fn orphan(id: HoldId) {
    if let Some(s) = existing() {
        let mut t = s.lock();
        match t.holds.get_mut(&id) {
            Some(h) if h.renew.is_some() => h.orphan = true,
            Some(_) => {
                t.holds.remove(&id);
            }
            None => {}
        }
    }
}

/// Request end, in the calling thread: takes out that thread's holds to release (the
/// caller releases them); its `auto_release => false` ones become orphans (see
/// `orphan`). Other threads' holds stay as they are.
pub fn take_auto_released() -> Vec<Hold> {
    let thread = Owner::current().thread;
    take_owned(|o| o.thread == thread)
}

/// The end of a handled request (`begin_handled_request`) in the calling thread: as
/// `take_auto_released`, for the holds taken during it only. What the worker took
/// outside any handled request stays until the PHP request ends. The thread is then
/// outside any handled request.
pub fn end_handled_request() -> Vec<Hold> {
    let owner = Owner::current();
    HANDLED.with(|h| h.set(0));
    if owner.handled == 0 {
        return Vec::new();
    }
    take_owned(|o| *o == owner)
}

fn take_owned(mine: impl Fn(&Owner) -> bool) -> Vec<Hold> {
    let Some(s) = existing() else { return Vec::new() };
    let mut t = s.lock();
    let ids: Vec<HoldId> =
        t.holds.iter().filter(|(_, h)| mine(&h.owner)).map(|(&id, _)| id).collect();
    let mut out = Vec::new();
    for id in ids {
        let Some(h) = t.holds.get_mut(&id) else { continue };
        if !h.auto_release && h.renew.is_some() {
            h.orphan = true;
        } else if let Some(h) = t.holds.remove(&id) {
            if h.auto_release {
                out.push(h);
            }
        }
    }
    out
}

/// Stops this process's watchdog and waits for it (module shutdown). A forked child
/// has no watchdog of its parent's to stop.
pub fn shutdown() {
    // A forked child must see its own pid here, or it would join its parent's thread.
    let Some(s) = existing() else { return };
    let thread = {
        let mut t = s.lock();
        t.stop = true;
        s.wake.notify_all();
        t.thread.take()
    };
    if let Some(thread) = thread {
        let _ = thread.join();
    }
}

/// How many holds this process has (for tests and phpinfo).
pub fn count() -> usize {
    existing().map_or(0, |s| s.lock().holds.len())
}

/// Whether this process's watchdog thread is running.
pub fn watchdog_running() -> bool {
    existing().is_some_and(|s| s.lock().thread.is_some())
}
