//! The lock itself: acquire with `SET NX PX`, wait with back-off, release with
//! a token-checked script.

use crate::config::{self, Settings};
use crate::error::{LockError, Result};
use crate::pool::{self, Endpoint, Retry};
use crate::scripts::{ACQUIRE_OR_CONFIRM, RELEASE};
use crate::token;
use crate::wait::Backoff;
use redis::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One named lock and the token it last acquired.
pub struct Lock {
    name: Vec<u8>,
    key: Vec<u8>,
    /// The lease in milliseconds, as the `PX` argument.
    ttl_arg: String,
    wait: Duration,
    retry_delay: Duration,
    retry_delay_max: Duration,
    endpoint: Arc<Endpoint>,
    token: Option<String>,
}

impl Lock {
    /// Validates everything up front, so that a bad argument never reaches Redis.
    pub fn new(name: &[u8], time_out: f64, lock_out: f64, settings: &Settings) -> Result<Self> {
        if name.is_empty() {
            return Err(LockError::InvalidValue(
                "Lock::__construct(): Argument #1 ($key) must not be empty".to_string(),
            ));
        }
        let wait = config::time_out(time_out)?;
        let ttl_ms = config::lock_out_ms(lock_out)?;
        settings.check()?;
        let endpoint = pool::endpoint(settings)?;
        let mut key = Vec::with_capacity(settings.prefix.len() + name.len());
        key.extend_from_slice(&settings.prefix);
        key.extend_from_slice(name);
        Ok(Lock {
            name: name.to_vec(),
            key,
            ttl_arg: ttl_ms.to_string(),
            wait,
            retry_delay: settings.retry_delay,
            retry_delay_max: settings.retry_delay_max,
            endpoint,
            token: None,
        })
    }

    /// The key as given, without the prefix.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// Where Redis is, for messages.
    pub fn addr(&self) -> &str {
        self.endpoint.addr()
    }

    /// The token this object last acquired, if it still believes it holds one.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// One try. `Ok(Some(token))` when acquired, `Ok(None)` when someone else holds it.
    pub fn try_acquire(&mut self) -> Result<Option<String>> {
        let token = token::generate()?;
        match self.set_once(&token) {
            Ok(true) => {
                self.token = Some(token.clone());
                Ok(Some(token))
            }
            Ok(false) => Ok(None),
            Err(e) => {
                // The SET may have landed without our knowing. Remember the token so a
                // later releaseLock() clears it; otherwise it expires with its TTL.
                if self.token.is_none() {
                    self.token = Some(token);
                }
                Err(match e {
                    LockError::Connection { addr, cause } => LockError::Connection {
                        addr,
                        cause: format!("{cause}; the lock may have been taken: releaseLock() clears it, or it expires after lockOut"),
                    },
                    other => other,
                })
            }
        }
    }

    /// Tries until acquired or until the object's `$timeOut` has passed.
    pub fn acquire(&mut self) -> Result<Option<String>> {
        let deadline = Instant::now() + self.wait;
        let mut backoff = Backoff::new(self.retry_delay, self.retry_delay_max);
        loop {
            if let Some(token) = self.try_acquire()? {
                return Ok(Some(token));
            }
            if !backoff.sleep_before(deadline) {
                return Ok(None);
            }
        }
    }

    fn set_once(&self, token: &str) -> Result<bool> {
        let (key, ttl) = (&self.key[..], self.ttl_arg.as_bytes());
        pool::run(&self.endpoint, Retry::ToSettle, |conn, settling| {
            if settling {
                // The first SET's reply was lost: find out whether it landed.
                let held: i64 = ACQUIRE_OR_CONFIRM.invoke(conn, &[key], &[token.as_bytes(), ttl])?;
                return Ok(held == 1);
            }
            let reply: Value = redis::cmd("SET")
                .arg(key)
                .arg(token)
                .arg("NX")
                .arg("PX")
                .arg(ttl)
                .query(conn)?;
            Ok(matches!(reply, Value::Okay))
        })
    }

    /// Deletes the key if it holds `token` (default: this object's token).
    /// Returns whether this call deleted it.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        let token: Vec<u8> = match (token, &self.token) {
            (Some(t), _) => t.to_vec(),
            (None, Some(own)) => own.as_bytes().to_vec(),
            (None, None) => return Ok(false),
        };
        let key = &self.key[..];
        let deleted: i64 =
            pool::run(&self.endpoint, Retry::IfStale, |conn, _| RELEASE.invoke(conn, &[key], &[&token]))?;
        if self.token.as_deref().map(str::as_bytes) == Some(&token[..]) {
            // Released now, or already gone: either way this object no longer holds it.
            self.token = None;
        }
        Ok(deleted == 1)
    }

    /// Whether anyone holds the lock.
    pub fn is_locked(&self) -> Result<bool> {
        let key = &self.key[..];
        let n: i64 = pool::run(&self.endpoint, Retry::IfStale, |conn, _| {
            redis::cmd("EXISTS").arg(key).query(conn)
        })?;
        Ok(n > 0)
    }
}
