//! The lock itself: acquire, wait, release.
//!
//! Every try is one script call that runs `SET NX PX` and, when the lock is busy,
//! can queue the caller in the same step. A blocking `addLock()` queues once and
//! then sleeps on its wake subscriber; the releaser's script hands the lock
//! straight to the first waiter still listening and tells it so. No one polls,
//! and each release wakes at most one process.
//!
//! Fairness: in fair mode the queue order is strict. By default one exception
//! keeps tight loops of very short critical sections fast: a lock held for less
//! than `SHORT_HOLD`, by a process that came back for it within `QUICK_RETURN` of
//! its previous release, is only freed on release, so that its releaser may take
//! it again without a process switch, but only while the first waiter has waited
//! less than `PATIENCE_MS`; after that, release hands over whatever the hold time.
//! A holder that is not in such a loop hands over at once: a lock left free while
//! others wait would sit idle until their timers. So does a loop that ends: the
//! object's end hands a lock it left free to the queue (`KICK`).
//!
//! The wait itself (queue entry, private channel, timer, polling fallback) is
//! `waiting`'s, shared with the other kinds of hold; this module supplies the
//! scripts. Lost signals cannot strand a waiter: it also wakes when the holder's
//! lease runs out (a crashed holder never releases), or at its own deadline.

mod acquire;
mod inspect;
mod release;

pub use inspect::{inspect_key, Inspection, State};
pub use release::{release_all_held, release_handled_request_held};
use release::{fire_release, release_hold, release_token, Release, Released};

use crate::clock::Boot;
use crate::config::Settings;
use crate::terms::{self, Terms};
use crate::error::{LockError, Result};
use crate::hold::claim::Claim;
use crate::hold::table::{self, Hold, Kind, Owner, RenewBy, Renewal, Status};
use crate::keys::LockKeys;
use crate::net::pool::Retry;
use crate::topology::route::{Extended, Route};
use crate::kinds::retake;
use crate::kinds::semaphore;
use crate::fork_wiped;
use crate::net::call::Call;
use crate::net::wire::{self, Watch};
use crate::net::resp;
use crate::kinds::scripts::{ACQUIRE, CANCEL, FENCE, KICK, RELEASE, RENEW, TAKE};
use crate::kinds::shared::{DOWNGRADE, HOLDS, READ_ACQUIRE, READ_RELEASE, READ_RENEW};
use crate::token::{self, Token};
use crate::wait::backoff::Backoff;
use crate::wait::waiting::{self, Try, Waited, Waiter};
use redis::{ErrorKind, RedisError, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long (ms, as the scripts take it) the first waiter lets short holds pass it
/// over before release must hand over.
pub(crate) const PATIENCE_MS: &str = "5";

/// Set once this process has asked for a fencing token: from then on its
/// acquisitions issue one in the same step (no extra round trip when it is read).
/// Process-wide, not per name: names like `order:<id>` never come back.
static EAGER_FENCING: AtomicBool = AtomicBool::new(false);

/// The queue outlives the longest wait in it by this much, so a waiter's
/// last look at it (at its deadline) still finds it.
const QUEUE_SLACK: Duration = Duration::from_secs(5);

/// One named lock and the token it last acquired.
///
/// While it holds the lock, the lock is in the process's table of holds (`hold::table`):
/// dropping the object releases it, and so does request end (`release_all_held`),
/// but never in a forked child, whose copy of the object belongs to the parent.
pub struct Lock {
    name: Vec<u8>,
    keys: Arc<LockKeys>,
    /// Its wait, lease and keeping.
    terms: Terms,
    fencing: bool,
    /// Replicas that must acknowledge an acquisition (`WAIT`), 0 for none.
    wait_replicas: u32,
    /// Where the key's commands run: one server, a cluster slot, or a Redlock quorum.
    route: Route,
    /// This object's last hold: its token and its entry in the table of holds.
    claim: Claim,
    /// When this object acquired its token.
    acquired_at: Option<Instant>,
    /// The connection `synchronized()`'s hold was taken (or last extended) on
    /// (`Route::serial`, set by `acquire_or_fail` and `extend`): the
    /// release that ends `synchronized()` goes unawaited only while it is the same
    /// one, unclosed (`Route::intact`). A server that restarted without its data, or
    /// a failover, closed it, and may have forgotten the hold: the release then waits
    /// for its answer, and tells the caller.
    serial: Option<u64>,
    /// The fencing token of the last acquisition, once issued (at the acquisition, or
    /// when first asked for); kept after the release.
    fence: Option<i64>,
    /// Whether this object ever acquired: before that there is no fencing token to ask for.
    ever_held: bool,
    /// What `token` holds: the write lock or a read share.
    kind: Kind,
    /// Whether the acquisition in progress takes a token the caller chose (which may be
    /// another holder's too), rather than one of its own.
    caller_token: bool,
    /// Whether this process came back for the lock within `QUICK_RETURN` of its last
    /// release (set by each acquisition): only then may a short hold be re-taken.
    quick: bool,
    /// When (and in which process) this object's last release freed the lock for a
    /// re-take while waiters were queued; its end hands the lock to them.
    left_free: Option<(Instant, u32)>,
    /// Record who holds it (`owner_info`; never on a Redlock quorum, which keeps only the key).
    owner_info: bool,
    /// The record of the acquisition in progress (`owner::record`), empty when none is kept.
    record: Vec<u8>,
}

/// How an acquisition takes the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Write,
    Read,
    /// A read share becoming the write lock, same token.
    Upgrade,
}

