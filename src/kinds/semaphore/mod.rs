//! Counting semaphores: up to `permits` units held at once, each hold a token with a
//! weight and a lease of its own; a `Holder` (the core) of one key.
//!
//! Beside the semaphore's key (a hash: `permits`, `used`, and `w:<token>` for each
//! holder's weight) the holders are a sorted set (`LockKeys::readers`) of tokens
//! scored with the Redis time, in ms, at which their lease ends. Every script first
//! reclaims the holds whose lease has ended, on Redis's clock, so a crashed holder's
//! permits come back when its lease ends. The keys live as long as the longest
//! lease.
//!
//! A hold that finds nobody holding any, in the default mode, without `owner_info`
//! or `durable`, is taken without a script: `SET holders '<permits>:<weight>:<token>'
//! NX PX lease` (`lib/permits.lua`), and released by a small look at that string.
//! The first script that meets it (another acquisition, a renewal, `available()`)
//! turns it into the hash and the sorted set, its lease kept. A first try that finds
//! the key held goes on with the script at once, and this process's tries of the
//! next second go straight to it (`retake::shared_lately`).
//!
//! Hand-over: a release gives the freed permits to the queued waiters that now fit,
//! in queue order, each woken on its own channel (`waiting`). With `fair`, nobody
//! overtakes the first waiter. Without it, a waiter (or a newcomer) that fits may
//! pass a first waiter that does not, but only during that waiter's first
//! `PATIENCE_MS` at the head of the queue: after that, permits gather for it, so a
//! heavy waiter is never starved by a stream of light ones.

pub mod scripts;

use crate::config::Settings;
use crate::error::{LockError, Result};
use crate::hold::table::Part;
use crate::keys::LockKeys;
use crate::kinds::core::entry::{self, Mark};
use crate::kinds::core::waiting::{self, Fences, Try};
use crate::kinds::core::{Attempt, Common, Drive, Holder, Kind, QUEUE_SLACK};
use crate::kinds::retake;
use crate::net::call::{Call, Owned};
use crate::net::fast::Fast;
use crate::net::pool::Retry;
use crate::net::resp;
use crate::net::wire::Watch;
use crate::terms::{self, Terms};
use crate::token::{self, Token};
use crate::topology::route::Route;
use crate::topology::rules::{self, Need};
use redis::{ErrorKind, RedisError, Value};
use scripts::{Acquire, Cancel, Inspect, Release, Renew, State};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long (ms) the first waiter lets lighter waiters that fit pass it.
const PATIENCE_MS: &[u8] = b"100";

/// One live holder of a semaphore, as `inspect()` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PermitHolder {
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
    pub holders: Vec<PermitHolder>,
    /// Queued waiters that still listen.
    pub waiters: u64,
}

/// A semaphore's key on its route: how the watchdog renews a hold's permits and
/// request end releases them.
#[derive(Debug)]
pub(crate) struct Permits {
    keys: LockKeys,
    route: Route,
}

impl Permits {
    /// The release of `token` (`alone`: its hold was taken alone, see the module
    /// comment: looked for as such first).
    fn release_call<'a>(&'a self, token: &'a [u8], alone: bool) -> Release<'a> {
        let k = &self.keys;
        Release {
            sem: &k.lock,
            queue: &k.queue,
            patience: &k.patience,
            holders: &k.readers,
            token,
            wait: PATIENCE_MS,
            alone,
        }
    }
}

impl Part for Permits {
    fn route(&self) -> &Route {
        &self.route
    }

    fn key(&self) -> &[u8] {
        &self.keys.lock
    }

    fn renew<'a>(&'a self, token: &'a [u8], lease_ms: &'a [u8]) -> Owned<'a> {
        let k = &self.keys;
        Owned::script(Renew {
            sem: &k.lock,
            queue: &k.queue,
            patience: &k.patience,
            holders: &k.readers,
            token,
            lease: lease_ms,
        })
    }

    fn release<'a>(&'a self, token: &'a [u8]) -> Option<Owned<'a>> {
        Some(Owned::script(self.release_call(token, false)))
    }
}

/// A semaphore's own state, beside the core's.
pub(crate) struct PermitsKind {
    /// The key's `LockKeys::id`, for `retake`.
    id: u64,
    permits: u32,
    permits_arg: String,
    /// The permits the acquisition in progress wants.
    weight: u32,
    /// Whether the hold in progress was taken alone, without a script (see the module
    /// comment); its release looks for it as such first. Set by that first try alone;
    /// any other way in, or a release, clears it.
    alone: AtomicBool,
}

/// A counting semaphore on one Redis key.
pub struct Semaphore {
    pub(super) h: Holder<PermitsKind>,
}

