//! The lock itself: acquire, wait, release.
//!
//! Every try is one script call that runs `SET NX PX` and, when the lock is busy,
//! can queue the caller in the same step. A blocking `addLock()` queues once and
//! then sleeps on its wake subscriber; the releaser's script hands the lock
//! straight to the first waiter still listening and tells it so. No one polls,
//! and each release wakes at most one process.
//!
//! Fairness: in fair mode the queue order is strict. By default one exception
//! keeps very short critical sections fast: a lock held for less than
//! `SHORT_HOLD` is only freed on release, so that its releaser may take it again
//! without a process switch, but only while the first waiter has waited less
//! than `PATIENCE_MS`; after that, release hands over whatever the hold time.
//!
//! Lost signals cannot strand a waiter: it also wakes when the holder's lease
//! runs out (a crashed holder never releases), or at its own deadline, and then
//! asks again. Without a subscriber (an ACL that forbids pub/sub, a connection
//! that keeps failing) it falls back to polling with jittered back-off.

use crate::config::{self, Settings};
use crate::error::{LockError, Result};
use crate::keys;
use crate::pool::{self, Endpoint, Retry};
use crate::scripts::{ACQUIRE, CANCEL, RELEASE};
use crate::token;
use crate::wait::Backoff;
use crate::wake;
use redis::{ErrorKind, RedisError, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Waiting past the holder's expiry by this much lets Redis see the key as expired.
const EXPIRY_SLACK: Duration = Duration::from_millis(2);

/// A queued waiter looks again at least this often, whatever the holder's lease: a
/// safety net for signals that cannot arrive (a releaser whose ACL forbids PUBLISH,
/// a subscriber connection that died without a word).
const RECHECK_EVERY: Duration = Duration::from_secs(1);

/// Holds shorter than this may be followed by a re-take ahead of the queue (default mode).
const SHORT_HOLD: Duration = Duration::from_micros(500);

/// How long (ms, as the scripts take it) the first waiter lets short holds pass it
/// over before release must hand over.
const PATIENCE_MS: &str = "5";

/// The queue outlives the longest wait in it by this much, so a waiter's
/// last look at it (at its deadline) still finds it.
const QUEUE_SLACK: Duration = Duration::from_secs(5);

/// One named lock and the token it last acquired.
pub struct Lock {
    name: Vec<u8>,
    key: Vec<u8>,
    /// The waiting queue beside the key.
    queue_key: Vec<u8>,
    /// Marks how long the first waiter still lets short holds pass it over.
    patience_key: Vec<u8>,
    /// The lease in milliseconds, as the `PX` argument.
    ttl_arg: String,
    wait: Duration,
    retry_delay: Duration,
    retry_delay_max: Duration,
    fair: bool,
    endpoint: Arc<Endpoint>,
    token: Option<String>,
    /// When this object acquired `token`.
    acquired_at: Option<Instant>,
}

/// What one try found.
enum Try {
    Acquired,
    /// Someone else holds the lock for `pttl` more (None: no expiry); `queued`
    /// tells whether this waiter is in the queue now.
    Busy { pttl: Option<Duration>, queued: bool },
}

/// What listening on the subscriber brought.
enum Heard {
    Granted,
    /// Nothing came before the wake-up time (which a notice may have brought forward).
    Nothing,
    Broken,
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
            queue_key: keys::aux_key(&key, b":queue"),
            patience_key: keys::aux_key(&key, b":patience"),
            key,
            ttl_arg: ttl_ms.to_string(),
            wait,
            retry_delay: settings.retry_delay,
            retry_delay_max: settings.retry_delay_max,
            fair: settings.fair,
            endpoint,
            token: None,
            acquired_at: None,
        })
    }

    /// The key as given, without the prefix.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// The token this object last acquired, if it still believes it holds one.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// One try. `Ok(Some(token))` when acquired, `Ok(None)` when someone else holds
    /// it (or, in fair mode, when others already wait for it).
    pub fn try_acquire(&mut self) -> Result<Option<String>> {
        let token = token::generate()?;
        match self.first_try(&token) {
            Ok(true) => Ok(Some(self.took(token))),
            Ok(false) => Ok(None),
            Err(e) => Err(self.maybe_taken(token, e)),
        }
    }

    /// The first try of an acquisition. By default a plain `SET NX PX`, the cheapest
    /// command there is; in fair mode the script, which gives way to queued waiters.
    fn first_try(&self, token: &str) -> Result<bool> {
        if self.fair {
            return Ok(matches!(self.attempt(token, "", false, None)?, Try::Acquired));
        }
        let (key, ttl) = (&self.key[..], self.ttl_arg.as_bytes());
        pool::run(&self.endpoint, Retry::ToSettle, |conn, settling| {
            if settling {
                // The SET's reply was lost: the script finds out whether it landed.
                return Ok(matches!(self.run_acquire(conn, token, "", true, None)?, Try::Acquired));
            }
            let reply: Value = redis::cmd("SET").arg(key).arg(token).arg("NX").arg("PX").arg(ttl).query(conn)?;
            Ok(matches!(reply, Value::Okay))
        })
    }

    /// Tries until acquired or until the object's `$timeOut` has passed, sleeping
    /// between tries until the lock is handed over (see the module comment).
    pub fn acquire(&mut self) -> Result<Option<String>> {
        if self.wait.is_zero() {
            return self.try_acquire();
        }
        let start = Instant::now();
        // About 31 years at most (config::time_out), but never panic on overflow.
        let deadline = start.checked_add(self.wait).unwrap_or(start + Duration::from_secs(86_400 * 365));
        let token = token::generate()?;
        // Redis trouble on the first try is reported at once, as without a wait.
        match self.first_try(&token) {
            Ok(true) => return Ok(Some(self.took(token))),
            Ok(false) => {}
            Err(e) => return Err(self.maybe_taken(token, e)),
        }
        let ep = self.endpoint.clone();
        let mut lease = wake::Lease::take(&ep);
        let mut backoff = Backoff::new(self.retry_delay, self.retry_delay_max);
        // The entry this wait last queued with; it must not outlive the wait.
        let mut queued_as: Option<String> = None;
        loop {
            let entry = match lease.get() {
                Some(sub) => format!("{token}:{}:{}", self.ttl_arg, sub.channel()),
                None => String::new(),
            };
            let may_be_queued = queued_as.is_some();
            if !entry.is_empty() {
                // Even if this try fails, it may have queued us: later tries and the
                // cancel at the deadline must know.
                queued_as = Some(entry.clone());
            }
            let (pttl, queued) = match self.attempt(&token, &entry, may_be_queued, Some(deadline)) {
                Ok(Try::Acquired) => return Ok(Some(self.took(token))),
                Ok(Try::Busy { pttl, queued }) => (pttl, queued),
                // Mid-wait, a restart or a dropped connection is waited out until the deadline.
                Err(e) => {
                    if !backoff.sleep_before(deadline) {
                        return Err(self.maybe_taken(token, e));
                    }
                    continue;
                }
            };
            if Instant::now() >= deadline {
                return self.give_up(token, queued_as.as_deref());
            }
            // Wake at the holder's expiry, in case no grant ever comes, or at the deadline.
            let timer = Instant::now()
                + match pttl {
                    Some(p) if queued => (p + EXPIRY_SLACK).min(RECHECK_EVERY),
                    Some(p) => p + EXPIRY_SLACK,
                    None => self.retry_delay_max,
                };
            let mut wake_at = timer.min(deadline);
            if queued {
                match listen(&mut lease, &token, &mut wake_at) {
                    Heard::Granted => return Ok(Some(self.took(token))),
                    Heard::Nothing => {}
                    Heard::Broken => lease.discard(),
                }
            } else if !lease.ensure() {
                // No way to be woken: poll, never past the holder's expiry or the deadline.
                backoff.sleep_before(wake_at);
            }
            // With a subscriber now, the next try queues at once.
        }
    }

    /// The wait is over without a grant: leave the queue, unless the lock was handed
    /// over in the last instant, in which case it is this caller's after all.
    fn give_up(&mut self, token: String, queued_as: Option<&str>) -> Result<Option<String>> {
        let Some(entry) = queued_as else {
            return Ok(None);
        };
        let (key, queue) = (&self.key[..], &self.queue_key[..]);
        let got: i64 = pool::run(&self.endpoint, Retry::IfStale, |conn, _| {
            CANCEL.invoke(conn, &[key, queue], &[token.as_bytes(), entry.as_bytes()])
        })
        .map_err(|e| {
            if self.token.is_none() {
                self.token = Some(token.clone());
            }
            e
        })?;
        Ok((got == 1).then(|| self.took(token)))
    }

    fn took(&mut self, token: String) -> String {
        self.token = Some(token.clone());
        self.acquired_at = Some(Instant::now());
        token
    }

    /// After a failed try the lock may still have been taken (a lost reply):
    /// remember the token so that a later releaseLock() clears it; otherwise it
    /// expires with its lease.
    fn maybe_taken(&mut self, token: String, e: LockError) -> LockError {
        if self.token.is_none() {
            self.token = Some(token);
        }
        match e {
            LockError::Connection { addr, cause } => LockError::Connection {
                addr,
                cause: format!("{cause}; the lock may have been taken: releaseLock() clears it, or it expires after lockOut"),
            },
            other => other,
        }
    }

    /// One run of the acquire script. `entry` non-empty queues the caller when busy;
    /// `again` says it may be queued already (or an earlier try may have landed).
    fn attempt(&self, token: &str, entry: &str, again: bool, deadline: Option<Instant>) -> Result<Try> {
        pool::run(&self.endpoint, Retry::ToSettle, |conn, settling| {
            // A retry after a lost reply must find what the first run did.
            self.run_acquire(conn, token, entry, again || settling, deadline)
        })
    }

    fn run_acquire(
        &self,
        conn: &mut redis::Connection,
        token: &str,
        entry: &str,
        again: bool,
        deadline: Option<Instant>,
    ) -> redis::RedisResult<Try> {
        let queue_ms = deadline
            .map(|d| d.saturating_duration_since(Instant::now()) + QUEUE_SLACK)
            .unwrap_or(QUEUE_SLACK)
            .as_millis()
            .to_string();
        let fair: &[u8] = if self.fair { b"1" } else { b"0" };
        let keys: [&[u8]; 3] = [&self.key, &self.queue_key, &self.patience_key];
        let again: &[u8] = if again { b"1" } else { b"0" };
        let reply: Vec<i64> = ACQUIRE.invoke(
            conn,
            &keys,
            &[
                token.as_bytes(),
                self.ttl_arg.as_bytes(),
                entry.as_bytes(),
                queue_ms.as_bytes(),
                fair,
                again,
                PATIENCE_MS.as_bytes(),
            ],
        )?;
        match reply[..] {
            [1, _] => Ok(Try::Acquired),
            [status, pttl] => Ok(Try::Busy {
                pttl: u64::try_from(pttl).ok().map(Duration::from_millis),
                queued: status == 2,
            }),
            _ => Err(RedisError::from((
                ErrorKind::UnexpectedReturnType,
                "unexpected reply to the acquire script",
                format!("{reply:?}"),
            ))),
        }
    }

    /// Deletes the key if it holds `token` (default: this object's token), or hands it
    /// to the first process waiting for it. Returns whether this call released it.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        let token: Vec<u8> = match (token, &self.token) {
            (Some(t), _) => t.to_vec(),
            (None, Some(own)) => own.as_bytes().to_vec(),
            (None, None) => return Ok(false),
        };
        let own = self.token.as_deref().map(str::as_bytes) == Some(&token[..]);
        // Only this object knows how long it held the lock; a token from elsewhere hands over.
        let short = !self.fair && own && self.acquired_at.is_some_and(|at| at.elapsed() < SHORT_HOLD);
        let keys: [&[u8]; 3] = [&self.key, &self.queue_key, &self.patience_key];
        let released: i64 = pool::run(&self.endpoint, Retry::IfStale, |conn, _| {
            let short: &[u8] = if short { b"1" } else { b"0" };
            RELEASE.invoke(conn, &keys, &[&token, short, PATIENCE_MS.as_bytes()])
        })?;
        if own {
            // Released now, or already gone: either way this object no longer holds it.
            self.token = None;
            self.acquired_at = None;
        }
        Ok(released == 1)
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

