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

use crate::config::{self, Settings, Terms};
use crate::error::{LockError, Result};
use crate::held::{self, Claim, Hold, Kind, Renewal, Status};
use crate::keys::LockKeys;
use crate::pool::{self, Retry};
use crate::route::Route;
use crate::semaphore;
use crate::redlock::{Extended, Pooled, Quorum};
use crate::fork_wiped;
use crate::resp;
use crate::scripts::{ACQUIRE, CANCEL, FENCE, KICK, RELEASE, RENEW, TAKE_FENCED};
use crate::shared::{DOWNGRADE, HOLDS, READ_ACQUIRE, READ_RELEASE, READ_RENEW};
use crate::token::{self, Token};
use crate::wait::Backoff;
use crate::waiting::{self, Try, Waited, Waiter};
use redis::{ErrorKind, RedisError, Value};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Holds shorter than this may be followed by a re-take ahead of the queue (default mode).
const SHORT_HOLD: Duration = Duration::from_micros(500);

/// A process that comes back for a lock within this long of releasing it, with no
/// other release between, is in a tight loop: its next short hold may be re-taken
/// ahead of the queue. About the time a hand-over takes (a grant, and the waiter's
/// wake-up). Only the last release is remembered, so loops over several locks hand over.
const QUICK_RETURN: Duration = Duration::from_micros(200);

/// What this thread (the PHP process) last did with lock names, for the re-take
/// heuristics: which lock (`LockKeys::id`) it last released and when, and which one
/// it last made a `Lock` object for and when.
#[derive(Clone, Copy)]
struct Recent {
    released: (u64, Option<Instant>),
    made: (u64, Option<Instant>),
}