impl Mode {
    fn kind(self) -> Kind {
        match self {
            Mode::Read => Kind::Read,
            _ => Kind::Write,
        }
    }

    /// The `f` of a queue entry (see `scripts`).
    fn entry_flag(self, fence: bool) -> u8 {
        match self {
            Mode::Read => b'r',
            _ if fence => b'1',
            _ => b'0',
        }
    }
}

impl Lock {
    /// Validates everything up front, so that a bad argument never reaches Redis.
    pub fn new(name: &[u8], time_out: f64, lock_out: f64, settings: &Settings) -> Result<Self> {
        if name.is_empty() {
            return Err(LockError::InvalidValue(
                "Lock::__construct(): Argument #1 ($key) must not be empty".to_string(),
            ));
        }
        let wait = terms::time_out(time_out)?;
        let ttl_ms = terms::lock_out_ms(lock_out)?;
        settings.check()?;
        if ttl_ms == terms::NO_EXPIRY && !settings.servers.is_empty() {
            return Err(LockError::InvalidValue(
                "Lock::__construct(): Argument #3 ($lockOut) must be finite with Redlock (\"servers\"): its safety rests on the lease".to_string(),
            ));
        }
        let mut key = Vec::with_capacity(settings.prefix.len() + name.len());
        key.extend_from_slice(&settings.prefix);
        key.extend_from_slice(name);
        if settings.fair && !settings.servers.is_empty() {
            return Err(LockError::InvalidValue(
                "option \"fair\" needs a queue, which Redlock (\"servers\") does not keep".to_string(),
            ));
        }
        let keys = Arc::new(LockKeys::new(key));
        let route = Route::for_key(settings, &keys.lock)?;
        let owner_info = settings.owner_info && !route.lease_only();
        retake::note_made(keys.id);
        Ok(Lock {
            name: name.to_vec(),
            keys,
            terms: Terms::new(settings, wait, ttl_ms),
            // Independent counters give no order across holders: see docs/redlock.md.
            fencing: settings.fencing && !route.lease_only(),
            wait_replicas: settings.wait_replicas,
            route,
            claim: Claim::default(),
            acquired_at: None,
            serial: None,
            fence: None,
            ever_held: false,
            kind: Kind::Write,
            caller_token: false,
            quick: false,
            left_free: None,
            owner_info,
            record: Vec::new(),
        })
    }

    /// The key as given, without the prefix.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// The token this object last acquired, if it still believes it holds one.
    pub fn token(&self) -> Option<&[u8]> {
        self.claim.token.as_deref()
    }

