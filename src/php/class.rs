//! The PHP `Lock` class: argument conversion over `crate::kinds::lock::Lock`.

// The constructor's parameters are camelCase because PHP shows these names and
// accepts them as named arguments (`new Lock($k, lockOut: 5)`).
#![allow(non_snake_case)]

use super::args::{chosen, settings, token_zval, Seconds};
use super::held::{run_held, Synchronizable};
use super::late::Core;
use super::wait::{self, LockWait};
use crate::kinds::lock;
use crate::kinds::Driven;
use ext_php_rs::binary::Binary;
use ext_php_rs::binary_slice::BinarySlice;
use ext_php_rs::exception::PhpException;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendClassObject;
use ext_php_rs::types::{ZendCallable, ZendHashTable, Zval};
use std::cell::RefCell;

/// A distributed lock on one Redis key.
///
/// `new Lock($key, $timeOut, $lockOut, $options)`: `$timeOut` is how many seconds
/// `addLock()` keeps trying (0: one try), `$lockOut` the lease in seconds after which
/// Redis frees the lock by itself. Both accept fractions and are honoured to the
/// millisecond. `$options` overrides the `redis_lock.*` php.ini directives
/// (dsn, prefix, connect_timeout, read_timeout, retry_delay, retry_delay_max, fair,
/// auto_renew, auto_release, max_hold, fencing, servers, sentinels, service,
/// wait_replicas, durable, durable_aof, durable_timeout, cluster, tls_ca_file,
/// tls_cert_file, tls_key_file, max_endpoints, owner_info, max_reply).
/// `$lockOut = INF` takes the lock with no expiry.
///
/// A lock still held is released when its object is destroyed, at request end, after
/// exit() and after a fatal error; never by a forked child's copy of the object. With
/// 'auto_release' => false it is not: its lease, or a release with its token from any
/// process, ends it.
#[php_class]
#[php(flags = ClassFlags::Final)]
pub struct Lock {
    // A RefCell, and methods on &self: synchronized() runs PHP code that may call this
    // very object again, so no borrow may be held across that call.
    inner: RefCell<lock::Lock>,
}

impl Lock {
    /// How a `LockWait` reaches the core of an object of this class.
    fn reach(
        obj: &ext_php_rs::types::ZendObject,
        f: &mut dyn FnMut(&mut dyn Driven),
    ) -> PhpResult<()> {
        f(&mut *wait::object::<Lock>(obj)?.core()?);
        Ok(())
    }

    pub(super) fn core(&self) -> PhpResult<Core<'_, lock::Lock>> {
        // Only a borrow held across a call into PHP could clash, and none is.
        let inner = self
            .inner
            .try_borrow_mut()
            .map_err(|_| PhpException::from_message("redis-lock: the Lock is busy".to_string()))?;
        Ok(Core::new(inner))
    }
}

#[php_impl]
impl Lock {
    /// Validates every argument and option; connects lazily, on first use.
    ///
    /// @throws ValueError for an empty key, a negative or non-finite $timeOut, a $lockOut
    ///         that is not a positive finite number, an unknown option or a malformed dsn.
    /// @throws TypeError for an option of the wrong type.
    #[php(defaults(timeOut = 0.0, lockOut = 10.0))]
    pub fn __construct(
        key: BinarySlice<u8>,
        timeOut: Seconds,
        lockOut: Seconds,
        options: Option<&ZendHashTable>,
    ) -> PhpResult<Self> {
        let settings = settings(options, "Lock::__construct(): Argument #4 ($options)")?;
        Ok(Lock { inner: RefCell::new(lock::Lock::new(&key, timeOut.0, lockOut.0, &settings)?) })
    }

    /// Takes the lock, waiting up to $timeOut seconds: a waiter queues and sleeps until a
    /// release hands the lock over (or the holder's lease runs out), never past the deadline.
    ///
    /// $token is the token to take it with (any 1 to 256 bytes; default: 128 random
    /// bits). A key that holds the same token already counts as held: taking is never
    /// re-entry. On an object that holds a read lock, it upgrades, keeping the token:
    /// only once it is the only reader (tryLock() returns false otherwise).
    ///
    /// @return string|false the token, or false when someone else holds the lock
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn add_lock(&self, token: Option<BinarySlice<u8>>) -> PhpResult<Zval> {
        let token = chosen("Lock::addLock(): Argument #1 ($token)", token)?;
        Ok(token_zval(self.core()?.acquire(token.map(<[u8]>::to_vec))?))
    }