thread_local! {
    static RECENT: Cell<Recent> = const { Cell::new(Recent { released: (0, None), made: (0, None) }) };
}

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
/// While it holds the lock, the lock is in the process's table of holds (`held`):
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
    /// Where the key's commands run.
    route: Route,
    /// The Redlock nodes, when `servers` is set; `route` is then the first of them.
    quorum: Option<Arc<Quorum>>,
    /// This object's last hold: its token and its entry in the table of holds.
    claim: Claim,
    /// When this object acquired its token.
    acquired_at: Option<Instant>,
    /// The fencing token of the last acquisition, once issued (at the acquisition, or
    /// when first asked for); kept after the release.
    fence: Option<i64>,
    /// Whether this object ever acquired: before that there is no fencing token to ask for.
    ever_held: bool,
    /// What `token` holds: the write lock or a read share.
    kind: Kind,
    /// Whether this process came back for the lock within `QUICK_RETURN` of its last
    /// release (set by each acquisition): only then may a short hold be re-taken.
    quick: bool,
    /// When (and in which process) this object's last release freed the lock for a
    /// re-take while waiters were queued; its end hands the lock to them.
    left_free: Option<(Instant, u32)>,
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
        let wait = config::time_out(time_out)?;
        let ttl_ms = config::lock_out_ms(lock_out)?;
        settings.check()?;
        if ttl_ms == config::NO_EXPIRY && !settings.servers.is_empty() {
            return Err(LockError::InvalidValue(
                "Lock::__construct(): Argument #3 ($lockOut) must be finite with Redlock (\"servers\"): its safety rests on the lease".to_string(),
            ));
        }
        let mut key = Vec::with_capacity(settings.prefix.len() + name.len());
        key.extend_from_slice(&settings.prefix);
        key.extend_from_slice(name);
        let keys = Arc::new(LockKeys::new(key));
        let key = &keys.lock;
        let (route, quorum) = if settings.servers.is_empty() {
            (Route::for_key(settings, key)?, None)
        } else {
            if settings.fair {
                return Err(LockError::InvalidValue(
                    "option \"fair\" needs a queue, which Redlock (\"servers\") does not keep".to_string(),
                ));
            }
            let nodes = settings
                .servers
                .iter()
                .map(|dsn| pool::endpoint_for(dsn, settings))
                .collect::<Result<Vec<_>>>()?;
            (Route::Node(nodes[0].clone()), Some(Arc::new(Quorum::new(nodes))))
        };
        RECENT.with(|r| r.set(Recent { made: (keys.id, Some(Instant::now())), ..r.get() }));
        Ok(Lock {
            name: name.to_vec(),
            keys,
            terms: Terms::new(settings, wait, ttl_ms),
            // Independent counters give no order across holders: see the README.
            fencing: settings.fencing && quorum.is_none(),
            wait_replicas: settings.wait_replicas,
            route,
            quorum,
            claim: Claim::default(),
            acquired_at: None,
            fence: None,
            ever_held: false,
            kind: Kind::Write,
            quick: false,
            left_free: None,
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
        if self.claim.own().is_some_and(|id| held::status(id) == Status::Lost) {
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

    /// The one way in for every acquisition: `want` a write lock or a read share,
    /// with one try or (`wait`) until the deadline. `method` names the PHP method in errors.
    fn obtain(&mut self, chosen: Option<Token>, want: Kind, wait: bool, method: &str) -> Result<Option<Token>> {
        let start = Instant::now();
        let deadline = self.terms.deadline(start);
        let (last, at) = RECENT.with(|r| r.get().released);
        self.quick = last == self.keys.id && at.is_some_and(|at| start.saturating_duration_since(at) < QUICK_RETURN);
        // Back for it: the lock it left free is its own business again.
        self.left_free = None;
        if want == Kind::Read && self.quorum.is_some() {
            return Err(redlock_refuses(method));
        }
        let held = self.live_hold();
        let mode = match (want, held) {
            (Kind::Read, Some(Kind::Read)) => return Ok(None),
            (Kind::Read, Some(Kind::Write)) => return self.downgrade(),
            (Kind::Write, Some(Kind::Read)) => Mode::Upgrade,
            (Kind::Read, _) => Mode::Read,
            // A Lock never holds permits: only a Semaphore does.
            (Kind::Write | Kind::Permits, _) => Mode::Write,
        };
        if let Some(q) = self.quorum.clone() {
            let token = match chosen {
                Some(t) => t,
                None => token::generate()?,
            };
            if !wait {
                return Ok(q.try_acquire(&self.keys, &token, self.redlock_lease())?.map(|_| self.took(token, None, Kind::Write)));
            }
            return self.acquire_quorum(&q, token, deadline);
        }
        let token = match (mode, chosen) {
            (Mode::Upgrade, Some(t)) if Some(&t) != self.claim.token.as_ref() => {
                return Err(LockError::InvalidValue(format!(
                    "{method}: Argument #1 ($token) must be this object's read token, or null: an upgrade keeps its token"
                )))
            }
            (Mode::Upgrade, _) => self.claim.token.clone().unwrap_or_default(),
            (_, Some(t)) => t,
            (_, None) => token::generate()?,
        };
        // Decided once for the whole wait: a retry that found the key handed over reads
        // the counter, which is this holder's number only if the grant issued one.
        let fence = mode != Mode::Read && self.eager_fencing();
        // Redis trouble on the first try is reported at once, as without a wait.
        let first = match mode {
            Mode::Write => self.first_try(&token, fence),
            _ => self.attempt(&token, b"", false, None, fence, mode),
        };
        match first {
            Ok(Try::Acquired(fence)) => return Ok(Some(self.took(token, fence, want))),
            Ok(Try::Busy { .. }) if !wait => return Ok(None),
            Ok(Try::Busy { .. }) => {}
            Err(e) => return Err(self.maybe_taken(token, e, want)),
        }
        self.wait_for(token, deadline, fence, mode)
    }

    /// The write lock this object holds becomes a read share, in one step.
    fn downgrade(&mut self) -> Result<Option<Token>> {
        let Some(token) = self.claim.token.clone() else { return Ok(None) };
        let k = &self.keys;
        let done = self.run(Retry::IfStale, |conn, _| {
            let reply = DOWNGRADE.run(conn, &k.all(), &[&token, self.terms.ttl_arg.as_bytes()])?;
            resp::int(&reply).ok_or_else(|| unexpected("downgrade", &reply))
        })?;
        if done != 1 {
            // The write lock was lost meanwhile: nothing to downgrade.
            self.claim.released(true, &self.keys, &token);
            return Ok(None);
        }
        Ok(Some(self.took(token, None, Kind::Read)))
    }

    /// What this object holds, as far as it knows: none, or a hold the watchdog
    /// has not found lost.
    fn live_hold(&self) -> Option<Kind> {
        let id = self.claim.own()?;
        (held::status(id) == Status::Held).then_some(self.kind)
    }
    /// The first try of an acquisition: a plain `SET NX PX`, the cheapest command
    /// there is; `SET NX PX` and the fencing `INCR` in one short script when `fence`;
    /// the acquire script in fair mode, which gives way to queued waiters.
    fn first_try(&self, token: &[u8], fence: bool) -> Result<Try> {
        if self.terms.fair {
            return self.attempt(token, b"", false, None, fence, Mode::Write);
        }
        let k = &self.keys;
        if fence {
            // A second run settles a lost reply: it finds the key held by this token.
            return self.run(Retry::ToSettle, |conn, settling| {
                let settle: &[u8] = if settling { b"1" } else { b"0" };
                let reply = TAKE_FENCED.run(conn, &[&k.lock, &k.fence], &[token, self.terms.ttl_arg.as_bytes(), settle])?;
                match resp::int(&reply) {
                    Some(0) => Ok(Try::Busy { pttl: None, queued: false }),
                    Some(n) => Ok(Try::Acquired(Some(n))),
                    None => Err(unexpected("take", &reply)),
                }
            });
        }
        self.run(Retry::ToSettle, |conn, settling| {
            if settling {
                // The SET's reply was lost: the script finds out whether it landed. It
                // must not issue a number: finding the key held already, it would read
                // the counter, whose value is the previous holder's.
                return self.run_acquire(conn, token, b"", true, None, false, Mode::Write);
            }
            let reply = match self.terms.lease {
                Some(_) => resp::request(conn, &[b"SET", &k.lock, token, b"NX", b"PX", self.terms.ttl_arg.as_bytes()])?,
                None => resp::request(conn, &[b"SET", &k.lock, token, b"NX"])?,
            };
            Ok(match reply {
                Value::Okay => Try::Acquired(None),
                // The holder's lease is not known; the waiting loop asks the script.
                _ => Try::Busy { pttl: None, queued: false },
            })
        })
    }

    /// Waits for the lock (`obtain`, after a first try that found it busy).
    fn wait_for(&mut self, token: Token, deadline: Instant, fence: bool, mode: Mode) -> Result<Option<Token>> {
        let kind = mode.kind();
        let outcome = waiting::wait(&LockWait { lock: self, token: &token, fence, mode }, deadline);
        match outcome {
            Waited::Got(fence) => Ok(Some(self.took(token, fence, kind))),
            Waited::TimedOut => Ok(None),
            Waited::Failed(e) => Err(self.maybe_taken(token, e, kind)),
        }
    }

    /// Redlock waits by polling with jittered back-off: its nodes keep no queue. Redis
    /// trouble on the first try is reported at once; later, it is waited out until
    /// the deadline.
    fn acquire_quorum(&mut self, q: &Quorum, token: Token, deadline: Instant) -> Result<Option<Token>> {
        let mut backoff = Backoff::new(self.terms.retry_delay, self.terms.retry_delay_max);
        let mut first = true;
        loop {
            match q.try_acquire(&self.keys, &token, self.redlock_lease()) {
                Ok(Some(_)) => return Ok(Some(self.took(token, None, Kind::Write))),
                Ok(None) => {}
                Err(e) if first => return Err(e),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => {}
            }
            first = false;
            if !backoff.sleep_before(deadline) {
                return Ok(None);
            }
        }
    }

    /// Records a successful acquisition: in the object, and in the process's table of
    /// holds (with a renewal schedule when `auto_renew` is on).
    fn took(&mut self, token: Token, fence: Option<i64>, kind: Kind) -> Token {
        if kind == Kind::Write {
            self.wait_for_replicas(&token);
        }
        let now = Instant::now();
        let renew = Renewal::for_terms(&self.terms, now);
        self.hold_token(token.clone(), renew, kind);
        self.acquired_at = Some(now);
        // A read share has no fencing token.
        self.fence = if self.fencing { fence } else { None };
        self.ever_held = kind == Kind::Write;
        token
    }

    /// With `wait_replicas`, waits (at most half a `read_timeout`) until that many
    /// replicas have the acquisition. A token-checked renewal goes first: `WAIT`
    /// covers this connection's own writes, and a lock handed over was written by the
    /// releaser. This narrows the window in which a failover loses the lock; it is
    /// no guarantee (replication stays asynchronous), so it never fails the acquire.
    fn wait_for_replicas(&self, token: &[u8]) {
        if self.wait_replicas == 0 || self.quorum.is_some() {
            return;
        }
        let (key, ttl) = (&self.keys.lock[..], self.terms.ttl_arg.as_bytes());
        let ms = (self.route.node().read_timeout() / 2).as_millis().max(1) as u64;
        let _ = self.run(Retry::IfStale, |conn, _| {
            let _: i64 = RENEW.invoke(conn, &[key], &[token, ttl])?;
            redis::cmd("WAIT").arg(self.wait_replicas).arg(ms).query::<i64>(conn)
        });
    }

    /// Makes `token` this object's, in the table of holds too. A hold the object had
    /// before is over: the key was free for this one to be taken.
    fn hold_token(&mut self, token: Token, renew: Option<Renewal>, kind: Kind) {
        self.kind = kind;
        self.claim.record(Hold {
            kind,
            route: self.route.clone(),
            quorum: self.quorum.clone(),
            keys: self.keys.clone(),
            token,
            renew,
            lost: false,
            auto_release: self.terms.auto_release,
            orphan: false,
        });
    }

    /// After a failed try the lock may still have been taken (a lost reply):
    /// remember the token so that a later releaseLock() (or the object's end)
    /// clears it; otherwise it expires with its lease. A failure while connecting
    /// sent nothing, so there is nothing to clear (and no reason to connect again
    /// when the object goes away).
    fn maybe_taken(&mut self, token: Token, e: LockError, kind: Kind) -> LockError {
        if self.claim.token.is_none() && !matches!(e, LockError::Connection { sent: false, .. }) {
            self.hold_token(token, None, kind);
            // Not known to be held: a fencing token, if asked for, is taken then, checked.
            self.fence = None;
            self.ever_held = kind == Kind::Write;
        }
        match e {
            LockError::Connection { addr, cause, sent: true } => LockError::Connection {
                addr,
                cause: format!("{cause}; the lock may have been taken: releaseLock() clears it, or it expires after lockOut"),
                sent: true,
            },
            other => other,
        }
    }

    /// One run of the acquire script. `entry` non-empty queues the caller when busy;
    /// `again` says it may be queued already (or an earlier try may have landed).
    /// `fence`: issue a fencing token; the same for every try of one acquisition.
    /// `mode`: a writer, a reader, or a reader upgrading its share.
    fn attempt(&self, token: &[u8], entry: &[u8], again: bool, deadline: Option<Instant>, fence: bool, mode: Mode) -> Result<Try> {
        self.run(Retry::ToSettle, |conn, settling| {
            // A retry after a lost reply must find what the first run did.
            self.run_acquire(conn, token, entry, again || settling, deadline, fence, mode)
        })
    }

    fn run_acquire(
        &self,
        conn: &mut crate::wire::Connection,
        token: &[u8],
        entry: &[u8],
        again: bool,
        deadline: Option<Instant>,
        fence: bool,
        mode: Mode,
    ) -> redis::RedisResult<Try> {
        let queue_ms = deadline
            .map(|d| d.saturating_duration_since(Instant::now()) + QUEUE_SLACK)
            .unwrap_or(QUEUE_SLACK)
            .as_millis()
            .to_string();
        let flag = |on: bool| -> &[u8] { if on { b"1" } else { b"0" } };
        let (ttl, queue_ms) = (self.terms.ttl_arg.as_bytes(), queue_ms.as_bytes());
        let reply = match mode {
            Mode::Read => READ_ACQUIRE.run(conn, &self.keys.all(), &[token, ttl, entry, queue_ms, flag(again), PATIENCE_MS.as_bytes()])?,
            _ => ACQUIRE.run(
                conn,
                &self.keys.all(),
                &[
                    token,
                    ttl,
                    entry,
                    queue_ms,
                    flag(self.terms.fair),
                    flag(again),
                    PATIENCE_MS.as_bytes(),
                    flag(fence),
                    flag(mode == Mode::Upgrade),
                ],
            )?,
        };
        let pair = match &reply {
            Value::Array(items) if items.len() == 2 => resp::int(&items[0]).zip(resp::int(&items[1])),
            _ => None,
        };
        match pair {
            Some((1, number)) => Ok(Try::Acquired(fence.then_some(number))),
            Some((status, pttl)) => Ok(Try::Busy {
                pttl: u64::try_from(pttl).ok().map(Duration::from_millis),
                queued: status == 2,
            }),
            None => Err(unexpected("acquire", &reply)),
        }
    }

    /// Deletes the key if it holds `token` (default: this object's token), or hands it
    /// to the first process waiting for it. Returns whether this call released it.
    ///
    /// A lock the watchdog found taken from this object returns false at once.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        // Only this object knows how long it held the lock; a token from elsewhere hands over.
        let short = !self.terms.fair && self.quick && self.acquired_at.is_some_and(|at| at.elapsed() < SHORT_HOLD);
        let (route, quorum, keys, reading) = (&self.route, self.quorum.as_deref(), &self.keys, self.kind == Kind::Read);
        let mut outcome = (Released::No, false);
        let released = self.claim.release_with(keys, token, |token, own| {
            let what = if own && reading { Release::Read(token) } else { Release::Token(token, short && own) };
            outcome = (release_token(route, quorum, keys, what)?, own);
            Ok(outcome.0 != Released::No)
        })?;
        if let (done, true) = outcome {
            let now = Instant::now();
            RECENT.with(|r| r.set(Recent { released: (keys.id, Some(now)), ..r.get() }));
            self.left_free = (done == Released::LeftFree).then(|| (now, fork_wiped::pid()));
        }
        Ok(released)
    }

    /// Frees the key whoever holds it, handing it to the first waiter as a release
    /// does. Returns whether a holder was removed. A hold of this object's that it
    /// removes is over for the object too.
    pub fn force_release(&mut self) -> Result<bool> {
        let released = release_token(&self.route, self.quorum.as_deref(), &self.keys, Release::Any)? != Released::No;
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
        let ms = config::extension_ms("Lock::extendLock(): Argument #2 ($lockOut)", lock_out, self.terms.lease)?;
        if ms == config::NO_EXPIRY && self.quorum.is_some() {
            return Err(LockError::InvalidValue(
                "Lock::extendLock(): Argument #2 ($lockOut) must be finite with Redlock (\"servers\"): its safety rests on the lease".to_string(),
            ));
        }
        let Some(token) = self.claim.live(token) else { return Ok(false) };
        let own_hold = self.claim.own_for(&token);
        let key = &self.keys.lock[..];
        let ms_arg = ms.to_string();
        let sent = Instant::now();
        let extended: i64 = match &self.quorum {
            Some(q) => match q.extend(&mut Pooled, &self.keys, &token, Duration::from_millis(ms))? {
                Extended::Yes => 1,
                Extended::Lost => 0,
                // Not confirmed: not known to be lost either.
                Extended::No => return Ok(false),
            },
            None => {
                let readers = &self.keys.readers[..];
                let reading = own_hold.is_some() && self.kind == Kind::Read;
                let renew = |script: &crate::scripts::Script, keys: &[&[u8]]| {
                    self.run(Retry::IfStale, |conn, _| script.invoke::<i64>(conn, keys, &[&token, ms_arg.as_bytes()]))
                };
                match if reading { 0 } else { renew(&RENEW, &[key])? } {
                    // Not a writer's token: it may be a reader's.
                    0 if reading || own_hold.is_none() => renew(&READ_RENEW, &[key, readers])?,
                    n => n,
                }
            }
        };
        Claim::renewed(own_hold, extended == 1, (ms != config::NO_EXPIRY).then(|| Duration::from_millis(ms)), sent);
        Ok(extended == 1)
    }

    /// Whether the key holds `token` (default: this object's token) right now.
    pub fn is_owned(&self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.claim.live(token) else { return Ok(false) };
        if let Some(q) = &self.quorum {
            return q.is_owned(&self.keys, &token);
        }
        let key = &self.keys.lock[..];
        let holder = self.run(Retry::IfStale, |conn, _| resp::request(conn, &[b"GET", key]))?;
        match holder {
            Value::BulkString(h) if h == token => Ok(true),
            // Read mode: is the token a live reader?
            Value::BulkString(h) if h.is_empty() => {
                let k = &self.keys;
                let reply = self.run(Retry::IfStale, |conn, _| HOLDS.run(conn, &[&k.lock, &k.readers], &[&token]))?;
                Ok(resp::int(&reply) == Some(2))
            }
            _ => Ok(false),
        }
    }

    /// The key's remaining lease in seconds: `None` when it is free, infinite when it
    /// has no expiry (set by something else than this extension).
    pub fn ttl(&self) -> Result<Option<f64>> {
        if let Some(q) = &self.quorum {
            return Ok(q.pttl(&self.keys)?.map(|ms| ms.map_or(f64::INFINITY, |ms| ms as f64 / 1000.0)));
        }
        let key = &self.keys.lock[..];
        let ms: i64 = self.run(Retry::IfStale, |conn, _| {
            redis::cmd("PTTL").arg(key).query(conn)
        })?;
        Ok(match ms {
            -2 => None,
            ms if ms < 0 => Some(f64::INFINITY),
            ms => Some(ms as f64 / 1000.0),
        })
    }

    /// Acquires like `acquire()`, but a lock that cannot be had within the wait is a
    /// `LockError::Timeout`.
    pub fn acquire_or_fail(&mut self) -> Result<Token> {
        self.acquire(None)?.ok_or_else(|| LockError::timeout("lock", &self.name, self.terms.wait))
    }

    /// Releases `token` after the work it protected (`synchronized()`). An error when
    /// the token was still this object's but no longer held the key: the work
    /// outlived the lock. A token the work released itself is no error.
    pub fn finish(&mut self, token: &[u8]) -> Result<()> {
        let ours = self.claim.is(token);
        match self.release(Some(token))? {
            false if ours => Err(LockError::lost("lock", &self.name)),
            _ => Ok(()),
        }
    }

    /// Whether anyone holds the lock.
    pub fn is_locked(&self) -> Result<bool> {
        if let Some(q) = &self.quorum {
            return q.is_locked(&self.keys);
        }
        let key = &self.keys.lock[..];
        let n: i64 = self.run(Retry::IfStale, |conn, _| {
            redis::cmd("EXISTS").arg(key).query(conn)
        })?;
        Ok(n > 0)
    }

    /// Runs `op` on the server that holds this lock's key (`Route::run`).
    fn run<T>(&self, retry: Retry, op: impl FnMut(&mut crate::wire::Connection, bool) -> redis::RedisResult<T>) -> Result<T> {
        self.route.run(retry, op)
    }

    /// Redlock's lease: always finite (`new` and `extend` refuse `INF` with `servers`).
    fn redlock_lease(&self) -> Duration {
        self.terms.lease.unwrap_or(Duration::from_secs(1))
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
            let (id, made) = RECENT.with(|r| r.get().made);
            let remade = id == self.keys.id && made.is_some_and(|made| made > at);
            if pid == fork_wiped::pid() && !remade {
                let k = &self.keys;
                let _ = self.run(Retry::IfStale, |conn, _| KICK.run(conn, &k.all(), &[PATIENCE_MS.as_bytes()]));
            }
        }
    }
}