    /// The fencing token of this object's last acquisition: `None` before the first,
    /// or with `fencing` off.
    ///
    /// Issued lazily: an acquisition takes a number only in a process that has asked
    /// for one before. Otherwise the first call takes it now, with a token-checked
    /// `INCR` that runs only while this object's token still holds the key, which
    /// keeps the number inside this holder's tenure (see the README). A token that no
    /// longer holds the key gets `LockError::Unfenced`, never `None`: a storage check
    /// that skips missing numbers would let the stale holder through.
    pub fn fencing_token(&mut self) -> Result<Option<i64>> {
        if !self.fencing || (self.kind == Kind::Read && self.claim.token.is_some()) {
            return Ok(None);
        }
        EAGER_FENCING.store(true, Ordering::Relaxed);
        if self.fence.is_some() || !self.ever_held {
            return Ok(self.fence);
        }
        let lost = || LockError::Unfenced { key: String::from_utf8_lossy(&self.name).into_owned() };
        let Some(token) = self.claim.token.clone() else { return Err(lost()) };
        if self.claim.own().is_some_and(|id| table::status(id) == Status::Lost) {
            return Err(lost());
        }
        let k = &self.keys;
        let number = self.run(Retry::IfStale, |conn, _| {
            let reply = FENCE.run(conn, &[&k.lock, &k.fence], &[&token])?;
            resp::int(&reply).ok_or_else(|| unexpected("fence", &reply))
        })?;
        if number <= 0 {
            return Err(lost());
        }
        self.fence = Some(number);
        Ok(Some(number))
    }

    /// Whether acquisitions issue their fencing token in the same step.
    fn eager_fencing(&self) -> bool {
        self.fencing && EAGER_FENCING.load(Ordering::Relaxed)
    }