    /// Starts addLock() without blocking, for an event loop (see LockWait): the first
    /// try runs now; the wait goes on as the loop polls the handle. $token as for
    /// addLock(); one wait per token per thread.
    ///
    /// @throws ValueError for a $token that is empty, longer than 256 bytes, or waited
    ///         for already in this thread; while this object has an acquisition pending
    /// @throws LockConnectionException when Redis cannot be reached, as addLock()
    pub fn add_lock_async(
        self_: &mut ZendClassObject<Lock>,
        token: Option<BinarySlice<u8>>,
    ) -> PhpResult<LockWait> {
        let token = chosen("Lock::addLockAsync(): Argument #1 ($token)", token)?;
        let token = token.map(<[u8]>::to_vec);
        wait::start(self_, Lock::reach, |l| {
            let mut core = l.core()?;
            let outcome = core.start(token, false);
            Ok((outcome, core.pending_ready()))
        })
    }

    /// Starts addReadLock() without blocking, for an event loop (see LockWait).
    ///
    /// @throws ValueError with Redlock ('servers'), which keeps no readers; while this
    ///         object has an acquisition pending
    /// @throws LockConnectionException when Redis cannot be reached, as addReadLock()
    pub fn add_read_lock_async(self_: &mut ZendClassObject<Lock>) -> PhpResult<LockWait> {
        wait::start(self_, Lock::reach, |l| {
            let mut core = l.core()?;
            let outcome = core.start(None, true);
            Ok((outcome, core.pending_ready()))
        })
    }

    /// Takes the lock with exactly one try; $token as for addLock().
    ///
    /// @return string|false the token, or false when someone else holds the lock
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn try_lock(&self, token: Option<BinarySlice<u8>>) -> PhpResult<Zval> {
        let token = chosen("Lock::tryLock(): Argument #1 ($token)", token)?;
        Ok(token_zval(self.core()?.try_acquire(token.map(<[u8]>::to_vec))?))
    }

    /// Takes a read (shared) lock, waiting up to $timeOut seconds: many readers hold
    /// the key at once, no writer meanwhile. Once a writer waits, new readers queue
    /// behind it. Each reader has its own lease ($lockOut), judged on Redis's clock.
    /// Called on an object that holds the write lock, it downgrades it with no gap
    /// a writer could enter by; on one that holds a read lock already, false.
    /// releaseLock() releases whichever kind this object holds.
    ///
    /// @return string|false the token of this read hold, or false
    /// @throws ValueError with Redlock ('servers'), which keeps no readers
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn add_read_lock(&self) -> PhpResult<Zval> {
        Ok(token_zval(self.core()?.acquire_read()?))
    }

    /// Takes a read lock with exactly one try (see addReadLock()).
    ///
    /// @return string|false the token of this read hold, or false
    /// @throws ValueError with Redlock ('servers'), which keeps no readers
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn try_read_lock(&self) -> PhpResult<Zval> {
        Ok(token_zval(self.core()?.try_acquire_read()?))
    }

    /// Frees the key whoever holds it, and hands it to the first waiter as a release
    /// does. For administration and for frameworks' force-release; a holder that
    /// loses its lock this way finds out on its next isOwned(), extendLock() or
    /// release (false), or from the watchdog.
    ///
    /// @return bool true when a holder was removed, false when the key was free
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn force_release_lock(&self) -> PhpResult<bool> {
        Ok(self.core()?.force_release()?)
    }

    /// Atomically deletes the lock if it still holds $token (default: the token this
    /// object last acquired). Never deletes a lock that someone else now holds.
    ///
    /// Stops the watchdog's renewals of it. A lock the watchdog found taken from this
    /// object (its lease ran out) returns false.
    ///
    /// @return bool true when this call released the lock
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn release_lock(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("Lock::releaseLock(): Argument #1 ($token)", token)?;
        Ok(self.core()?.release(token)?)
    }

    /// The article's name for releaseLock(); the same atomic release.
    ///
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn release_lock1(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("Lock::releaseLock1(): Argument #1 ($token)", token)?;
        Ok(self.core()?.release(token)?)
    }

    /// The article's name for releaseLock(); the same atomic release.
    ///
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn release_lock2(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("Lock::releaseLock2(): Argument #1 ($token)", token)?;
        Ok(self.core()?.release(token)?)
    }

    /// Whether the key is held by anyone.
    pub fn is_locked(&self) -> PhpResult<bool> {
        Ok(self.core()?.is_locked()?)
    }

    /// The key as given to the constructor, without the prefix.
    pub fn get_key(&self) -> PhpResult<Binary<u8>> {
        Ok(Binary::from(self.core()?.name().to_vec()))
    }