impl Semaphore {
    /// Validates everything up front, so that a bad argument never reaches Redis.
    pub fn new(
        name: &[u8],
        permits: i64,
        time_out: f64,
        lock_out: f64,
        settings: &Settings,
    ) -> Result<Self> {
        if name.is_empty() {
            return Err(LockError::InvalidValue(
                "Semaphore::__construct(): Argument #1 ($key) must not be empty".to_string(),
            ));
        }
        let permits = u32::try_from(permits).ok().filter(|p| (1..=1_000_000).contains(p)).ok_or_else(|| {
            LockError::InvalidValue(format!(
                "Semaphore::__construct(): Argument #2 ($permits) must be between 1 and 1000000, {permits} given"
            ))
        })?;
        let wait = terms::time_out(time_out)?;
        let ttl_ms = terms::lease_ms("Semaphore::__construct(): Argument #4 ($lockOut)", lock_out)?;
        let topology = settings.check()?;
        rules::check(&topology, settings, &[Need::Holders("Semaphore::__construct()")])?;
        let mut key = Vec::with_capacity(settings.prefix.len() + name.len());
        key.extend_from_slice(&settings.prefix);
        key.extend_from_slice(name);
        let route = Route::for_key(&topology, settings, &key)?;
        let mut c = Common::new(
            "semaphore",
            name.to_vec(),
            Terms::new(settings, wait, ttl_ms),
            settings,
            &topology,
        );
        // Permits have no fencing tokens.
        c.fencing = false;
        let keys = LockKeys::new(key);
        let kind = PermitsKind {
            id: keys.id,
            permits,
            permits_arg: permits.to_string(),
            weight: 1,
            alone: AtomicBool::new(false),
        };
        Ok(Semaphore { h: Holder::one(c, Arc::new(Permits { keys, route }), kind) })
    }

    fn part(&self) -> &Permits {
        &self.h.parts[0]
    }

    /// The key as given, without the prefix.
    pub fn name(&self) -> &[u8] {
        &self.h.c.name
    }

    /// Takes `weight` permits with one try: the token of this hold, or `None` when
    /// too few are free (or, see the module comment, when others wait first).
    pub fn try_acquire(&mut self, weight: i64) -> Result<Option<Token>> {
        self.acquire_weight(weight, false, Drive::Block, "tryAcquire")
    }

    /// Takes `weight` permits, waiting up to `$timeOut` (woken by the release that
    /// frees them, never polling while a subscriber can be had).
    pub fn acquire(&mut self, weight: i64) -> Result<Option<Token>> {
        let wait = !self.h.c.terms.wait.is_zero();
        self.acquire_weight(weight, wait, Drive::Block, "acquire")
    }

    /// Starts `acquire` for an event loop to drive (see `Lock::start`).
    pub fn start(&mut self, weight: i64) -> Result<Option<Token>> {
        let wait = !self.h.c.terms.wait.is_zero();
        self.acquire_weight(weight, wait, Drive::Loop, "waitAcquire")
    }

    fn acquire_weight(
        &mut self,
        weight: i64,
        wait: bool,
        drive: Drive,
        method: &str,
    ) -> Result<Option<Token>> {
        self.h.kind.weight = u32::try_from(weight).ok().filter(|w| (1..=self.h.kind.permits).contains(w)).ok_or_else(|| {
            LockError::InvalidValue(format!(
                "Semaphore::{method}(): Argument #1 ($weight) must be between 1 and {} (the permits), {weight} given",
                self.h.kind.permits
            ))
        })?;
        self.h.take(drive, Instant::now(), token::generate()?, false, wait)
    }

