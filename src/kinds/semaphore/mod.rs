//! Counting semaphores: up to `permits` units held at once, each hold a token with a
//! weight and a lease of its own.
//!
//! Beside the semaphore's key (a hash: `permits`, `used`, and `w:<token>` for each
//! holder's weight) the holders are a sorted set (`LockKeys::readers`) of tokens
//! scored with the Redis time, in ms, at which their lease ends. Every script first
//! reclaims the holds whose lease has ended, on Redis's clock, so a crashed holder's
//! permits come back when its lease ends. The keys live as long as the longest
//! lease.
//!
//! Hand-over: a release gives the freed permits to the queued waiters that now fit,
//! in queue order, each woken on its own channel (`waiting`). With `fair`, nobody
//! overtakes the first waiter. Without it, a waiter (or a newcomer) that fits may
//! pass a first waiter that does not, but only during that waiter's first
//! `PATIENCE_MS` at the head of the queue: after that, permits gather for it, so a
//! heavy waiter is never starved by a stream of light ones.

pub(crate) mod scripts;

use scripts::{ACQUIRE, CANCEL, INSPECT, RELEASE, RENEW, STATE};
use crate::net::call::Call;
use crate::net::wire::Watch;
use crate::clock::Boot;
use crate::config::Settings;
use crate::terms::{self, Terms};
use crate::error::{LockError, Result};
use crate::hold::claim::Claim;
use crate::kinds::retake;
use crate::hold::table::{Hold, Kind, Owner, RenewBy, Renewal};
use crate::keys::LockKeys;
use crate::net::pool::Retry;
use crate::net::resp;
use crate::topology::route::Route;
use crate::token::{self, Token};
use crate::wait::backoff::Backoff;
use crate::wait::waiting::{self, Try, Waited, Waiter};
use redis::{ErrorKind, RedisError, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long (ms) the first waiter lets lighter waiters that fit pass it.
const PATIENCE_MS: &str = "100";

/// The queue outlives the longest wait in it by this much.
const QUEUE_SLACK: Duration = Duration::from_secs(5);
/// How the watchdog renews a semaphore's permits.
static RENEWAL: RenewBy = RenewBy { script: &RENEW, keys: renew_keys };

fn renew_keys(k: &LockKeys) -> Vec<&[u8]> {
    script_keys(k).to_vec()
}

/// The keys of a semaphore, in the order its scripts take them.
pub(crate) fn script_keys(k: &LockKeys) -> [&[u8]; 4] {
    [&k.lock, &k.queue, &k.patience, &k.readers]
}

/// One live holder of a semaphore, as `inspect()` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Holder {
    pub weight: u32,
    /// Seconds of lease left (infinite: no expiry).
    pub ttl: f64,
    /// Who holds them, when `owner_info` recorded it.
    pub owner: Option<crate::owner::Owner>,
}

/// One look at a semaphore (`Semaphore::inspect`).
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The number its holders agreed on, or the object's when none holds it.
    pub permits: i64,
    pub available: i64,
    pub holders: Vec<Holder>,
    /// Queued waiters that still listen.
    pub waiters: u64,
}

/// A counting semaphore on one Redis key.
pub struct Semaphore {
    name: Vec<u8>,
    keys: Arc<LockKeys>,
    permits: u32,
    permits_arg: String,
    /// Its wait, lease and keeping.
    terms: Terms,
    route: Route,
    /// This object's last hold.
    claim: Claim,
    /// The connection `synchronized()`'s hold was taken (or last extended) on
    /// (`Route::serial`, set by `acquire_or_fail` and `extend`): the
    /// release that ends `synchronized()` goes unawaited only while it is the same
    /// one, unclosed (`Route::intact`). A server that restarted without its data, or
    /// a failover, closed it, and may have forgotten the hold: the release then waits
    /// for its answer, and tells the caller.
    serial: Option<u64>,
    /// Record who holds permits (`owner_info`).
    owner_info: bool,
}