    /// One try, with `chosen` as the token or a fresh random one. `Ok(Some(token))`
    /// when acquired, `Ok(None)` when the key is held (by any token, this one too:
    /// taking is never re-entry) or, in fair mode, when others already wait for it.
    /// An object that holds a read share upgrades it (see `acquire`).
    pub fn try_acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        self.obtain(chosen, Kind::Write, false, "Lock::tryLock()")
    }

    /// One try for a read share (see `acquire_read`).
    pub fn try_acquire_read(&mut self) -> Result<Option<Token>> {
        self.obtain(None, Kind::Read, false, "Lock::tryReadLock()")
    }

    /// Waits up to the object's `$timeOut` for a read share: many readers hold the
    /// lock at once, no writer meanwhile, and a reader queues behind any waiting
    /// writer (see `shared`). An object that holds the write lock downgrades it, in
    /// one step; one that holds a read share already gets `None`.
    pub fn acquire_read(&mut self) -> Result<Option<Token>> {
        self.obtain(None, Kind::Read, !self.terms.wait.is_zero(), "Lock::addReadLock()")
    }

    /// Tries until acquired or until the object's `$timeOut` has passed, sleeping
    /// between tries until the lock is handed over (see the module comment).
    /// `chosen` is the token to take it with (default: a fresh random one).
    ///
    /// An object that holds a read share upgrades it, keeping its token: it gets the
    /// write lock once it is the only reader, waiting first in line meanwhile (two
    /// readers that both wait to upgrade wait for each other until their deadlines).
    pub fn acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        self.obtain(chosen, Kind::Write, !self.terms.wait.is_zero(), "Lock::addLock()")
    }

    /// Deletes the key if it holds `token` (default: this object's token), or hands it
    /// to the first process waiting for it. Returns whether this call released it.
    ///
    /// A lock the watchdog found taken from this object returns false at once.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        // Only this object knows how long it held the lock; a token from elsewhere hands over.
        let short = retake::short_hold(self.terms.fair, self.quick, self.acquired_at);
        let (route, keys, reading) = (&self.route, &self.keys, self.kind == Kind::Read);
        let mut outcome = (Released::No, false);
        let released = self.claim.release_with(keys, token, "lock", &self.name, |token, own| {
            let what = if own && reading { Release::Read(token) } else { Release::Token(token, short && own) };
            outcome = (release_token(route, keys, what)?, own);
            Ok(outcome.0 != Released::No)
        })?;
        if let (done, true) = outcome {
            let now = Instant::now();
            retake::note_released(keys.id, now);
            self.left_free = (done == Released::LeftFree).then(|| (now, fork_wiped::pid()));
        }
        Ok(released)
    }

    /// Frees the key whoever holds it, handing it to the first waiter as a release
    /// does. Returns whether a holder was removed. A hold of this object's that it
    /// removes is over for the object too.
    pub fn force_release(&mut self) -> Result<bool> {
        let released = release_token(&self.route, &self.keys, Release::Any)? != Released::No;
        // Whatever this object held on the key is gone now.
        if let Some(token) = self.claim.token.clone() {
            self.claim.released(true, &self.keys, &token);
        }
        Ok(released)
    }

    /// Sets the lease of the key to `lock_out` seconds (default: the object's
    /// `$lockOut`) from now, if it still holds `token` (default: this object's).
    /// Returns false when the token no longer holds the key.
    pub fn extend(&mut self, token: Option<&[u8]>, lock_out: Option<f64>) -> Result<bool> {
        let ms = terms::extension_ms("Lock::extendLock(): Argument #2 ($lockOut)", lock_out, self.terms.lease)?;
        if ms == terms::NO_EXPIRY && self.route.lease_only() {
            return Err(LockError::InvalidValue(
                "Lock::extendLock(): Argument #2 ($lockOut) must be finite with Redlock (\"servers\"): its safety rests on the lease".to_string(),
            ));
        }
        let Some(token) = self.claim.live(token) else { return Ok(false) };
        let own_hold = self.claim.own_for(&token);
        let key = &self.keys.lock[..];
        let ms_arg = ms.to_string();
        let sent = Boot::now();
        let lease = Duration::from_millis(ms);
        let renew = |script, keys: &[&[u8]]| self.route.renew(&Call::Script(script, keys, &[&token, ms_arg.as_bytes()]), lease);
        let reading = own_hold.is_some() && self.kind == Kind::Read;
        let owner = &self.keys.owner[..];
        let extended = match if reading { Extended::Lost } else { renew(&RENEW, &[key, owner])? } {
            // Not a writer's token: it may be a reader's (a lease-only route has none).
            Extended::Lost if (reading || own_hold.is_none()) && !self.route.lease_only() => renew(&READ_RENEW, &[key, &self.keys.readers, owner])?,
            other => other,
        };
        let extended = match extended {
            Extended::Yes => true,
            Extended::Lost => false,
            // Not confirmed (a quorum's renewal ran out of time): not known to be lost either.
            Extended::No => return Ok(false),
        };
        Claim::renewed(own_hold, extended, (ms != terms::NO_EXPIRY).then_some(lease), sent);
        if extended && own_hold.is_some() {
            self.serial = self.route.serial();
        }
        Ok(extended)
    }

    /// How long this object's hold surely lasts from now (`Claim::remaining`): `None`
    /// when its lease never ends.
    pub fn remaining(&self) -> Option<Duration> {
        self.claim.remaining()
    }

    /// Whether the key holds `token` (default: this object's token) right now.
    pub fn is_owned(&self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.claim.live(token) else { return Ok(false) };
        let key = &self.keys.lock[..];
        match self.route.ask(&Call::Command(&[b"GET", key]))? {
            Value::BulkString(h) if h == token => Ok(true),
            // Read mode: is the token a live reader?
            Value::BulkString(h) if h.is_empty() => {
                let k = &self.keys;
                let reply = self.route.ask(&Call::Script(&HOLDS, &[&k.lock, &k.readers], &[&token]))?;
                Ok(resp::int(&reply) == Some(2))
            }
            _ => Ok(false),
        }
    }

    /// The key's remaining lease in seconds: `None` when it is free, infinite when it
    /// has no expiry (set by something else than this extension).
    pub fn ttl(&self) -> Result<Option<f64>> {
        Ok(self.route.pttl(&self.keys.lock)?.map(|ms| ms.map_or(f64::INFINITY, |ms| ms as f64 / 1000.0)))
    }

    /// Acquires like `acquire()`, but a lock that cannot be had within the wait is a
    /// `LockError::Timeout` (`synchronized()`). Remembers the connection it was taken
    /// on, for `finish` (read here, not in every `addLock()`, which has no use for it).
    pub fn acquire_or_fail(&mut self) -> Result<Token> {
        let token = self.acquire(None)?.ok_or_else(|| LockError::timeout("lock", &self.name, self.terms.wait))?;
        self.serial = self.route.serial();
        Ok(token)
    }

    /// Releases `token` after the work it protected (`synchronized()`). An error when
    /// the token was still this object's but no longer held the key: the work
    /// outlived the lock. A token the work released itself is no error.
    ///
    /// While the lease surely lasts (by more than `read_timeout`, as this process
    /// counts) and the server has not closed the connection the hold was taken on,
    /// the release is sent unawaited: it cannot find the hold lost then.
    pub fn finish(&mut self, token: &[u8]) -> Result<()> {
        if !self.route.lease_only() && self.claim.surely_held(token, self.terms.read_timeout) && self.route.intact(self.serial) {
            return self.release_unawaited(token);
        }
        let (ours, lost_ago) = (self.claim.is(token), self.claim.lost_ago(token));
        let released = self.release(Some(token))?;
        self.claim.finished(ours, lost_ago, released, "lock", &self.name)
    }

    /// Releases this object's hold `token` without waiting for Redis's answer (see
    /// `release`'s module comment).
    fn release_unawaited(&mut self, token: &[u8]) -> Result<()> {
        let short = retake::short_hold(self.terms.fair, self.quick, self.acquired_at);
        let kind = self.kind;
        let (route, keys) = (&self.route, &self.keys);
        // Its answer, read later, still tells whether the hold lasted (`stats::lost_late`).
        let by = self.claim.until().flatten();
        let watch = Watch { what: "lock", name: self.name.clone(), at_least: 1, by };
        self.claim.release_unawaited(keys, token, || fire_release(route, keys, kind, token, short && kind == Kind::Write, Some(watch)))?;
        let now = Instant::now();
        retake::note_released(self.keys.id, now);
        // Whether a short hold only freed the lock is not known: the object's end
        // hands it to the waiters if it did (`KICK` does nothing otherwise).
        self.left_free = (short && kind == Kind::Write).then(|| (now, fork_wiped::pid()));
        Ok(())
    }

    /// Releases `token` after work that did not return normally (`synchronized()`):
    /// this object's hold without waiting for the answer, errors ignored (the lease
    /// ends the hold then).
    pub fn release_unseen(&mut self, token: &[u8]) {
        if self.claim.own_for(token).is_some() && !self.route.lease_only() {
            let _ = self.release_unawaited(token);
        } else {
            let _ = self.release(Some(token));
        }
    }

    /// Whether anyone holds the lock.
    pub fn is_locked(&self) -> Result<bool> {
        Ok(self.route.ask(&Call::Command(&[b"EXISTS", &self.keys.lock]))? == Value::Int(1))
    }

    /// Runs `op` on the server that holds this lock's key (`Route::run`).
    fn run<T>(&self, retry: Retry, op: impl FnMut(&mut crate::net::wire::Connection, bool) -> redis::RedisResult<T>) -> Result<T> {
        self.route.run(retry, op)
    }
}

