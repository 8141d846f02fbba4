//! A `Lock` as a kind of hold: its scripts, and what their replies mean. The first
//! try is a plain `SET NX PX` when nothing more is needed, the cheapest command there
//! is (on a Redlock quorum, on every node); with a fencing token or a record of who
//! takes it, `take`; in fair mode, or for a reader, the acquire script, which gives
//! way to queued waiters.

use crate::error::Result;
use crate::hold::table::Part;
use crate::kinds::core::entry::{self, Mark};
use crate::kinds::core::waiting::{self, Fences, Numbers, Try};
use crate::kinds::core::{Attempt, Common, Kind, QUEUE_SLACK};
use crate::kinds::lock::part::{As, LockPart};
use crate::kinds::lock::scripts::{Acquire, Cancel, ReadAcquire, Take};
use crate::kinds::retake;
use crate::net::call::Call;
use crate::net::fast::{Fast, TAKEN_ALONE};
use crate::net::resp;
use crate::net::wire::Watch;
use crate::topology::landed::Landed;
use redis::{ErrorKind, RedisError, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How an acquisition takes the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Write,
    Read,
    /// A read share becoming the write lock, same token.
    Upgrade,
}

/// What a hold is of its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    Write,
    Read,
}

/// What a release did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Released {
    /// The token did not hold the key.
    No,
    /// Deleted, or handed to a waiter.
    Yes,
    /// Only freed, for the releaser's re-take, while waiters are queued.
    LeftFree,
}

/// A `Lock`'s own state, beside the core's.
pub(crate) struct LockKind {
    /// The key held as a read share (`As::Read`), made on the first read hold.
    as_read: OnceLock<Arc<LockPart>>,
    /// The key held alone (`As::Alone`), made on the first hold taken alone: every
    /// later one hands out the same `Arc`.
    as_alone: OnceLock<Arc<LockPart>>,
    /// The acquisition in progress.
    mode: Mode,
    /// Whether the acquisition in progress issues a fencing token.
    fence: bool,
    /// What the object's last hold is.
    pub held: Held,
    /// The lock's `LockKeys::id`, for `retake`.
    id: u64,
    /// Replicas that must acknowledge an acquisition (`WAIT`), 0 for none: with
    /// them, an acquisition waits (at most half a `read_timeout`) until that many
    /// replicas have it. This narrows the window in which a failover loses the lock;
    /// it is no guarantee (replication stays asynchronous), so it never fails the
    /// acquire.
    wait_replicas: u32,
    /// Whether this process came back for the lock within `QUICK_RETURN` of its last
    /// release (set by each acquisition): only then may a short hold be re-taken.
    quick: bool,
    /// When this object acquired its token (`clock::mono_nanos`).
    acquired_at: Option<u64>,
    /// When (and in which process) this object's last release freed the lock for a
    /// re-take while waiters were queued; its end hands the lock to them (`left`).
    left_free: Option<(Instant, u32)>,
    /// Whether the hold in progress was taken by a first try that found nobody queued,
    /// on a server with its own compare-and-delete (`net::cad`): its release and
    /// renewal are then the server's own commands first (`net::fast`). Set by that
    /// try alone; any other way in, a hold given back, or a release clears it.
    alone: AtomicBool,
    /// Whether the last `renew` renewed a read share (the token was a reader's): a
    /// durable check after it checks the share (`renewed_as`).
    renewed_read: AtomicBool,
}

impl LockKind {
    pub fn new(id: u64, wait_replicas: u32) -> Self {
        LockKind {
            id,
            as_read: OnceLock::new(),
            as_alone: OnceLock::new(),
            mode: Mode::Write,
            fence: false,
            held: Held::Write,
            wait_replicas,
            quick: false,
            acquired_at: None,
            left_free: None,
            alone: AtomicBool::new(false),
            renewed_read: AtomicBool::new(false),
        }
    }

    /// An acquisition in `mode` starts at `start` (`fence`: it issues a fencing token).
    /// Back for the lock, the object no longer leaves it free to re-take.
    pub fn begin(&mut self, mode: Mode, fence: bool, start: Instant) {
        self.mode = mode;
        self.fence = fence;
        self.quick = retake::came_back(self.id, start);
        self.left_free = None;
        self.alone.store(false, Ordering::Relaxed);
    }

    /// Whether a release of this object's hold now is of a short hold, which may only
    /// free the lock for a re-take (see the module comment).
    fn short(&self, c: &Common) -> bool {
        retake::short_hold(c.terms.fair, self.quick, self.acquired_at)
    }

