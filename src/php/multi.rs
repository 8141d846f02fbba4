//! The PHP `MultiLock` class: argument conversion over `crate::kinds::multi::MultiLock`.

// Parameter names are camelCase because PHP shows them and accepts them as named
// arguments (`new MultiLock($keys, lockOut: 5)`).
#![allow(non_snake_case)]

use super::args::{chosen, settings, token_zval, Seconds};
use super::held::{run_held, Synchronizable};
use super::late::Core;
use super::wait::{self, LockWait};
use crate::error::LockError;
use crate::kinds::multi;
use crate::kinds::Driven;
use ext_php_rs::binary_slice::BinarySlice;
use ext_php_rs::boxed::ZBox;
use ext_php_rs::exception::PhpException;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendClassObject;
use ext_php_rs::types::{ArrayKey, ZendCallable, ZendHashTable, ZendStr, Zval};
use std::cell::RefCell;

/// Several Redis keys locked together: all of them or none, under one token.
///
/// `new MultiLock($keys, $timeOut, $lockOut, $options)`: `$keys` a non-empty list of
/// key names (duplicates count once), and the rest as for Lock. `$options['read']`
/// names the keys taken as read shares (beside other readers, Lock's and MultiLock's;
/// not on Redlock); the others are taken alone. Each key is the same
/// key a `new Lock($key)` takes: a Lock holding one of them keeps the MultiLock
/// waiting, and the other way round; they share its fencing counter.
///
/// On one server, Sentinel, or for keys of one Cluster slot, one script takes every key
/// or none: no other client ever sees a subset held. Keys in several Cluster slots are
/// taken slot group by slot group, in one order, giving back what a round took before
/// any wait; on Redlock ('servers') every node runs the same all-or-none script and a
/// majority holds. A waiter is queued on the first busy key in the MultiLock's order
/// and woken by that key's release, which takes every key for it when the others are
/// free; two MultiLocks never wait on each other in a circle. Keys are released when
/// the object is destroyed and at request end, as a Lock's.
#[php_class]
#[php(flags = ClassFlags::Final)]
pub struct MultiLock {
    // A RefCell, and methods on &self: synchronized() runs PHP code that may call this
    // very object again, so no borrow may be held across that call.
    inner: RefCell<multi::MultiLock>,
}

impl MultiLock {
    /// How a `LockWait` reaches the core of an object of this class.
    fn reach(
        obj: &ext_php_rs::types::ZendObject,
        f: &mut dyn FnMut(&mut dyn Driven),
    ) -> PhpResult<()> {
        f(&mut *wait::object::<MultiLock>(obj)?.core()?);
        Ok(())
    }

    pub(super) fn core(&self) -> PhpResult<Core<'_, multi::MultiLock>> {
        let inner = self.inner.try_borrow_mut().map_err(|_| {
            PhpException::from_message("redis-lock: the MultiLock is busy".to_string())
        })?;
        Ok(Core::new(inner))
    }
}

/// Puts `value` in `table` under the key name `name`, byte for byte (a key may be any
/// bytes), and as an integer when it is one in PHP's canonical form ("42", "-7"), as
/// PHP itself stores such keys: `$a["42"]` finds it then.
fn insert_key(
    table: &mut ZendHashTable,
    name: &[u8],
    value: impl ext_php_rs::convert::IntoZval,
) -> ext_php_rs::error::Result<()> {
    let text = std::str::from_utf8(name).ok();
    let canonical = text.and_then(|t| t.parse::<i64>().ok().filter(|n| n.to_string() == t));
    match canonical {
        Some(n) => table.insert(ArrayKey::Long(n), value),
        None => table.insert(ArrayKey::ZendString(&ZendStr::new(name, false)), value),
    }
}

/// The key names of `$keys`: strings, or integers as their decimal text.
fn key_names(keys: &ZendHashTable, label: &str) -> Result<Vec<Vec<u8>>, LockError> {
    keys.iter()
        .map(|(_, v)| {
            if let Some(s) = v.zend_str() {
                Ok(s.as_bytes().to_vec())
            } else if let Some(i) = v.long() {
                Ok(i.to_string().into_bytes())
            } else {
                Err(LockError::InvalidType(format!(
                    "{label} must contain only strings, {} given",
                    v.get_type()
                )))
            }
        })
        .collect()
}

