//! The PHP `Lock` class: argument conversion over `crate::lock::Lock`.

// The constructor's parameters are camelCase because PHP shows these names and
// accepts them as named arguments (`new Lock($k, lockOut: 5)`).
#![allow(non_snake_case)]

use super::ini;
use crate::config::{OptValue, Source};
use crate::error::LockError;
use crate::lock;
use ext_php_rs::binary::Binary;
use ext_php_rs::binary_slice::BinarySlice;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ArrayKey, ZendHashTable, Zval};

/// A distributed lock on one Redis key.
///
/// `new Lock($key, $timeOut, $lockOut, $options)`: `$timeOut` is how many seconds
/// `addLock()` keeps trying (0: one try), `$lockOut` the lease in seconds after which
/// Redis frees the lock by itself. Both accept fractions and are honoured to the
/// millisecond. `$options` overrides the `redis_lock.*` php.ini directives
/// (dsn, prefix, connect_timeout, read_timeout, retry_delay, retry_delay_max, fair).
#[php_class]
#[php(flags = ClassFlags::Final)]
pub struct Lock {
    inner: lock::Lock,
}

fn token_zval(token: Option<String>) -> Zval {
    let mut z = Zval::new();
    match token {
        // A 32-character hex string: no NUL byte, cannot fail.
        Some(t) => {
            if z.set_string(&t, false).is_err() {
                z.set_bool(false);
            }
        }
        None => z.set_bool(false),
    }
    z
}

fn option_value(z: &Zval) -> OptValue {
    if let Some(s) = z.zend_str() {
        OptValue::Str(s.as_bytes().to_vec())
    } else if let Some(i) = z.long() {
        OptValue::Int(i)
    } else if let Some(f) = z.double() {
        OptValue::Float(f)
    } else if let Some(b) = z.bool() {
        OptValue::Bool(b)
    } else if z.is_null() {
        OptValue::Null
    } else if z.is_array() {
        OptValue::Other("array")
    } else if z.is_object() {
        OptValue::Other("object")
    } else {
        OptValue::Other("resource")
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
        timeOut: f64,
        lockOut: f64,
        options: Option<&ZendHashTable>,
    ) -> PhpResult<Self> {
        let mut settings = ini::settings()?;
        if let Some(options) = options {
            for (name, value) in options.iter() {
                let name = match &name {
                    ArrayKey::String(s) => s.as_str(),
                    ArrayKey::Str(s) => s,
                    ArrayKey::ZendString(s) => s.as_str().unwrap_or("\u{fffd}"),
                    ArrayKey::Long(i) => {
                        return Err(LockError::InvalidValue(format!(
                            "Lock::__construct(): Argument #4 ($options) must have string keys, {i} given"
                        ))
                        .into())
                    }
                };
                settings.set(name, &option_value(value), Source::Option)?;
            }
        }
        Ok(Lock { inner: lock::Lock::new(&key, timeOut, lockOut, &settings)? })
    }

    /// Takes the lock, waiting up to $timeOut seconds: a waiter queues and sleeps until a
    /// release hands the lock over (or the holder's lease runs out), never past the deadline.
    ///
    /// @return string|false the token, or false when someone else holds the lock
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn add_lock(&mut self) -> PhpResult<Zval> {
        Ok(token_zval(self.inner.acquire()?))
    }

    /// Takes the lock with exactly one try.
    ///
    /// @return string|false the token, or false when someone else holds the lock
    /// @throws LockConnectionException when Redis cannot be reached or answers too late
    pub fn try_lock(&mut self) -> PhpResult<Zval> {
        Ok(token_zval(self.inner.try_acquire()?))
    }

    /// Atomically deletes the lock if it still holds $token (default: the token this
    /// object last acquired). Never deletes a lock that someone else now holds.
    ///
    /// @return bool true when this call released the lock
    pub fn release_lock(&mut self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        Ok(self.inner.release(token.as_deref().copied())?)
    }

    /// The article's name for releaseLock(); the same atomic release.
    pub fn release_lock1(&mut self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        self.release_lock(token)
    }

    /// The article's name for releaseLock(); the same atomic release.
    pub fn release_lock2(&mut self, token: Option<BinarySlice<u8>>) -> PhpResult<bool> {
        self.release_lock(token)
    }

    /// Whether the key is held by anyone.
    pub fn is_locked(&self) -> PhpResult<bool> {
        Ok(self.inner.is_locked()?)
    }

    /// The key as given to the constructor, without the prefix.
    pub fn get_key(&self) -> Binary<u8> {
        Binary::from(self.inner.name().to_vec())
    }
}