    /// Releases the hold of `token` (default: this object's) and hands the freed
    /// permits out. Returns whether this call released a live hold.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        self.h.release(token)
    }

    /// Sets the lease of the hold of `token` (default: this object's) to `lock_out`
    /// seconds (default: the object's `$lockOut`; `INF`: none) if it is still live.
    pub fn extend(&mut self, token: Option<&[u8]>, lock_out: Option<f64>) -> Result<bool> {
        let ms = terms::extension_ms(
            "Semaphore::extend(): Argument #2 ($lockOut)",
            lock_out,
            self.h.c.terms.lease,
        )?;
        self.h.extend(token, ms)
    }

    /// How long this object's permits surely last from now (`Claim::remaining`):
    /// `None` when their lease never ends.
    pub fn remaining(&self) -> Option<Duration> {
        self.h.remaining()
    }

    /// Whether `token` (default: this object's) holds permits right now.
    pub fn is_owned(&self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.h.live(token) else { return Ok(false) };
        Ok(self.state(&token)?.1)
    }

    /// The permits free now (expired holds reclaimed first).
    pub fn available(&self) -> Result<i64> {
        Ok(self.state(b"")?.0)
    }

    /// What the semaphore holds now, in one read-only step (`inspect.lua`). Never a
    /// permits mismatch: it reports the number the holders agreed on.
    pub fn inspect(&self) -> Result<Inspection> {
        let (route, k) = (&self.part().route, &self.part().keys);
        let reply = route.ask(&Call::Script(&Inspect {
            sem: &k.lock,
            queue: &k.queue,
            holders: &k.readers,
        }))?;
        self.parse_inspection(&reply).ok_or_else(|| route.unexpected("semaphore/inspect", &reply))
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
                Some(PermitHolder {
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
            -1 => i64::from(self.h.kind.permits),
            n => n,
        };
        Some(Inspection {
            permits,
            available: permits - resp::int(used)?,
            holders,
            waiters: u64::try_from(resp::int(waiters)?).ok()?,
        })
    }

    /// `(free permits, whether token holds some)`.
    fn state(&self, token: &[u8]) -> Result<(i64, bool)> {
        let (route, k) = (&self.part().route, &self.part().keys);
        let state = State {
            sem: &k.lock,
            queue: &k.queue,
            patience: &k.patience,
            holders: &k.readers,
            permits: self.h.kind.permits_arg.as_bytes(),
            token,
        };
        let reply = route.ask(&Call::Script(&state))?;
        match pair(&reply) {
            Some((-1, stored)) => Err(self.h.kind.mismatch(&self.h.c, stored)),
            Some((free, held)) => Ok((free, held == 1)),
            None => Err(route.unexpected("semaphore/state", &reply)),
        }
    }

    /// Acquires like `acquire()`, but too few permits within the wait is a timeout error.
    /// Remembers the connection the permits were taken on, for `finish` (read here,
    /// not in every `acquire()`, which has no use for it).
    pub fn acquire_or_fail(&mut self, weight: i64) -> Result<Token> {
        let wait = !self.h.c.terms.wait.is_zero();
        let token = self
            .acquire_weight(weight, wait, Drive::Block, "synchronized")?
            .ok_or_else(|| self.h.c.timeout())?;
        self.h.note_serials();
        Ok(token)
    }

    /// Releases `token` after the work it protected (`synchronized()`): an error when
    /// the hold was this object's and was lost before the work finished.
    pub fn finish(&mut self, token: &[u8]) -> Result<()> {
        self.h.finish(token)
    }

    /// Releases `token` after work that did not return normally (`synchronized()`),
    /// errors ignored (the lease ends the hold then).
    pub fn release_unseen(&mut self, token: &[u8]) {
        self.h.release_unseen(token);
    }
}

impl Drop for Semaphore {
    /// A hold still held when its object goes away is released (unless
    /// `auto_release` is off, or the object is a forked child's copy).
    fn drop(&mut self) {
        self.h.end();
    }
}

/// A reply `{a, b}` of two integers.
fn pair(reply: &Value) -> Option<(i64, i64)> {
    match reply {
        Value::Array(items) if items.len() == 2 => resp::int(&items[0]).zip(resp::int(&items[1])),
        _ => None,
    }
}

impl PermitsKind {
    /// The acquire script's call for try `a` (`life`: its queue entry's, `weight`: the
    /// permits wanted, as the script takes them).
    fn acquire_call<'a>(
        &'a self,
        c: &'a Common,
        part: &'a Permits,
        a: &Attempt<'a>,
        life: &'a str,
        weight: &'a str,
        again: bool,
    ) -> Acquire<'a> {
        let k = &part.keys;
        Acquire {
            sem: &k.lock,
            queue: &k.queue,
            patience: &k.patience,
            holders: &k.readers,
            token: a.token,
            lease: c.terms.ttl_arg.as_bytes(),
            sent: a.sent,
            life: life.as_bytes(),
            permits: self.permits_arg.as_bytes(),
            weight: weight.as_bytes(),
            wait: PATIENCE_MS,
            info: &c.record,
            again,
            fair: c.terms.fair,
        }
    }

    /// What the acquire script's `reply` says of the try.
    fn tried(&self, c: &Common, part: &Permits, reply: &Value) -> Result<Try> {
        match waiting::reply_parts(reply) {
            Some((1, _, _, _)) => Ok(Try::Acquired(None)),
            Some((-1, stored, _, _)) => Err(self.mismatch(c, stored)),
            Some((_, ms, queued, clock)) => Ok(Try::busy(ms, queued, clock)),
            None => Err(part.route.unexpected("semaphore/acquire", reply)),
        }
    }

    fn mismatch(&self, c: &Common, stored: i64) -> LockError {
        LockError::PermitsMismatch {
            key: String::from_utf8_lossy(&c.name).into_owned(),
            stored,
            given: self.permits,
        }
    }
}