impl Semaphore {
    /// Validates everything up front, so that a bad argument never reaches Redis.
    pub fn new(name: &[u8], permits: i64, time_out: f64, lock_out: f64, settings: &Settings) -> Result<Self> {
        if name.is_empty() {
            return Err(LockError::InvalidValue("Semaphore::__construct(): Argument #1 ($key) must not be empty".to_string()));
        }
        let permits = u32::try_from(permits).ok().filter(|p| (1..=1_000_000).contains(p)).ok_or_else(|| {
            LockError::InvalidValue(format!(
                "Semaphore::__construct(): Argument #2 ($permits) must be between 1 and 1000000, {permits} given"
            ))
        })?;
        let wait = terms::time_out(time_out)?;
        let ttl_ms = terms::lease_ms("Semaphore::__construct(): Argument #4 ($lockOut)", lock_out)?;
        settings.check()?;
        if !settings.servers.is_empty() {
            return Err(LockError::InvalidValue(
                "Semaphore::__construct(): a semaphore needs one server, Sentinel or Cluster; Redlock (\"servers\") keeps no holders' leases on a majority".to_string(),
            ));
        }
        let mut key = Vec::with_capacity(settings.prefix.len() + name.len());
        key.extend_from_slice(&settings.prefix);
        key.extend_from_slice(name);
        Ok(Semaphore {
            name: name.to_vec(),
            route: Route::for_key(settings, &key)?,
            keys: Arc::new(LockKeys::new(key)),
            permits,
            permits_arg: permits.to_string(),
            terms: Terms::new(settings, wait, ttl_ms),
            claim: Claim::default(),
            serial: None,
            owner_info: settings.owner_info,
        })
    }

    /// The key as given, without the prefix.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// Takes `weight` permits with one try: the token of this hold, or `None` when
    /// too few are free (or, see the module comment, when others wait first).
    pub fn try_acquire(&mut self, weight: i64) -> Result<Option<Token>> {
        self.obtain(weight, false, "tryAcquire")
    }

    /// Takes `weight` permits, waiting up to `$timeOut` (woken by the release that
    /// frees them, never polling while a subscriber can be had).
    pub fn acquire(&mut self, weight: i64) -> Result<Option<Token>> {
        self.obtain(weight, !self.terms.wait.is_zero(), "acquire")
    }

    fn obtain(&mut self, weight: i64, wait: bool, method: &str) -> Result<Option<Token>> {
        let weight = self.check_weight(weight, method)?;
        let start = Instant::now();
        let deadline = self.terms.deadline(start);
        let token = token::generate()?;
        let record = if self.owner_info { crate::owner::record() } else { Vec::new() };
        let w = PermitWait { sem: self, token: &token, weight, record: &record };
        let id = self.keys.id;
        // Contended lately: the wait's first try, which queues (and takes the permits
        // when they are free), is the first try: one script a contended acquisition,
        // not a try that finds them busy and then a second that queues.
        if wait && !self.route.lease_only() && retake::contended_lately(id, start) {
            return self.waited(token, weight, &record, deadline, false, false);
        }
        // The lease is counted from before the try was sent.
        let sent = Boot::now();
        let mut may_hold = false;
        match w.attempt(b"", false, deadline) {
            Ok(Try::Acquired(_)) => {
                let until = waiting::lease_bound(sent, self.terms.lease);
                if !waiting::is_stale(until) {
                    retake::note_contended(id, false, start);
                    return Ok(Some(self.took(token, until)));
                }
                // Its reply came after the lease may have ended: no acquisition.
                crate::stats::note(crate::stats::Counter::Stale);
                if !wait || Instant::now() >= deadline {
                    w.abandon();
                    return Ok(None);
                }
                may_hold = true;
            }
            Ok(Try::Busy { .. }) if !wait => return Ok(None),
            Ok(Try::Busy { .. }) => {}
            // Its tokens are its own: never found held by another (no script says so).
            Ok(Try::Unsure) => return Err(self.maybe_taken(token, waiting::unsure(self.route.node().addr()))),
            Err(e) if wait && e.is_passing() && Instant::now() < deadline => {}
            Err(e) => return Err(self.maybe_taken(token, e)),
        }
        self.waited(token, weight, &record, deadline, may_hold, true)
    }