/// Releases every lock this process still holds (request end). Errors are ignored:
/// a lock that cannot be released now runs out with its lease.
pub fn release_all_held() {
    for hold in held::take_auto_released() {
        release_hold(&hold);
    }
}

/// Releases a hold left at its object's end or the request's, whatever its kind.
/// Errors are ignored: a hold that cannot be released now runs out with its lease.
fn release_hold(hold: &Hold) {
    if hold.lost {
        return;
    }
    let _ = match hold.kind {
        Kind::Write => release_token(&hold.route, hold.quorum.as_deref(), &hold.keys, Release::Token(&hold.token, false)).map(drop),
        Kind::Read => release_token(&hold.route, None, &hold.keys, Release::Read(&hold.token)).map(drop),
        Kind::Permits => semaphore::release(&hold.route, &hold.keys, &hold.token).map(drop),
    };
}

/// What a release removes.
enum Release<'a> {
    /// The hold of this token (a reader's too); `true`: a short hold (see the module
    /// comment).
    Token(&'a [u8], bool),
    /// The read share of this token.
    Read(&'a [u8]),
    /// Whatever holds the key (`forceReleaseLock()`).
    Any,
}


/// What a release did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Released {
    /// The token did not hold the key.
    No,
    /// Deleted, or handed to a waiter.
    Yes,
    /// Only freed, for the releaser's re-take, while waiters are queued.
    LeftFree,
}