    /// This object's own hold was released, as `done` says: noted for `retake`, and
    /// for the object's end when it only freed the lock.
    fn released_own(&mut self, done: Released) {
        let now = Instant::now();
        retake::note_released(self.id, now);
        self.left_free = (done == Released::LeftFree).then(|| (now, crate::fork_wiped::pid()));
    }

    fn held_now(&self) -> Held {
        if self.mode == Mode::Read {
            Held::Read
        } else {
            Held::Write
        }
    }

    /// One run of the acquire script (a writer's or a reader's).
    fn acquire_script(
        &self,
        c: &Common,
        part: &LockPart,
        a: &Attempt<'_>,
        run: &mut dyn FnMut(&Call<'_>) -> redis::RedisResult<Value>,
        again: bool,
    ) -> redis::RedisResult<Try> {
        let life = a
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()) + QUEUE_SLACK)
            .unwrap_or(QUEUE_SLACK)
            .as_millis()
            .to_string();
        let k = &part.keys;
        let (token, lease) = (a.token, c.terms.ttl_arg.as_bytes());
        let reply = match self.mode {
            Mode::Read => run(&Call::Script(&ReadAcquire {
                lock: &k.lock,
                queue: &k.queue,
                readers: &k.readers,
                owner: &k.owner,
                token,
                lease,
                sent: a.sent,
                life: life.as_bytes(),
                info: &c.record,
                again,
            }))?,
            _ => run(&Call::Script(&Acquire {
                lock: &k.lock,
                queue: &k.queue,
                fence: &k.fence,
                readers: &k.readers,
                owner: &k.owner,
                token,
                lease,
                sent: a.sent,
                life: life.as_bytes(),
                info: &c.record,
                fair: c.terms.fair,
                again,
                chosen: c.caller_token,
                fenced: self.fence,
                upgrade: self.mode == Mode::Upgrade,
            }))?,
        };
        match waiting::reply_parts(&reply) {
            Some((1, number, _, _)) => {
                Ok(Try::Acquired(self.fence.then_some(Numbers::One(number))))
            }
            Some((4, _, _, _)) => Ok(Try::Unsure),
            Some((_, pttl, queued, clock)) => Ok(Try::busy(pttl, queued, clock)),
            None => Err(unexpected("lock/acquire", &reply)),
        }
    }
}

impl Kind for LockKind {
    type Part = LockPart;

    fn try_part(&self, c: &Common, part: &LockPart, a: &Attempt<'_>) -> Result<Try> {
        // A hold that comes by the wait may have waiters behind it: the scripts release it.
        self.alone.store(false, Ordering::Relaxed);
        // A retry after a lost reply must find what the first run did.
        part.route.call(crate::net::pool::Retry::ToSettle, |run, settling| {
            self.acquire_script(c, part, a, run, a.again || settling)
        })
    }

    fn try_first(&self, c: &Common, part: &LockPart, token: &[u8]) -> Result<Try> {
        if self.mode != Mode::Write || c.terms.fair {
            return self.try_part(
                c,
                part,
                &Attempt { token, sent: b"", again: false, deadline: None },
            );
        }
        let k = &part.keys;
        let lease = c.terms.ttl_arg.as_bytes();
        if self.fence || c.owner_info {
            // A second run settles a lost reply: it finds the key held by this token.
            return part.route.call(crate::net::pool::Retry::ToSettle, |run, settling| {
                // Only what is needed: each key and argument costs its encoding.
                let owner = c.owner_info.then_some(&k.owner[..]);
                let take = Take {
                    lock: &k.lock,
                    fence: &k.fence,
                    owner,
                    token,
                    lease,
                    again: settling,
                    chosen: c.caller_token,
                    fenced: self.fence,
                    info: owner.map(|_| &c.record[..]),
                };
                let reply = run(&Call::Script(&take))?;
                match resp::int(&reply) {
                    Some(0) => Ok(Try::busy_unqueued()),
                    Some(-1) => Ok(Try::Unsure),
                    Some(n) => Ok(Try::Acquired(self.fence.then_some(Numbers::One(n)))),
                    None => Err(unexpected("lock/take", &reply)),
                }
            });
        }
        // On a Redlock quorum this is `SET NX PX` on every node, undone by the release.
        let undo = part.release_call(token, false);
        let taken = |took| if took { Try::Acquired(None) } else { Try::busy_unqueued() };
        let attempt = Attempt { token, sent: b"", again: true, deadline: None };
        part.route.take(
            &k.lock,
            token,
            c.terms.lease,
            &Call::Script(&undo),
            |run, settling| {
                if settling {
                    // The SET's reply was lost: the script finds out whether it landed. It
                    // must not issue a number: finding the key held already, it would read
                    // the counter, whose value is the previous holder's (`fence` is off here).
                    return self.acquire_script(c, part, &attempt, run, true);
                }
                let ms = c.terms.lease.map(|_| lease);
                // Where the server has its own compare-and-delete, the same write asks
                // whether anyone is queued (`net::fast`).
                let reply =
                    run(&Call::Fast(Fast::Take { key: &k.lock, token, ms, queue: &k.queue }))?;
                self.alone.store(false, Ordering::Relaxed);
                match reply {
                    Value::Okay => Ok(Try::Acquired(None)),
                    Value::SimpleString(s) if s == TAKEN_ALONE => {
                        self.alone.store(true, Ordering::Relaxed);
                        Ok(Try::Acquired(None))
                    }
                    // The holder's lease is not known; the waiting loop asks the script.
                    Value::Nil => Ok(Try::busy_unqueued()),
                    // A broken or hostile server: an error, never `false`.
                    other => Err(RedisError::from((
                        ErrorKind::UnexpectedReturnType,
                        "unexpected reply",
                        format!("to SET NX: {other:?}"),
                    ))),
                }
            },
            taken,
        )
    }