impl Kind for PermitsKind {
    type Part = Permits;
    const RELEASE: &'static str = "release()";

    fn try_part(&self, c: &Common, part: &Permits, a: &Attempt<'_>) -> Result<Try> {
        self.alone.store(false, Ordering::Relaxed);
        let life = a
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()) + QUEUE_SLACK)
            .unwrap_or(QUEUE_SLACK)
            .as_millis()
            .to_string();
        let weight = self.weight.to_string();
        let reply = part.route.call(Retry::ToSettle, |run, settling| {
            let again = a.again || settling;
            run(&Call::Script(&self.acquire_call(c, part, a, &life, &weight, again)))
        })?;
        self.tried(c, part, &reply)
    }

    fn try_first(&self, c: &Common, part: &Permits, token: &[u8]) -> Result<Try> {
        let once = Attempt { token, sent: b"", again: false, deadline: None };
        self.alone.store(false, Ordering::Relaxed);
        let now = Instant::now();
        if c.terms.fair
            || c.owner_info
            || c.terms.durable.is_some()
            || retake::shared_lately(self.id, now)
        {
            return self.try_part(c, part, &once);
        }
        let weight = self.weight.to_string();
        let mut value = format!("{}:{weight}:", self.permits).into_bytes();
        value.extend_from_slice(token);
        let ms = c.terms.lease.map(|_| c.terms.ttl_arg.as_bytes());
        let set = Fast::plain(&part.keys.readers, &value, ms);
        let life = QUEUE_SLACK.as_millis().to_string();
        let taken = part.route.call(Retry::ToSettle, |run, settling| {
            if settling {
                // The SET's reply was lost: the script finds out whether it landed (its
                // head reads the string), and answers as a try.
                let acquire = self.acquire_call(c, part, &once, &life, &weight, true);
                return run(&Call::Script(&acquire)).map(Some);
            }
            match run(&Call::Command(&set))? {
                Value::Okay => Ok(None),
                Value::Nil => Ok(Some(Value::Nil)),
                // A broken or hostile server: an error, never `false`.
                other => Err(RedisError::from((
                    ErrorKind::UnexpectedReturnType,
                    "unexpected reply",
                    format!("to SET NX: {other:?}"),
                ))),
            }
        })?;
        match taken {
            None => {
                self.alone.store(true, Ordering::Relaxed);
                Ok(Try::Acquired(None))
            }
            // Held by others, who may leave permits free: the script decides, and the
            // next second's tries go to it first.
            Some(Value::Nil) => {
                retake::note_shared(self.id, now);
                self.try_part(c, part, &once)
            }
            Some(reply) => self.tried(c, part, &reply),
        }
    }

    fn entry(&self, c: &Common, _part: &Permits, token: &[u8], channel: &str) -> Vec<u8> {
        entry::entry(&c.terms.ttl_arg, Mark::Permits(self.weight), channel, b"", token)
    }

    fn cancel(
        &self,
        c: &Common,
        part: &Permits,
        token: &[u8],
        entry: &[u8],
    ) -> Result<Option<Fences>> {
        let k = &part.keys;
        let cancel = Cancel {
            sem: &k.lock,
            queue: &k.queue,
            patience: &k.patience,
            holders: &k.readers,
            token,
            entry,
            lease: c.terms.ttl_arg.as_bytes(),
        };
        let reply = part.route.ask(&Call::Script(&cancel))?;
        match resp::int(&reply) {
            Some(got) => Ok((got == 1).then_some(None)),
            None => Err(part.route.unexpected("semaphore/cancel", &reply)),
        }
    }

    fn release(&mut self, _c: &Common, part: &Permits, token: &[u8], own: bool) -> Result<u64> {
        // This object's hold taken alone is over, or given back. Another token's
        // release looks for a hold taken alone too while this object's is one: the
        // key is that string then, and a token that differs leaves it as it is.
        let alone = if own {
            self.alone.swap(false, Ordering::Relaxed)
        } else {
            self.alone.load(Ordering::Relaxed)
        };
        let reply = part.route.ask(&Call::Script(&part.release_call(token, alone)))?;
        Ok(u64::from(resp::int(&reply) == Some(1)))
    }

    fn fire_release(
        &mut self,
        _c: &Common,
        part: &Permits,
        token: &[u8],
        watch: Watch,
    ) -> Result<()> {
        let alone = self.alone.swap(false, Ordering::Relaxed);
        part.route.fire(&Call::Script(&part.release_call(token, alone)), Some(watch))
    }

    fn straight_to_wait(&self, _c: &Common, start: Instant) -> bool {
        retake::contended_lately(self.id, start)
    }

    fn contended(&self, busy: bool, at: Instant) {
        retake::note_contended(self.id, busy, at);
    }
}