impl Drop for Lock {
    /// A lock still held when its object goes away is released, unless the object is
    /// a forked child's copy: the lock is its parent's then.
    fn drop(&mut self) {
        // With auto_release off the lock outlives its object: only its lease or a
        // release by token ends it.
        if let Some(hold) = self.claim.end(self.terms.auto_release) {
            release_hold(&hold);
        } else if let Some((at, pid)) = self.left_free {
            // A lock this object left free for its own re-take goes to the waiters now,
            // unless a new object for the same lock was made since (`$lock = new
            // Lock(...)` in a loop): that one is about to take it again.
            let remade = retake::remade_since(self.keys.id, at);
            if pid == fork_wiped::pid() && !remade {
                let k = &self.keys;
                let _ = self.route.fire(&Call::Script(&KICK, &k.all(), &[PATIENCE_MS.as_bytes()]), None);
            }
        }
    }
}

/// How the watchdog renews a writer's hold: the token-checked `RENEW` on the key.
pub(crate) static WRITE_RENEWAL: RenewBy = RenewBy { script: &RENEW, keys: write_keys };
/// How it renews a reader's share: its own lease in the readers' set (`READ_RENEW`).
pub(crate) static READ_RENEWAL: RenewBy = RenewBy { script: &READ_RENEW, keys: read_keys };

fn write_keys(k: &LockKeys) -> Vec<&[u8]> {
    vec![&k.lock, &k.owner]
}

fn read_keys(k: &LockKeys) -> Vec<&[u8]> {
    vec![&k.lock, &k.readers, &k.owner]
}

/// `remaining()` in seconds, as PHP shows it: INF for a lease that never ends.
pub fn seconds(remaining: Option<Duration>) -> f64 {
    remaining.map_or(f64::INFINITY, |d| d.as_secs_f64())
}

/// Redlock keeps no queue and no readers: shared holds need one server, Sentinel or Cluster.
fn redlock_refuses(what: &str) -> LockError {
    LockError::InvalidValue(format!(
        "{what}: shared locks need one server, Sentinel or Cluster; Redlock (\"servers\") keeps no readers' leases on a majority"
    ))
}

/// A reply of a shape the script never gives: the server is not what it seems.
fn unexpected(script: &str, reply: &Value) -> RedisError {
    RedisError::from((ErrorKind::UnexpectedReturnType, "unexpected reply", format!("{script} script: {reply:?}")))
}