    /// The first try again: the cheapest, and the one a quorum runs on every node.
    fn try_poll(
        &self,
        c: &Common,
        part: &LockPart,
        token: &[u8],
        _deadline: Instant,
    ) -> Result<Try> {
        self.try_first(c, part, token)
    }

    fn entry(&self, c: &Common, _part: &LockPart, token: &[u8], channel: &str) -> Vec<u8> {
        let mark = if self.mode == Mode::Read { Mark::Reader } else { Mark::Writer(self.fence) };
        entry::entry(&c.terms.ttl_arg, mark, channel, b"", token)
    }

    /// A write lock handed over carries its fencing token (the counter's value, when
    /// one was asked for); a read share none. For an upgrade, finding its own read
    /// share is no grant.
    fn cancel(
        &self,
        c: &Common,
        part: &LockPart,
        token: &[u8],
        entry: &[u8],
    ) -> Result<Option<Fences>> {
        let k = &part.keys;
        let cancel = Cancel {
            lock: &k.lock,
            queue: &k.queue,
            fence: &k.fence,
            readers: &k.readers,
            owner: &k.owner,
            token,
            entry,
            lease: c.terms.ttl_arg.as_bytes(),
            chosen: c.caller_token,
        };
        let reply = part.route.ask(&Call::Script(&cancel))?;
        let pair = match &reply {
            Value::Array(items) if items.len() == 2 => {
                resp::int(&items[0]).zip(resp::int(&items[1]))
            }
            _ => None,
        };
        Ok(match pair.ok_or_else(|| part.route.unexpected("lock/cancel", &reply))? {
            (1, number) if self.mode != Mode::Read => {
                Some(self.fence.then_some(Numbers::One(number)))
            }
            (2, _) if self.mode == Mode::Read => Some(None),
            _ => None,
        })
    }

    fn release(&mut self, c: &Common, part: &LockPart, token: &[u8], own: bool) -> Result<u64> {
        // No token is empty: the empty one is the script's sign of a forced release.
        if token.is_empty() {
            return Ok(0);
        }
        // Only this object knows how long it held the lock; a token from elsewhere
        // hands over.
        let short = own && self.short(c);
        // Whatever is released, this object's hold taken alone is over, or given back.
        let alone = self.alone.swap(false, Ordering::Relaxed);
        let released = if own && self.held == Held::Read {
            read_release(part, token)?
        } else if own && alone {
            // Taken alone: the server's compare-and-delete (which hands the lock to a
            // waiter that queued since), or the script where the server has none.
            let (release, kick) = (part.release_call(token, short), part.kick());
            let reply = part.route.ask(&Call::Fast(Fast::Release {
                key: &part.keys.lock,
                token,
                queue: &part.keys.queue,
                script: &release,
                kick: &kick,
            }))?;
            released(part, token, &reply)?
        } else {
            release_script(part, token, short)?
        };
        if own {
            self.released_own(released);
        }
        Ok(u64::from(released != Released::No))
    }

