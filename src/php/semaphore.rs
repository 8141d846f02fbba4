//! The PHP `Semaphore` class: argument conversion over `crate::kinds::semaphore::Semaphore`.

// Parameter names are camelCase because PHP shows them and accepts them as named
// arguments (`new Semaphore($k, 4, lockOut: 5)`).
#![allow(non_snake_case)]

use super::args::{chosen, settings, token_zval, Seconds};
use super::held::{run_held, Synchronizable};
use super::late::Core;
use super::wait::{self, LockWait};
use crate::kinds::semaphore;
use crate::kinds::Driven;
use ext_php_rs::binary_slice::BinarySlice;
use ext_php_rs::exception::PhpException;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendClassObject;
use ext_php_rs::types::{ZendCallable, ZendHashTable, Zval};
use std::cell::RefCell;

/// A counting semaphore on one Redis key: up to $permits units held at once.
///
/// `new Semaphore($key, $permits, $timeOut, $lockOut, $options)`: `$timeOut` is how
/// many seconds acquire() waits (0: one try), `$lockOut` each hold's lease (INF: none),
/// `$options` the same settings as Lock's (Redlock's `servers` excepted).
///
/// Each hold is a token with a weight and its own lease, judged on Redis's clock: a
/// crashed holder's permits come back when its lease ends. A release hands the
/// freed permits to the queued waiters that now fit, in queue order, each woken on
/// its own channel. With 'fair' => true nobody overtakes the first waiter; without,
/// a waiter that fits may pass a first waiter that does not, but only during that
/// waiter's first 100 ms at the head of the queue, so a heavy waiter is never
/// starved. A hold still held is released when its object is destroyed and at
/// request end (unless 'auto_release' => false), never by a forked child's copy.
#[php_class]
#[php(flags = ClassFlags::Final)]
pub struct Semaphore {
    // A RefCell, and methods on &self: synchronized() runs PHP code that may call this
    // very object again, so no borrow may be held across that call.
    inner: RefCell<semaphore::Semaphore>,
}

impl Semaphore {
    /// How a `LockWait` reaches the core of an object of this class.
    fn reach(
        obj: &ext_php_rs::types::ZendObject,
        f: &mut dyn FnMut(&mut dyn Driven),
    ) -> PhpResult<()> {
        f(&mut *wait::object::<Semaphore>(obj)?.core()?);
        Ok(())
    }

    pub(super) fn core(&self) -> PhpResult<Core<'_, semaphore::Semaphore>> {
        let inner = self.inner.try_borrow_mut().map_err(|_| {
            PhpException::from_message("redis-lock: the Semaphore is busy".to_string())
        })?;
        Ok(Core::new(inner))
    }
}

#[php_impl]
impl Semaphore {
    /// Validates every argument and option; connects lazily, on first use.
    ///
    /// @throws ValueError for an empty key, $permits < 1, a negative or non-finite
    ///         $timeOut, a $lockOut that is not a positive number, an unknown option,
    ///         a malformed dsn, or Redlock ('servers')
    /// @throws TypeError for an option of the wrong type
    #[php(defaults(timeOut = 0.0, lockOut = 10.0))]
    pub fn __construct(
        key: BinarySlice<u8>,
        permits: i64,
        timeOut: Seconds,
        lockOut: Seconds,
        options: Option<&ZendHashTable>,
    ) -> PhpResult<Self> {
        let settings = settings(options, "Semaphore::__construct(): Argument #5 ($options)")?;
        Ok(Semaphore {
            inner: RefCell::new(semaphore::Semaphore::new(
                &key, permits, timeOut.0, lockOut.0, &settings,
            )?),
        })
    }

    /// Takes $weight permits, waiting up to $timeOut seconds; woken by the release that
    /// frees them.
    ///
    /// @return string|false the token of this hold, or false
    /// @throws ValueError for a $weight below 1 or above the permits
    /// @throws LockException when the semaphore's holders agreed on another number of permits
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    #[php(defaults(weight = 1))]
    pub fn acquire(&self, weight: i64) -> PhpResult<Zval> {
        Ok(token_zval(self.core()?.acquire(weight)?))
    }

    /// Starts acquire() without blocking, for an event loop (see LockWait).
    ///
    /// @throws ValueError for a $weight below 1 or above the permits; while this
    ///         object has an acquisition pending
    /// @throws LockConnectionException when Redis cannot be reached, as acquire()
    #[php(defaults(weight = 1))]
    pub fn acquire_async(
        self_: &mut ZendClassObject<Semaphore>,
        weight: i64,
    ) -> PhpResult<LockWait> {
        wait::start(self_, Semaphore::reach, |s| {
            let mut core = s.core()?;
            let outcome = core.start(weight);
            Ok((outcome, core.pending_ready()))
        })
    }

