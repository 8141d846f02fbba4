//! The lock itself: a `Holder` (the core) of one key, writers and readers.
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
//! object's end hands a lock it left free to the queue (`kick`).
//!
//! Read mode (shared holds): many readers at once, no writer meanwhile. Nobody
//! starves: a reader joins only when no one waits ahead of it, so once a writer
//! queues, new readers queue behind it. A reader that asks for the write lock (an
//! upgrade) queues first in line, and gets it when it is the only reader left; a
//! writer that asks for a read share (a downgrade) gets it in the same step as it
//! gives up the write lock, so no writer can enter in between. See `scripts`.

mod inspect;
mod kind;
mod part;
pub mod scripts;

pub use inspect::{inspect_key, Inspection, State};
pub(crate) use part::{As, LockPart};

use crate::clock::Boot;
use crate::config::Settings;
use crate::error::{LockError, Result};
use crate::hold::table::{self, Status};
use crate::keys::LockKeys;
use crate::kinds::core::waiting::Numbers;
use crate::kinds::core::{Common, Drive, Holder};
use crate::kinds::retake;
use crate::net::call::Call;
use crate::net::resp;
use crate::terms::{self, Terms};
use crate::token::{self, Token};
use crate::topology::route::Route;
use crate::topology::rules::{self, Need};
use kind::{Held, LockKind, Mode};
use redis::Value;
use scripts::{Downgrade, Fence, Holds};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Set once this process has asked for a fencing token: from then on its
/// acquisitions issue one in the same step (no extra round trip when it is read).
/// Process-wide, not per name: names like `order:<id>` never come back.
static EAGER_FENCING: AtomicBool = AtomicBool::new(false);