    fn fire_release(
        &mut self,
        c: &Common,
        part: &LockPart,
        token: &[u8],
        watch: Watch,
    ) -> Result<()> {
        // Unawaited, the script: it hands over in the same step whoever queued.
        self.alone.store(false, Ordering::Relaxed);
        if self.held == Held::Read {
            part.route.fire(&Call::Script(&part.read_release_call(token)), Some(watch))?;
            self.released_own(Released::Yes);
        } else {
            let short = self.short(c);
            part.route.fire(&Call::Script(&part.release_call(token, short)), Some(watch))?;
            // Whether a short hold only freed the lock is not known: the object's end
            // hands it to the waiters if it did (`kick` does nothing otherwise).
            self.released_own(if short { Released::LeftFree } else { Released::Yes });
        }
        Ok(())
    }

    fn held_as(&self, part: &Arc<LockPart>) -> Arc<dyn Part> {
        if self.mode == Mode::Read {
            kept_as(&self.as_read, part, As::Read)
        } else if self.alone.load(Ordering::Relaxed) {
            kept_as(&self.as_alone, part, As::Alone)
        } else {
            part.clone()
        }
    }

    /// A writer's renewal, or (`Lost`, not this object's write hold) a reader's: the
    /// token may be a reader's (a lease-only route has none).
    fn renew(
        &self,
        _c: &Common,
        part: &LockPart,
        token: &[u8],
        ms: &[u8],
        lease: Duration,
        own: bool,
    ) -> Result<Landed> {
        let reading = own && self.held == Held::Read;
        self.renewed_read.store(false, Ordering::Relaxed);
        let extended = if reading {
            Landed::Lost
        } else if own && self.alone.load(Ordering::Relaxed) {
            let renew = part.renew_call(token, ms, true);
            part.route.renew(
                &Call::Fast(Fast::Renew { key: &part.keys.lock, token, ms, script: &renew }),
                lease,
            )?
        } else {
            part.route.renew(&Call::Script(&part.renew_call(token, ms, true)), lease)?
        };
        match extended {
            Landed::Lost if (reading || !own) && !part.route.lease_only() => {
                let renewed =
                    part.route.renew(&Call::Script(&part.read_renew_call(token, ms)), lease)?;
                self.renewed_read.store(renewed == Landed::Yes, Ordering::Relaxed);
                Ok(renewed)
            }
            other => Ok(other),
        }
    }

    fn renewed_as(&self, part: &Arc<LockPart>) -> Arc<dyn Part> {
        if self.renewed_read.load(Ordering::Relaxed) {
            kept_as(&self.as_read, part, As::Read)
        } else {
            self.held_as(part)
        }
    }

    fn straight_to_wait(&self, _c: &Common, start: Instant) -> bool {
        self.mode != Mode::Upgrade && retake::contended_lately(self.id, start)
    }

    /// A lock this object left free for its own re-take goes to the waiters at its
    /// end, unless a new object for the same lock was made since (`$lock = new
    /// Lock(...)` in a loop): that one is about to take it again.
    fn left(&self, _c: &Common, parts: &[Arc<LockPart>]) {
        let Some((at, pid)) = self.left_free else { return };
        let Some(part) = parts.first() else { return };
        if pid == crate::fork_wiped::pid() && !retake::remade_since(self.id, at) {
            let _ = part.route.fire(&Call::Script(&part.kick()), None);
        }
    }

    fn contended(&self, busy: bool, at: Instant) {
        retake::note_contended(self.id, busy, at);
    }

    fn acquiring(&mut self, c: &mut Common, parts: &[Arc<LockPart>], token: &[u8], at: u64) {
        self.held = self.held_now();
        if self.held == Held::Write && self.wait_replicas > 0 {
            // `WAIT` covers this connection's own writes, and a lock handed over was
            // written by the releaser: a token-checked renewal goes first.
            let part = &parts[0];
            part.route.wait_replicas(
                self.wait_replicas,
                &Call::Script(&part.renew_call(token, c.terms.ttl_arg.as_bytes(), false)),
            );
        }
        self.acquired_at = Some(at);
        // A read share has no fencing token.
        if self.held == Held::Read {
            c.fences = None;
        }
        c.ever_held = self.held == Held::Write;
    }

    fn maybe_taken(&mut self, c: &mut Common) {
        self.held = self.held_now();
        c.ever_held = self.held == Held::Write;
    }
}

/// The object's `part` (held `As::Write`) held `held`: the one kept in `slot`, made on
/// first need. A hold hands out a clone of it, so that no acquisition allocates one.
fn kept_as(slot: &OnceLock<Arc<LockPart>>, part: &LockPart, held: As) -> Arc<LockPart> {
    slot.get_or_init(|| Arc::new(part.held_as(held))).clone()
}