/// Blocks on the subscriber until this wait's grant arrives or `until` passes. A
/// notice ("look again in n ms": the lock was freed, not handed over) brings `until`
/// forward.
fn listen(lease: &mut wake::Lease<'_>, token: &str, until: &mut Instant) -> Heard {
    loop {
        let now = Instant::now();
        if now >= *until {
            return Heard::Nothing;
        }
        let Some(sub) = lease.get() else {
            return Heard::Broken;
        };
        match sub.next_grant(*until - now) {
            Ok(Some(msg)) if msg == token.as_bytes() => return Heard::Granted,
            Ok(Some(msg)) => {
                if let Some(ms) = notice_delay(&msg, token) {
                    *until = (*until).min(Instant::now() + ms + EXPIRY_SLACK);
                }
                // Otherwise: a message left over from an earlier wait that ended another way.
            }
            Ok(None) => return Heard::Nothing,
            Err(_) => return Heard::Broken,
        }
    }
}

/// The delay a notice `<token>:<ms>` for this token carries.
fn notice_delay(msg: &[u8], token: &str) -> Option<Duration> {
    let rest = msg.strip_prefix(token.as_bytes())?.strip_prefix(b":")?;
    let ms: u64 = std::str::from_utf8(rest).ok()?.parse().ok()?;
    Some(Duration::from_millis(ms))
}