/// One named lock and the token it last acquired.
///
/// While it holds the lock, the lock is in the process's table of holds (`hold::table`):
/// dropping the object releases it, and so does request end (`core::release_all_held`),
/// but never in a forked child, whose copy of the object belongs to the parent.
pub struct Lock {
    /// Boxed: an object is made once and moved several times on its way into PHP's
    /// object (a `new Lock` per request paid a few hundred instructions of copies).
    pub(super) h: Box<Holder<LockKind>>,
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
        let topology = settings.check()?;
        rules::check(
            &topology,
            settings,
            &[Need::Expiry("Lock::__construct(): Argument #3 ($lockOut)", ttl_ms), Need::Fair],
        )?;
        let mut key = Vec::with_capacity(settings.prefix.len() + name.len());
        key.extend_from_slice(&settings.prefix);
        key.extend_from_slice(name);
        let route = Route::for_key(&topology, settings, &key)?;
        let keys = LockKeys::new(key);
        let id = keys.id;
        retake::note_made(id);
        let terms = Terms::new(settings, wait, ttl_ms);
        let c = Common::new("lock", name.to_vec(), terms, settings, &topology);
        let part = Arc::new(LockPart { keys, route, held: As::Write });
        Ok(Lock { h: Box::new(Holder::one(c, part, LockKind::new(id, settings.wait_replicas))) })
    }

    fn part(&self) -> &LockPart {
        &self.h.parts[0]
    }

    /// The key as given, without the prefix.
    pub fn name(&self) -> &[u8] {
        &self.h.c.name
    }

    /// The token this object last acquired, if it still believes it holds one.
    pub fn token(&self) -> Option<&[u8]> {
        self.h.token()
    }

    /// The fencing token of this object's last acquisition: `None` before the first,
    /// or with `fencing` off.
    ///
    /// Issued lazily: an acquisition takes a number only in a process that has asked
    /// for one before. Otherwise the first call takes it now, with a token-checked
    /// `INCR` that runs only while this object's token still holds the key, which
    /// keeps the number inside this holder's tenure (see `scripts`). A token that no
    /// longer holds the key gets `LockError::Unfenced`, never `None`: a storage check
    /// that skips missing numbers would let the stale holder through.
    pub fn fencing_token(&mut self) -> Result<Option<i64>> {
        if !self.h.c.fencing || (self.h.kind.held == Held::Read && self.h.token().is_some()) {
            return Ok(None);
        }
        EAGER_FENCING.store(true, Ordering::Relaxed);
        if self.h.c.fences.is_some() || !self.h.c.ever_held {
            return Ok(self.h.c.fences.as_ref().and_then(|f| f.as_slice().first().copied()));
        }
        let lost =
            || LockError::Unfenced { key: String::from_utf8_lossy(self.name()).into_owned() };
        let Some(token) = self.h.token().map(<[u8]>::to_vec) else { return Err(lost()) };
        if self.h.claims[0].own().is_some_and(|id| table::status(id) == Status::Lost) {
            return Err(lost());
        }
        let k = &self.part().keys;
        let reply = self.part().route.ask(&Call::Script(&Fence {
            lock: &k.lock,
            fence: &k.fence,
            token: &token,
        }))?;
        let number =
            resp::int(&reply).ok_or_else(|| self.part().route.unexpected("lock/fence", &reply))?;
        if number <= 0 {
            return Err(lost());
        }
        self.h.c.fences = Some(Numbers::One(number));
        Ok(Some(number))
    }

    /// One try, with `chosen` as the token or a fresh random one. `Ok(Some(token))`
    /// when acquired, `Ok(None)` when the key is held (by any token, this one too:
    /// taking is never re-entry) or, in fair mode, when others already wait for it.
    /// An object that holds a read share upgrades it (see `acquire`).
    pub fn try_acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        self.acquire_as(chosen, Held::Write, false, Drive::Block, "Lock::tryLock()")
    }

    /// One try for a read share (see `acquire_read`).
    pub fn try_acquire_read(&mut self) -> Result<Option<Token>> {
        self.acquire_as(None, Held::Read, false, Drive::Block, "Lock::tryReadLock()")
    }

    /// Waits up to the object's `$timeOut` for a read share: many readers hold the
    /// lock at once, no writer meanwhile, and a reader queues behind any waiting
    /// writer. An object that holds the write lock downgrades it, in one step; one
    /// that holds a read share already gets `None`.
    pub fn acquire_read(&mut self) -> Result<Option<Token>> {
        let wait = !self.h.c.terms.wait.is_zero();
        self.acquire_as(None, Held::Read, wait, Drive::Block, "Lock::addReadLock()")
    }

    /// Tries until acquired or until the object's `$timeOut` has passed, sleeping
    /// between tries until the lock is handed over (see the module comment).
    /// `chosen` is the token to take it with (default: a fresh random one).
    ///
    /// An object that holds a read share upgrades it, keeping its token: it gets the
    /// write lock once it is the only reader, waiting first in line meanwhile (two
    /// readers that both wait to upgrade wait for each other until their deadlines).
    pub fn acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        let wait = !self.h.c.terms.wait.is_zero();
        self.acquire_as(chosen, Held::Write, wait, Drive::Block, "Lock::addLock()")
    }

    /// Starts `acquire` (`read`: `acquire_read`) for an event loop to drive
    /// (`Drive::Loop`): `Ok(None)` with an acquisition pending (`pending`) means it goes
    /// on (`poll`).
    pub fn start(&mut self, chosen: Option<Token>, read: bool) -> Result<Option<Token>> {
        let wait = !self.h.c.terms.wait.is_zero();
        match read {
            false => self.acquire_as(chosen, Held::Write, wait, Drive::Loop, "Lock::waitLock()"),
            true => self.acquire_as(None, Held::Read, wait, Drive::Loop, "Lock::waitReadLock()"),
        }
    }

    /// Every acquisition: what this object holds decides the mode (a downgrade, an
    /// upgrade), then the core's way in. `method` names the PHP method in errors.
    fn acquire_as(
        &mut self,
        chosen: Option<Token>,
        want: Held,
        wait: bool,
        drive: Drive,
        method: &str,
    ) -> Result<Option<Token>> {
        let start = Instant::now();
        if want == Held::Read {
            rules::refuse(&self.part().route, Need::Readers(method))?;
        }
        let chosen_token = chosen.is_some();
        let held = self.live_hold();
        let mode = match (want, held) {
            (Held::Read, Some(Held::Read)) => return Ok(None),
            (Held::Read, Some(Held::Write)) => return self.downgrade(),
            (Held::Write, Some(Held::Read)) => Mode::Upgrade,
            (Held::Read, _) => Mode::Read,
            (Held::Write, _) => Mode::Write,
        };
        let token = match (mode, chosen) {
            (Mode::Upgrade, Some(t)) if Some(&t[..]) != self.h.token() => {
                return Err(LockError::InvalidValue(format!(
                    "{method}: Argument #1 ($token) must be this object's read token, or null: an upgrade keeps its token"
                )))
            }
            (Mode::Upgrade, _) => self.h.token().unwrap_or_default().to_vec(),
            (_, Some(t)) => t,
            (_, None) => token::generate()?,
        };
        // Decided once for the whole wait: a retry that found the key handed over reads
        // the counter, which is this holder's number only if the grant issued one.
        let fence = mode != Mode::Read && self.h.c.fencing && EAGER_FENCING.load(Ordering::Relaxed);
        self.h.kind.begin(mode, fence, start);
        self.h.take(drive, start, token, chosen_token, wait)
    }

    /// What this object holds, as far as it knows: none, or a hold the watchdog
    /// has not found lost.
    fn live_hold(&self) -> Option<Held> {
        let id = self.h.claims[0].own()?;
        (table::status(id) == Status::Held).then_some(self.h.kind.held)
    }

    /// The write lock this object holds becomes a read share, in one step.
    fn downgrade(&mut self) -> Result<Option<Token>> {
        let Some(token) = self.h.token().map(<[u8]>::to_vec) else { return Ok(None) };
        let k = &self.part().keys;
        let sent = Boot::now();
        let call = Downgrade {
            lock: &k.lock,
            queue: &k.queue,
            readers: &k.readers,
            token: &token,
            lease: self.h.c.terms.ttl_arg.as_bytes(),
        };
        let reply = self.part().route.ask(&Call::Script(&call))?;
        let done = resp::int(&reply)
            .ok_or_else(|| self.part().route.unexpected("lock/downgrade", &reply))?;
        if done != 1 {
            // The write lock was lost meanwhile: nothing to downgrade.
            self.h.claims[0].clear();
            return Ok(None);
        }
        self.h.kind.begin(Mode::Read, false, Instant::now());
        Ok(Some(self.h.acquired(
            token,
            None,
            crate::clock::lease_bound(sent, self.h.c.terms.lease),
        )))
    }

    /// Deletes the key if it holds `token` (default: this object's token), or hands it
    /// to the first process waiting for it. Returns whether this call released it.
    ///
    /// A lock the watchdog found taken from this object returns false at once.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        self.h.release(token)
    }

    /// Frees the key whoever holds it, handing it to the first waiter as a release
    /// does. Returns whether a holder was removed. A hold of this object's that it
    /// removes is over for the object too.
    pub fn force_release(&mut self) -> Result<bool> {
        let released = kind::release_script(self.part(), b"", false)? != kind::Released::No;
        // Whatever this object held on the key is gone now.
        let own = self.h.claims[0].own().is_some();
        self.h.c.meter.released(released, own);
        self.h.claims[0].clear();
        Ok(released)
    }

    /// Sets the lease of the key to `lock_out` seconds (default: the object's
    /// `$lockOut`) from now, if it still holds `token` (default: this object's).
    /// Returns false when the token no longer holds the key.
    pub fn extend(&mut self, token: Option<&[u8]>, lock_out: Option<f64>) -> Result<bool> {
        let label = "Lock::extendLock(): Argument #2 ($lockOut)";
        let ms = terms::extension_ms(label, lock_out, self.h.c.terms.lease)?;
        rules::refuse(&self.part().route, Need::Expiry(label, ms))?;
        self.h.extend(token, ms)
    }

    /// How long this object's hold surely lasts from now (`Claim::remaining`): `None`
    /// when its lease never ends.
    pub fn remaining(&self) -> Option<Duration> {
        self.h.remaining()
    }

    /// Whether the key holds `token` (default: this object's token) right now.
    pub fn is_owned(&self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.h.live(token) else { return Ok(false) };
        let (route, k) = (&self.part().route, &self.part().keys);
        match route.ask(&Call::Command(&[b"GET", &k.lock]))? {
            Value::BulkString(h) if h == token => Ok(true),
            // Read mode: is the token a live reader?
            Value::BulkString(h) if h.is_empty() => {
                let reply = route.ask(&Call::Script(&Holds {
                    lock: &k.lock,
                    readers: &k.readers,
                    token: &token,
                }))?;
                Ok(resp::int(&reply) == Some(2))
            }
            _ => Ok(false),
        }
    }

    /// The key's remaining lease in seconds: `None` when it is free, infinite when it
    /// has no expiry (set by something else than this extension).
    pub fn ttl(&self) -> Result<Option<f64>> {
        Ok(self
            .part()
            .route
            .pttl(&self.part().keys.lock)?
            .map(|ms| ms.map_or(f64::INFINITY, |ms| ms as f64 / 1000.0)))
    }

    /// Acquires like `acquire()`, but a lock that cannot be had within the wait is a
    /// `LockError::Timeout` (`synchronized()`). Remembers the connection it was taken
    /// on, for `finish` (read here, not in every `addLock()`, which has no use for it).
    pub fn acquire_or_fail(&mut self) -> Result<Token> {
        let token = self.acquire(None)?.ok_or_else(|| self.h.c.timeout())?;
        self.h.note_serials();
        Ok(token)
    }

    /// Releases `token` after the work it protected (`synchronized()`): an error when
    /// the token was still this object's but no longer held the key (the work outlived
    /// the lock). While the lease surely lasts the release is sent unawaited; whether
    /// a short hold only freed the lock is not known then, and the object's end hands
    /// it to the waiters if it did (`kick` does nothing otherwise).
    pub fn finish(&mut self, token: &[u8]) -> Result<()> {
        self.h.finish(token)
    }

    /// Releases `token` after work that did not return normally (`synchronized()`),
    /// errors ignored (the lease ends the hold then).
    pub fn release_unseen(&mut self, token: &[u8]) {
        self.h.release_unseen(token);
    }

    /// Looks at the lock in one read-only step (see `inspect`). On a Redlock quorum,
    /// which keeps only the key, it asks the nodes for the key's lease and holder
    /// (what a majority says): no readers, waiters, fencing numbers or records there.
    pub fn inspect(&self) -> Result<Inspection> {
        inspect_key(&self.part().route, &self.part().keys, self.h.token().unwrap_or_default())
    }

    /// Whether anyone holds the lock.
    pub fn is_locked(&self) -> Result<bool> {
        Ok(self.part().route.ask(&Call::Command(&[b"EXISTS", &self.part().keys.lock]))?
            == Value::Int(1))
    }
}

impl Drop for Lock {
    /// A lock still held when its object goes away is released, unless the object is
    /// a forked child's copy: the lock is its parent's then (with `auto_release` off
    /// it outlives its object: only its lease or a release by token ends it).
    fn drop(&mut self) {
        // Holding nothing, a lock it left free for its own re-take goes to the
        // waiters (`Kind::left`).
        self.h.end();
    }
}

/// `remaining()` in seconds, as PHP shows it: INF for a lease that never ends.
pub fn seconds(remaining: Option<Duration>) -> f64 {
    remaining.map_or(f64::INFINITY, |d| d.as_secs_f64())
}