/// Runs the writer's release script where the key lives (on a Redlock quorum, what a
/// majority answered counts); `short` as in `release.lua`. A token that readers hold
/// may be one of them: its share is released then.
pub(crate) fn release_script(part: &LockPart, token: &[u8], short: bool) -> Result<Released> {
    let reply = part.route.ask(&Call::Script(&part.release_call(token, short)))?;
    released(part, token, &reply)
}

/// What the release script's `reply` says (a token that readers hold may be one of
/// them: its share is released then).
fn released(part: &LockPart, token: &[u8], reply: &Value) -> Result<Released> {
    match resp::int(reply) {
        Some(1) => Ok(Released::Yes),
        Some(2) => Ok(Released::LeftFree),
        // Held by readers: the token may be one of them.
        Some(-1) => read_release(part, token),
        _ => Ok(Released::No),
    }
}

/// Releases a reader's share.
fn read_release(part: &LockPart, token: &[u8]) -> Result<Released> {
    let reply = part.route.ask(&Call::Script(&part.read_release_call(token)))?;
    Ok(if resp::int(&reply) == Some(1) { Released::Yes } else { Released::No })
}

/// A reply of a shape the script never gives: the server is not what it seems.
fn unexpected(script: &str, reply: &Value) -> RedisError {
    RedisError::from((
        ErrorKind::UnexpectedReturnType,
        "unexpected reply",
        format!("{script} script: {reply:?}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::keys::LockKeys;
    use crate::topology::route::Route;

    /// What a part's renewal, then its release of the same token, are sent as: the
    /// script's name, or the server's own command.
    fn sent_as(part: &dyn Part) -> (&'static str, &'static str) {
        let renew = part.renew(b"t", b"1000");
        let renewal = match renew.call() {
            Call::Fast(Fast::Renew { script, .. }) => {
                assert_eq!(script.script().name(), "lock/renew");
                "SET IFEQ"
            }
            Call::Script(args) => args.script().name(),
            _ => "other",
        };
        let release = part.release(b"t").expect("a token releases");
        let release = match release.call() {
            Call::Script(args) => args.script().name(),
            _ => "other",
        };
        (renewal, release)
    }

    /// A hold taken alone, or as a read share, is recorded with a part its object made
    /// once: no acquisition allocates one. Held alone, the key is renewed by the server's
    /// own command where it may be, and released by the writer's script.
    #[test]
    fn holds_share_the_parts_their_object_made_once() {
        let settings = Settings::default();
        let topology = settings.check().expect("the defaults");
        let route = Route::for_key(&topology, &settings, b"k").expect("a route");
        let keys = LockKeys::new(b"k".to_vec());
        let mut kind = LockKind::new(keys.id, 0);
        let part = Arc::new(LockPart { keys, route, held: As::Write });
        let written: Arc<dyn Part> = part.clone();

        kind.begin(Mode::Write, false, Instant::now());
        assert!(Arc::ptr_eq(&kind.held_as(&part), &written));
        assert_eq!(sent_as(&*kind.held_as(&part)), ("lock/renew", "lock/release"));

        kind.alone.store(true, Ordering::Relaxed);
        let alone = kind.held_as(&part);
        assert!(!Arc::ptr_eq(&alone, &written));
        assert!(Arc::ptr_eq(&kind.held_as(&part), &alone));
        assert!(Arc::ptr_eq(&kind.renewed_as(&part), &alone));
        assert_eq!(sent_as(&*alone), ("SET IFEQ", "lock/release"));
        assert_eq!(alone.key(), part.key());

        kind.begin(Mode::Write, false, Instant::now());
        assert!(Arc::ptr_eq(&kind.held_as(&part), &written));
        kind.alone.store(true, Ordering::Relaxed);
        assert!(Arc::ptr_eq(&kind.held_as(&part), &alone));

        kind.begin(Mode::Read, false, Instant::now());
        let read = kind.held_as(&part);
        assert!(Arc::ptr_eq(&kind.held_as(&part), &read));
        assert_eq!(sent_as(&*read), ("lock/read_renew", "lock/read_release"));
        kind.begin(Mode::Write, false, Instant::now());
        kind.renewed_read.store(true, Ordering::Relaxed);
        assert!(Arc::ptr_eq(&kind.renewed_as(&part), &read));
    }
}