#[php_impl]
impl MultiLock {
    /// Validates every argument and option; connects lazily, on first use.
    ///
    /// @param array<string> $keys
    /// @throws ValueError for an empty $keys or an empty key in it, a negative or
    ///         non-finite $timeOut, a $lockOut that is not a positive number (or INF
    ///         with Redlock), an unknown option, or a 'read' key not in $keys (or any
    ///         with Redlock)
    /// @throws TypeError for a key that is not a string, or an option of the wrong type
    #[php(defaults(timeOut = 0.0, lockOut = 10.0))]
    pub fn __construct(
        keys: &ZendHashTable,
        timeOut: Seconds,
        lockOut: Seconds,
        options: Option<&ZendHashTable>,
    ) -> PhpResult<Self> {
        // "read" is the MultiLock's own option; the rest are the settings Lock takes.
        let mut read = Vec::new();
        let rest = match options {
            Some(o) if o.get("read").is_some() => {
                let mut rest = o.to_owned();
                if let Some(list) = rest.get("read") {
                    let Some(list) = list.array() else {
                        return Err(LockError::InvalidType(format!(
                            "MultiLock::__construct(): option \"read\" must be a list of keys, {} given",
                            list.get_type()
                        ))
                        .into());
                    };
                    read = key_names(list, "MultiLock::__construct(): option \"read\"")?;
                }
                let _ = rest.remove("read");
                Some(rest)
            }
            _ => None,
        };
        let settings = settings(
            rest.as_deref().or(options),
            "MultiLock::__construct(): Argument #4 ($options)",
        )?;
        let names = key_names(keys, "MultiLock::__construct(): Argument #1 ($keys)")?;
        Ok(MultiLock {
            inner: RefCell::new(multi::MultiLock::new(
                names, read, timeOut.0, lockOut.0, &settings,
            )?),
        })
    }

    /// Takes every key, waiting up to $timeOut seconds, queued and asleep until a
    /// release hands them over. $token as for Lock::addLock().
    ///
    /// @return string|false the token, or false when some key stayed held
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn add_lock(&self, token: Option<BinarySlice<u8>>) -> PhpResult<Zval> {
        let token = chosen("MultiLock::addLock(): Argument #1 ($token)", token)?;
        Ok(token_zval(self.core()?.acquire(token.map(<[u8]>::to_vec))?))
    }

    /// Starts addLock() without blocking, for an event loop (see LockWait). $token as
    /// for Lock::addLockAsync().
    ///
    /// @throws ValueError for a $token that is empty, longer than 256 bytes, or waited
    ///         for already in this thread; while this object has an acquisition pending
    /// @throws LockConnectionException when Redis cannot be reached, as addLock()
    pub fn add_lock_async(
        self_: &mut ZendClassObject<MultiLock>,
        token: Option<BinarySlice<u8>>,
    ) -> PhpResult<LockWait> {
        let token = chosen("MultiLock::addLockAsync(): Argument #1 ($token)", token)?;
        let token = token.map(<[u8]>::to_vec);
        wait::start(self_, MultiLock::reach, |m| {
            let mut core = m.core()?;
            let outcome = core.start(token);
            Ok((outcome, core.pending_ready()))
        })
    }

    /// Takes every key with exactly one try, or none.
    ///
    /// @return string|false the token, or false when some key is held
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn try_lock(&self, token: Option<BinarySlice<u8>>) -> PhpResult<Zval> {
        let token = chosen("MultiLock::tryLock(): Argument #1 ($token)", token)?;
        Ok(token_zval(self.core()?.try_acquire(token.map(<[u8]>::to_vec))?))
    }

    /// Releases every key $token (default: this object's token) holds, in one step,
    /// each handed to its first waiter.
    ///
    /// @return bool true when the token held every key; false when it held none, or
    ///         only some (those are released all the same)
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn release_lock(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("MultiLock::releaseLock(): Argument #1 ($token)", token)?;
        Ok(self.core()?.release(token)?)
    }

    /// Sets every key's lease to $lockOut seconds (default: the object's $lockOut) if
    /// $token (default: this object's) still holds them all.
    ///
    /// @return bool false when the token no longer holds every key (nothing changed)
    /// @throws ValueError for a $lockOut that is not a positive number, or a $token that
    ///         is empty or longer than 256 bytes
    pub fn extend_lock(
        &self,
        token: Option<BinarySlice<u8>>,
        lockOut: Option<f64>,
    ) -> PhpResult<bool> {
        let token = chosen("MultiLock::extendLock(): Argument #1 ($token)", token)?;
        Ok(self.core()?.extend(token, lockOut)?)
    }