/// Runs the release script: on every node of a Redlock, on the key's server otherwise.
fn release_token(route: &Route, quorum: Option<&Quorum>, keys: &LockKeys, what: Release) -> Result<Released> {
    let yes = |done: bool| if done { Released::Yes } else { Released::No };
    let (token, short, force): (&[u8], bool, &[u8]) = match what {
        Release::Token(t, short) => (t, short, b"0"),
        Release::Read(t) => (t, false, b"0"),
        Release::Any => (b"", false, b"1"),
    };
    if let Some(q) = quorum {
        return q.release(keys, token, force == b"1").map(yes);
    }
    let read_release = || -> Result<Released> {
        let released = route.run(Retry::IfStale, |conn, _| READ_RELEASE.run(conn, &keys.all(), &[token, PATIENCE_MS.as_bytes()]))?;
        Ok(yes(resp::int(&released) == Some(1)))
    };
    if matches!(what, Release::Read(_)) {
        return read_release();
    }
    let released = route.run(Retry::IfStale, |conn, _| {
        let short: &[u8] = if short { b"1" } else { b"0" };
        RELEASE.run(conn, &keys.all(), &[token, short, PATIENCE_MS.as_bytes(), force])
    })?;
    match resp::int(&released) {
        Some(1) => Ok(Released::Yes),
        Some(2) => Ok(Released::LeftFree),
        // Held by readers: the token may be one of them.
        Some(-1) => read_release(),
        _ => Ok(Released::No),
    }
}