    /// Waits for the permits (`waiting::wait`, with `may_hold` and `tried` as there)
    /// and notes whether they were busy, for the next acquisition's way in.
    fn waited(&mut self, token: Token, weight: u32, record: &[u8], deadline: Instant, may_hold: bool, tried: bool) -> Result<Option<Token>> {
        let (outcome, busy) = waiting::wait(&PermitWait { sem: self, token: &token, weight, record }, deadline, may_hold, tried);
        retake::note_contended(self.keys.id, busy, Instant::now());
        match outcome {
            Waited::Got(_, until) => Ok(Some(self.took(token, until))),
            Waited::TimedOut => Ok(None),
            Waited::Failed(e) => Err(self.maybe_taken(token, e)),
        }
    }

    fn check_weight(&self, weight: i64, method: &str) -> Result<u32> {
        u32::try_from(weight).ok().filter(|w| (1..=self.permits).contains(w)).ok_or_else(|| {
            LockError::InvalidValue(format!(
                "Semaphore::{method}(): Argument #1 ($weight) must be between 1 and {} (the permits), {weight} given",
                self.permits
            ))
        })
    }

    /// Releases the hold of `token` (default: this object's) and hands the freed
    /// permits out. Returns whether this call released a live hold.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        let (route, keys) = (&self.route, &self.keys);
        self.claim.release_with(keys, token, "semaphore", &self.name, |token, _| release(route, keys, token))
    }

    /// Sets the lease of the hold of `token` (default: this object's) to `lock_out`
    /// seconds (default: the object's `$lockOut`; `INF`: none) if it is still live.
    pub fn extend(&mut self, token: Option<&[u8]>, lock_out: Option<f64>) -> Result<bool> {
        let ms = terms::extension_ms("Semaphore::extend(): Argument #2 ($lockOut)", lock_out, self.terms.lease)?;
        let Some(token) = self.claim.live(token) else { return Ok(false) };
        let (sent, ms_arg, k) = (Boot::now(), ms.to_string(), &self.keys);
        let renewed: i64 = self.route.run(Retry::IfStale, |conn, _| RENEW.invoke(conn, &script_keys(k), &[&token, ms_arg.as_bytes()]))?;
        let lease = (ms != terms::NO_EXPIRY).then(|| Duration::from_millis(ms));
        let own = self.claim.own_for(&token);
        Claim::renewed(own, renewed == 1, lease, sent);
        if renewed == 1 && own.is_some() {
            self.serial = self.route.serial();
        }
        Ok(renewed == 1)
    }

    /// How long this object's permits surely last from now (`Claim::remaining`):
    /// `None` when their lease never ends.
    pub fn remaining(&self) -> Option<Duration> {
        self.claim.remaining()
    }

    /// Whether `token` (default: this object's) holds permits right now.
    pub fn is_owned(&self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.claim.live(token) else { return Ok(false) };
        Ok(self.state(&token)?.1)
    }

    /// The permits free now (expired holds reclaimed first).
    pub fn available(&self) -> Result<i64> {
        Ok(self.state(b"")?.0)
    }

    /// What the semaphore holds now, in one read-only step (see `scripts::INSPECT`).
    /// Never a permits mismatch: it reports the number the holders agreed on.
    pub fn inspect(&self) -> Result<Inspection> {
        let k = &self.keys;
        let reply = self.route.run(Retry::IfStale, |conn, _| INSPECT.run(conn, &script_keys(k), &[]))?;
        self.parse_inspection(&reply).ok_or_else(|| self.unexpected(&reply))
    }

    fn parse_inspection(&self, reply: &Value) -> Option<Inspection> {
        let Value::Array(items) = reply else { return None };
        let [stored, used, waiters, list] = &items[..] else { return None };
        let Value::Array(list) = list else { return None };
        let holders = list
            .iter()
            .map(|h| {
                let Value::Array(h) = h else { return None };
                let [w, ms, record] = &h[..] else { return None };
                let ms = resp::int(ms)?;
                Some(Holder {
                    weight: u32::try_from(resp::int(w)?).ok()?,
                    ttl: if ms < 0 { f64::INFINITY } else { ms as f64 / 1000.0 },
                    owner: match record {
                        Value::BulkString(raw) => crate::owner::parse(raw),
                        _ => None,
                    },
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let permits = match resp::int(stored)? {
            -1 => i64::from(self.permits),
            n => n,
        };
        Some(Inspection { permits, available: permits - resp::int(used)?, holders, waiters: u64::try_from(resp::int(waiters)?).ok()? })
    }

    /// `(free permits, whether token holds some)`.
    fn state(&self, token: &[u8]) -> Result<(i64, bool)> {
        let k = &self.keys;
        let reply = self.route.run(Retry::IfStale, |conn, _| STATE.run(conn, &script_keys(k), &[self.permits_arg.as_bytes(), token]))?;
        match pair(&reply) {
            Some((-1, stored)) => Err(self.mismatch(stored)),
            Some((free, held)) => Ok((free, held == 1)),
            None => Err(self.unexpected(&reply)),
        }
    }

    /// Acquires like `acquire()`, but too few permits within the wait is a timeout error.
    /// Remembers the connection the permits were taken on, for `finish` (read here,
    /// not in every `acquire()`, which has no use for it).
    pub fn acquire_or_fail(&mut self, weight: i64) -> Result<Token> {
        let token = self
            .obtain(weight, !self.terms.wait.is_zero(), "synchronized")?
            .ok_or_else(|| LockError::timeout("semaphore", &self.name, self.terms.wait))?;
        self.serial = self.route.serial();
        Ok(token)
    }

    /// Releases `token` after the work it protected (`synchronized()`): an error when
    /// the hold was this object's and was lost before the work finished.
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
        self.claim.finished(ours, lost_ago, released, "semaphore", &self.name)
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

    /// Releases this object's hold `token` without waiting for Redis's answer.
    fn release_unawaited(&mut self, token: &[u8]) -> Result<()> {
        let (route, keys) = (&self.route, &self.keys);
        let by = self.claim.until().flatten();
        let watch = Watch { what: "semaphore", name: self.name.clone(), at_least: 1, by };
        self.claim.release_unawaited(keys, token, || fire_release(route, keys, token, Some(watch)))
    }

    /// Records permits taken, whose lease ends at `until` at the earliest (the renewal
    /// schedule counted from when the lease began).
    fn took(&mut self, token: Token, until: waiting::Until) -> Token {
        crate::stats::note(crate::stats::Counter::Acquired);
        let renew = Renewal::for_terms(&self.terms, until, Instant::now());
        self.record(token.clone(), renew, until);
        token
    }

    /// Makes `token` this object's hold, in the table of holds too.
    fn record(&mut self, token: Token, renew: Option<Box<Renewal>>, until: waiting::Until) {
        self.claim.record(Hold {
            kind: Kind::Permits,
            owner: Owner::current(),
            route: self.route.clone(),
            keys: self.keys.clone(),
            renew_by: &RENEWAL,
            token,
            renew,
            until,
            lost: None,
            auto_release: self.terms.auto_release,
            orphan: false,
        });
    }

    /// After a failed try the permits may still have been taken (a lost reply): keep
    /// the token, so that a release (or the object's end) clears them.
    fn maybe_taken(&mut self, token: Token, e: LockError) -> LockError {
        if self.claim.token.is_none() && !matches!(e, LockError::Connection { sent: false, .. } | LockError::Passing { sent: false, .. }) {
            // Not known to be held: nothing to renew (and no watchdog started for it),
            // and it promises nothing (a bound already past).
            self.record(token, None, Some(Boot::now()));
        }
        e
    }

    fn mismatch(&self, stored: i64) -> LockError {
        LockError::PermitsMismatch { key: String::from_utf8_lossy(&self.name).into_owned(), stored, given: self.permits }
    }

    fn unexpected(&self, reply: &Value) -> LockError {
        let e = RedisError::from((ErrorKind::UnexpectedReturnType, "unexpected reply", format!("semaphore script: {reply:?}")));
        self.route.node().error(&e)
    }
}

impl Drop for Semaphore {
    /// A hold still held when its object goes away is released (unless
    /// `auto_release` is off, or the object is a forked child's copy).
    fn drop(&mut self) {
        if let Some(hold) = self.claim.end(self.terms.auto_release) {
            let _ = release(&hold.route, &hold.keys, &hold.token);
        }
    }
}

/// Releases the hold of `token` on the semaphore `keys` and hands out its permits.
pub(crate) fn release(route: &Route, keys: &LockKeys, token: &[u8]) -> Result<bool> {
    let reply = route.run(Retry::IfStale, |conn, _| RELEASE.run(conn, &script_keys(keys), &[token, PATIENCE_MS.as_bytes()]))?;
    let released = resp::int(&reply) == Some(1);
    if released {
        crate::stats::note(crate::stats::Counter::Released);
    }
    Ok(released)
}

/// Sends the release of `token` without waiting for its answer (an object's end,
/// request end, `synchronized()`'s end: see `lock`'s `release` module).
pub(crate) fn fire_release(route: &Route, keys: &LockKeys, token: &[u8], watch: Option<Watch>) -> Result<()> {
    route.fire(&Call::Script(&RELEASE, &script_keys(keys), &[token, PATIENCE_MS.as_bytes()]), watch)?;
    crate::stats::note(crate::stats::Counter::Released);
    Ok(())
}

/// A reply `{a, b}` of two integers.
fn pair(reply: &Value) -> Option<(i64, i64)> {
    match reply {
        Value::Array(items) if items.len() == 2 => resp::int(&items[0]).zip(resp::int(&items[1])),
        _ => None,
    }
}

/// One wait of a `Semaphore`, as `waiting` sees it.
struct PermitWait<'a> {
    sem: &'a Semaphore,
    token: &'a [u8],
    weight: u32,
    /// Who takes the permits (`owner::record`), or empty.
    record: &'a [u8],
}

impl Waiter for PermitWait<'_> {
    fn route(&self) -> &Route {
        &self.sem.route
    }

    fn token(&self) -> &[u8] {
        self.token
    }

    fn entry(&self, channel: &str) -> Vec<u8> {
        waiting::queue_entry(&self.sem.terms.ttl_arg, self.weight, channel, self.token)
    }

    fn attempt(&self, entry: &[u8], again: bool, deadline: Instant) -> Result<Try> {
        let s = self.sem;
        let queue_ms = (deadline.saturating_duration_since(Instant::now()) + QUEUE_SLACK).as_millis().to_string();
        let weight = self.weight.to_string();
        let flag = |on: bool| -> &[u8] { if on { b"1" } else { b"0" } };
        let reply = s.route.run(Retry::ToSettle, |conn, settling| {
            ACQUIRE.run(
                conn,
                &script_keys(&s.keys),
                &[
                    self.token,
                    s.terms.ttl_arg.as_bytes(),
                    entry,
                    queue_ms.as_bytes(),
                    flag(again || settling),
                    s.permits_arg.as_bytes(),
                    weight.as_bytes(),
                    flag(s.terms.fair),
                    PATIENCE_MS.as_bytes(),
                    self.record,
                ],
            )
        })?;
        match waiting::reply_parts(&reply) {
            Some((1, _, _, _)) => Ok(Try::Acquired(None)),
            Some((-1, stored, _, _)) => Err(s.mismatch(stored)),
            Some((_, ms, queued, clock)) => Ok(Try::busy(ms, queued, clock)),
            None => Err(s.unexpected(&reply)),
        }
    }

    fn cancel(&self, entry: &[u8]) -> Result<Option<Option<i64>>> {
        let k = &self.sem.keys;
        let lease = self.sem.terms.ttl_arg.as_bytes();
        let got: i64 = self.sem.route.run(Retry::IfStale, |conn, _| CANCEL.invoke(conn, &script_keys(k), &[self.token, entry, lease]))?;
        Ok((got == 1).then_some(None))
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(self.sem.terms.retry_delay, self.sem.terms.retry_delay_max)
    }

    fn lease(&self) -> Option<Duration> {
        self.sem.terms.lease
    }

    fn abandon(&self) {
        let _ = fire_release(&self.sem.route, &self.sem.keys, self.token, None);
    }
}