    /// Sets the lock's remaining lease to $lockOut seconds (default: the object's
    /// $lockOut), if the key still holds $token (default: this object's token). With
    /// auto_renew, the watchdog renews with the new lease from then on. INF makes the
    /// lock permanent (no expiry, nothing for the watchdog to renew).
    ///
    /// @return bool false when the token no longer holds the key (expired, released,
    ///         or never held)
    /// @throws ValueError for a $lockOut that is not a positive number, or a $token that
    ///         is empty or longer than 256 bytes
    pub fn extend_lock(
        &self,
        token: Option<BinarySlice<u8>>,
        lockOut: Option<f64>,
    ) -> PhpResult<bool> {
        let token = chosen("Lock::extendLock(): Argument #1 ($token)", token)?;
        Ok(self.core()?.extend(token, lockOut)?)
    }

    /// Whether the key holds $token (default: this object's token) right now. False at
    /// once, without asking Redis, when the watchdog found the lock taken from this object.
    ///
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn is_owned(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("Lock::isOwned(): Argument #1 ($token)", token)?;
        Ok(self.core()?.is_owned(token)?)
    }

    /// How long this object's hold surely lasts, in seconds, as this process counts it
    /// without asking Redis: from when the acquiring command was sent (or from the
    /// server's time in a hand-over), each confirmed renewal or extension moving it
    /// on, less the clock drift allowed for (1% of the lease, plus 2 ms). 0.0 when the
    /// object holds nothing, its hold was found lost, or that time has passed; INF for
    /// a lease that never ends. Work that must not outlive the lock checks it before
    /// each step it cannot undo; it is the bound the lock promises exclusion for.
    pub fn get_remaining_lifetime(&self) -> PhpResult<f64> {
        Ok(crate::kinds::lock::seconds(self.core()?.remaining()))
    }

    /// The key's remaining lease in seconds, whoever holds it: null when the lock is
    /// free, INF when the key has no expiry.
    pub fn get_ttl(&self) -> PhpResult<Option<f64>> {
        Ok(self.core()?.ttl()?)
    }

    /// The fencing token of this object's last acquisition: a number that strictly
    /// increases from holder to holder of this key, in any process. Pass it to the
    /// storage the lock protects, and have it refuse writes with a smaller number than
    /// it has seen. Null before the first acquisition, or with 'fencing' => false.
    /// Each number is at least the server's clock in microseconds, so numbers keep
    /// increasing even after a restart or failover that lost the counter.
    ///
    /// Issued when first asked for, while the lock is held (one round trip); from then
    /// on this process's acquisitions issue theirs as they take the lock. Kept after
    /// the release.
    ///
    /// @throws LockException when the lock was taken without a number and this object
    ///         no longer holds it (lease run out, taken by someone else, released)
    pub fn get_fencing_token(&self) -> PhpResult<Option<i64>> {
        Ok(self.core()?.fencing_token()?)
    }

    /// What Redis holds for this lock now, in one read-only round trip: state
    /// ('free', 'write' or 'read'), ttl (seconds; null when free, INF without
    /// expiry), readers, waiters (queued and still listening), fence (the last
    /// fencing number issued for this name, or null), mine (whether this object's
    /// token holds it now) and owner (with owner_info: host, pid, sapi, script and
    /// since of the holder, a list of them for readers; null otherwise). Tokens are
    /// never shown. With Redlock ('servers') only state, ttl and mine are known.
    ///
    /// @return array{state: string, ttl: ?float, readers: int, waiters: int, fence: ?int, mine: bool, owner: ?array}
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn inspect(&self) -> PhpResult<ext_php_rs::boxed::ZBox<ZendHashTable>> {
        let seen = self.core()?.inspect()?;
        super::observe::lock_array(&seen)
    }

    /// Takes the lock (waiting up to $timeOut seconds), runs $fn, and releases the lock
    /// whatever happens: $fn's return value is returned, its exception rethrown as it
    /// is, and even a fatal error inside $fn releases the lock.
    ///
    /// One round trip: while the lease surely lasts (by more than read_timeout), the
    /// release is sent without waiting for Redis's answer. When this returns, the
    /// release is on its way; what this process sends to Redis next runs after it.
    ///
    /// @throws LockTimeoutException when the lock cannot be had within $timeOut
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    /// @throws LockLostException when $fn returned but the lock had been lost meanwhile
    ///         (the watchdog found it taken, or its lease was near its end and the
    ///         release found it gone): the work ran partly unprotected, and $fn's
    ///         result is not returned
    pub fn synchronized(&self, r#fn: ZendCallable) -> PhpResult<Zval> {
        let token = self.core()?.acquire_or_fail()?;
        run_held(r#fn, token, &self.inner)
    }
}

impl Synchronizable for lock::Lock {
    fn finish(&mut self, token: &[u8]) -> crate::error::Result<()> {
        lock::Lock::finish(self, token)
    }
    fn release_unseen(&mut self, token: &[u8]) {
        lock::Lock::release_unseen(self, token);
    }
}