/// A queue entry (see `scripts`): `<lease ms>:<f>:<channel length>:<channel><token>`.
fn queue_entry(ttl_arg: &str, flag: u8, channel: &str, token: &[u8]) -> Vec<u8> {
    let mut entry = format!("{ttl_arg}:{}:{}:{channel}", flag as char, channel.len()).into_bytes();
    entry.extend_from_slice(token);
    entry
}

/// One wait of a `Lock`, as `waiting` sees it.
struct LockWait<'a> {
    lock: &'a Lock,
    token: &'a [u8],
    fence: bool,
    mode: Mode,
}

impl Waiter for LockWait<'_> {
    fn route(&self) -> &Route {
        &self.lock.route
    }

    fn token(&self) -> &[u8] {
        self.token
    }

    fn entry(&self, channel: &str) -> Vec<u8> {
        queue_entry(&self.lock.terms.ttl_arg, self.mode.entry_flag(self.fence), channel, self.token)
    }

    fn attempt(&self, entry: &[u8], again: bool, deadline: Instant) -> Result<Try> {
        self.lock.attempt(self.token, entry, again, Some(deadline), self.fence, self.mode)
    }

    /// `CANCEL`: a write lock handed over carries its fencing token (the counter's
    /// value, when one was asked for); a read share none. For an upgrade, finding its
    /// own read share is no grant.
    fn cancel(&self, entry: &[u8]) -> Result<Option<Option<i64>>> {
        let k = &self.lock.keys;
        let got: Vec<i64> = self.lock.run(Retry::IfStale, |conn, _| {
            CANCEL.invoke(conn, &[&k.lock, &k.queue, &k.fence, &k.readers], &[self.token, entry])
        })?;
        Ok(match got[..] {
            [1, number] if self.mode != Mode::Read => Some(self.fence.then_some(number)),
            [2, _] if self.mode == Mode::Read => Some(None),
            _ => None,
        })
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(self.lock.terms.retry_delay, self.lock.terms.retry_delay_max)
    }
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