    /// Whether $token (default: this object's token) holds every key right now.
    ///
    /// @throws ValueError for a $token that is empty or longer than 256 bytes
    pub fn is_owned(&self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        let token = chosen("MultiLock::isOwned(): Argument #1 ($token)", token)?;
        Ok(self.core()?.is_owned(token)?)
    }

    /// How long this object's hold of every key surely lasts, in seconds, as this
    /// process counts it without asking Redis (as Lock::getRemainingLifetime(): the bound the hold promises
    /// exclusion for); 0.0 when it holds nothing, INF for a lease that never ends.
    pub fn get_remaining_lifetime(&self) -> PhpResult<f64> {
        Ok(crate::kinds::lock::seconds(self.core()?.remaining()))
    }

    /// The shortest remaining lease of the keys in seconds, whoever holds them: null
    /// when some key is free, INF when none has an expiry.
    pub fn get_ttl(&self) -> PhpResult<Option<f64>> {
        Ok(self.core()?.ttl()?)
    }

    /// The keys, deduplicated, in the order they are taken.
    ///
    /// @return list<string>
    pub fn get_keys(&self) -> PhpResult<ZBox<ZendHashTable>> {
        let mut list = ZendHashTable::new();
        for name in self.core()?.names() {
            let mut z = Zval::new();
            z.set_binary(name.clone());
            list.push(z)?;
        }
        Ok(list)
    }

    /// The fencing tokens of this object's last acquisition, one per key (key =>
    /// number), each from that key's counter, the one Lock uses (null for a read key):
    /// null before the first acquisition, or with 'fencing' => false. Issued when first asked for
    /// (one round trip, token-checked on every key); from then on this process's
    /// acquisitions issue theirs as they take the keys.
    ///
    /// @return array<string, int>|null
    /// @throws LockException when the keys were taken without numbers and this object
    ///         no longer holds them all
    pub fn get_fencing_token(&self) -> PhpResult<Option<ZBox<ZendHashTable>>> {
        let mut core = self.core()?;
        let Some(numbers) = core.fencing_tokens()? else { return Ok(None) };
        let mut out = ZendHashTable::new();
        for (name, n) in core.names().iter().zip(numbers) {
            // A read share has no number.
            insert_key(&mut out, name, (n > 0).then_some(n))?;
        }
        Ok(Some(out))
    }

    /// What Redis holds for each key now: 'keys' maps each key (in the order they are
    /// taken) to what Lock::inspect() shows for it (state, ttl, readers, waiters, fence,
    /// mine, owner), and 'mine' is whether this object's token holds every key. One
    /// read-only round trip per key; tokens are never shown.
    ///
    /// @return array{mine: bool, keys: array<string, array{state: string, ttl: ?float, readers: int, waiters: int, fence: ?int, mine: bool, owner: ?array}>}
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn inspect(&self) -> PhpResult<ZBox<ZendHashTable>> {
        let core = self.core()?;
        let seen = core.inspect()?;
        let mut keys = ZendHashTable::new();
        for (name, one) in core.names().iter().zip(&seen) {
            insert_key(&mut keys, name, super::observe::lock_array(one)?)?;
        }
        let mut out = ZendHashTable::new();
        out.insert("mine", !seen.is_empty() && seen.iter().all(|i| i.mine))?;
        out.insert("keys", keys)?;
        Ok(out)
    }

    /// Takes every key (waiting up to $timeOut seconds), runs $fn, and releases them
    /// whatever happens, as Lock::synchronized() does.
    ///
    /// @throws LockTimeoutException when the keys cannot be had within $timeOut
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    /// @throws LockLostException when $fn returned but some key had been lost meanwhile
    pub fn synchronized(&self, r#fn: ZendCallable) -> PhpResult<Zval> {
        let token = self.core()?.acquire_or_fail()?;
        run_held(r#fn, token, &self.inner)
    }
}

impl Synchronizable for multi::MultiLock {
    fn finish(&mut self, token: &[u8]) -> crate::error::Result<()> {
        multi::MultiLock::finish(self, token)
    }
    fn release_unseen(&mut self, token: &[u8]) {
        multi::MultiLock::release_unseen(self, token);
    }
}