    /// Takes $weight permits with exactly one try.
    ///
    /// @return string|false the token of this hold, or false
    /// @throws ValueError for a $weight below 1 or above the permits
    /// @throws LockException when the semaphore's holders agreed on another number of permits
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    #[php(defaults(weight = 1))]
    pub fn try_acquire(&self, weight: i64) -> PhpResult<Zval> {
        Ok(token_zval(self.core()?.try_acquire(weight)?))
    }

    /// Releases the hold of $token (default: this object's last) and hands its permits
    /// to the waiters that fit.
    ///
    /// @return bool true when this call released a live hold
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn release(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("Semaphore::release(): Argument #1 ($token)", token)?;
        Ok(self.core()?.release(token)?)
    }

    /// Sets the lease of the hold of $token (default: this object's) to $lockOut
    /// seconds (default: the object's; INF: none), if it is still live.
    ///
    /// @return bool false when the hold is gone (released, or its lease ended)
    /// @throws ValueError for a $lockOut that is not a positive number, or a $token that
    ///         is empty or longer than 256 bytes
    pub fn extend(&self, token: Option<BinarySlice<u8>>, lockOut: Option<f64>) -> PhpResult<bool> {
        let token = chosen("Semaphore::extend(): Argument #1 ($token)", token)?;
        Ok(self.core()?.extend(token, lockOut)?)
    }

    /// Whether $token (default: this object's) holds permits right now.
    ///
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn is_owned(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("Semaphore::isOwned(): Argument #1 ($token)", token)?;
        Ok(self.core()?.is_owned(token)?)
    }

    /// How long this object's permits surely last, in seconds, as this process counts
    /// it without asking Redis (as Lock::getRemainingLifetime(): the bound the hold promises
    /// exclusion for); 0.0 when it holds nothing, INF for a lease that never ends.
    pub fn get_remaining_lifetime(&self) -> PhpResult<f64> {
        Ok(crate::kinds::lock::seconds(self.core()?.remaining()))
    }

    /// The permits free now (holds whose lease ended are reclaimed first).
    ///
    /// @throws LockException when the semaphore's holders agreed on another number of permits
    pub fn available(&self) -> PhpResult<i64> {
        Ok(self.core()?.available()?)
    }

    /// What Redis holds for this semaphore now, in one read-only round trip: permits
    /// (the number its holders agreed on, or this object's when none holds it),
    /// available, holders (each with weight, ttl in seconds (INF without expiry)
    /// and owner: host, pid, sapi, script and since with owner_info, else null) and
    /// waiters (queued and still listening). Tokens are never shown.
    ///
    /// @return array{permits: int, available: int, holders: list<array{weight: int, ttl: float, owner: ?array}>, waiters: int}
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn inspect(&self) -> PhpResult<ext_php_rs::boxed::ZBox<ext_php_rs::types::ZendHashTable>> {
        let seen = self.core()?.inspect()?;
        super::observe::semaphore_array(&seen)
    }

    /// Takes $weight permits (waiting up to $timeOut), runs $fn, and releases them
    /// whatever happens: $fn's return value is returned, its exception rethrown, and
    /// even a fatal error inside $fn releases them.
    ///
    /// One round trip: while the lease surely lasts (by more than read_timeout), the
    /// release is sent without waiting for Redis's answer (see Lock::synchronized()).
    ///
    /// @throws LockTimeoutException when the permits cannot be had within $timeOut
    /// @throws LockLostException when $fn returned but the hold had been lost meanwhile
    ///         (the watchdog found it gone, or its lease was near its end and the
    ///         release found it gone): $fn's result is not returned
    #[php(defaults(weight = 1))]
    pub fn synchronized(&self, r#fn: ZendCallable, weight: i64) -> PhpResult<Zval> {
        let token = self.core()?.acquire_or_fail(weight)?;
        run_held(r#fn, token, &self.inner)
    }
}

impl Synchronizable for semaphore::Semaphore {
    fn finish(&mut self, token: &[u8]) -> crate::error::Result<()> {
        semaphore::Semaphore::finish(self, token)
    }
    fn release_unseen(&mut self, token: &[u8]) {
        semaphore::Semaphore::release_unseen(self, token);
    }
}
