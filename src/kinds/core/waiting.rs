//! The one waiting mechanism every kind of hold uses: a mutex's writer, a reader of a
//! shared lock, a semaphore's permits.
//!
//! A waiter tries once; when busy, it queues an entry naming its private wake
//! channel (in the same script as the try), and sleeps on its subscriber until a
//! release hands it the hold (`g…:<token>`), a notice brings its next look forward
//! (`n<ms>:<token>`), the holder's lease runs out, or its deadline comes. At the
//! deadline it leaves the queue, unless the hold was handed to it in the last
//! instant.
//!
//! No hold is handed back whose lease may have ended (a process paused, or cut off,
//! between the grant and its reading): every acquisition comes with a bound on when
//! its lease ends, on this process's clock, less the clock drift Redlock allows
//! (`clock::lease_bound` for a try, counted from when it was sent; `clock::grant_bound`
//! for a grant, from the server's clock in the message). A hold past its bound is stale: it is
//! counted (`stale`), and the wait tries again (the try finds the hold still its own and
//! starts its lease again, or queues anew); at the deadline it is released instead.
//!
//! Without a subscriber (an ACL that forbids pub/sub, a connection that
//! keeps failing) it polls with jittered back-off instead, as it always does on a
//! Redlock quorum, which keeps no queue. Each kind supplies its
//! scripts through `Waiter`; none of them knows how waiting works.

use crate::clock::{self, Boot, Until};
use crate::error::LockError;
use crate::error::Result;
use crate::kinds::core::backoff::Backoff;
use crate::kinds::core::entry::{self, Message};
use crate::net::resp;
use crate::net::wake;
use crate::stats::{self, Counter};
use crate::topology::route::Route;
use redis::Value;
use std::time::{Duration, Instant};

/// Waiting past the holder's expiry by this much lets Redis see the key as expired.
const EXPIRY_SLACK: Duration = Duration::from_millis(2);

/// A queued waiter looks again at least this often, whatever the holder's lease: a
/// safety net for signals that cannot arrive (a releaser whose ACL forbids PUBLISH,
/// a subscriber connection that died without a word).
const RECHECK_EVERY: Duration = Duration::from_secs(1);

/// The fencing tokens of a hold, one per key taken alone (0 for a read share), when
/// they were asked for.
pub(crate) type Fences = Option<Numbers>;

/// Fencing tokens, kept without an allocation for the one key most holds have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Numbers {
    One(i64),
    Many(Vec<i64>),
}

impl Numbers {
    /// The numbers of `list`, in order.
    pub(crate) fn of(list: Vec<i64>) -> Numbers {
        match list[..] {
            [one] => Numbers::One(one),
            _ => Numbers::Many(list),
        }
    }

    /// The numbers, in order.
    pub(crate) fn as_slice(&self) -> &[i64] {
        match self {
            Numbers::One(one) => std::slice::from_ref(one),
            Numbers::Many(many) => many,
        }
    }
}

/// What one try found.
pub(crate) enum Try {
    /// With the fencing tokens, when they were asked for.
    Acquired(Fences),
    /// Someone else holds the lock for `pttl` more (None: no expiry); `queued` is
    /// this waiter's entry as it is in the queue now, if it is; `clock`, the server's
    /// clock (ms) when the try stamped the entry, if it did.
    Busy { pttl: Option<Duration>, queued: Option<Vec<u8>>, clock: Option<i64> },
    /// The key holds this waiter's token, but nothing shows that this waiter took it:
    /// a token the caller chose, found after a lost reply or without the queue entry
    /// that a grant would have taken out. Another holder of the same token may have
    /// it (taking a lock is never re-entry), so it is not an acquisition.
    Unsure,
}

impl Try {
    /// Busy, for `ms` more (negative: no expiry), queued as `entry` if given, stamped
    /// at the server's `clock` if given.
    pub(crate) fn busy(ms: i64, entry: Option<Vec<u8>>, clock: Option<i64>) -> Try {
        Try::Busy { pttl: u64::try_from(ms).ok().map(Duration::from_millis), queued: entry, clock }
    }

    /// Busy, and nothing known of a queue entry.
    pub(crate) fn busy_unqueued() -> Try {
        Try::Busy { pttl: None, queued: None, clock: None }
    }
}

/// What an acquisition says when a try was `Try::Unsure` (`addr` names the server):
/// Redis trouble (a lost reply) that left the key holding this token, as far as can
/// be known by this call or by another holder of the same token.
pub(crate) fn unsure(addr: &str) -> LockError {
    LockError::Connection {
        addr: addr.to_string(),
        cause: "a reply was lost, and the key now holds this token: this call may have taken it, or another holder of the same token holds it (taking a lock is never re-entry)".to_string(),
        sent: true,
    }
}

/// An acquire script's reply, its parts: status, n, the entry as queued, the clock.
pub(crate) type ReplyParts = (i64, i64, Option<Vec<u8>>, Option<i64>);

/// An acquire script's reply: `{status, n}`, or `{2, n, entry as queued, clock}`
/// (the clock absent for an entry sent as queued); `{3, n}`: the entry sent as queued
/// has left the queue (busy, and queued no more).
pub(crate) fn reply_parts(reply: &Value) -> Option<ReplyParts> {
    let Value::Array(items) = reply else { return None };
    if items.len() > 4 {
        return None;
    }
    let (status, n) = (resp::int(items.first()?)?, resp::int(items.get(1)?)?);
    let entry = match items.get(2) {
        Some(Value::BulkString(e)) => Some(e.clone()),
        Some(_) => return None,
        None => None,
    };
    let clock = match items.get(3) {
        Some(v) => Some(resp::int(v)?),
        None => None,
    };
    let queued = status == 2;
    Some((status, n, queued.then_some(entry).flatten(), clock.filter(|_| queued)))
}

/// One kind of hold's side of a wait.
pub(crate) trait Waiter {
    /// Where the key's commands run: grants are published on its server.
    fn route(&self) -> &Route;
    /// The token the wait is for.
    fn token(&self) -> &[u8];
    /// This waiter's queue entry, naming its wake `channel`, without the time it
    /// waits, which `wait` puts in front (`entry::head`).
    fn entry(&self, channel: &str) -> Vec<u8>;
    /// One try. A non-empty `entry` queues the waiter when busy; `again`: it may be
    /// queued already, or hold it (an earlier try's reply was lost).
    fn try_part(&self, entry: &[u8], again: bool, deadline: Instant) -> Result<Try>;
    /// Leaves the queue at the deadline. `Some(fencing tokens)` when the hold was
    /// handed to this waiter meanwhile: it is the caller's after all.
    fn cancel(&self, entry: &[u8]) -> Result<Option<Fences>>;
    /// The pauses between polls, when no subscriber can wake the waiter.
    fn backoff(&self) -> Backoff;
    /// The lease a hold gets (`None`: no expiry).
    fn lease(&self) -> Option<Duration>;
    /// Releases a hold that came too late to be used (stale: see the module comment),
    /// if the token still has it. Errors are ignored: the lease ends it anyway.
    fn abandon(&self);
    /// One try that queues nothing, for a route that keeps no queue
    /// (`Route::lease_only`, a Redlock quorum): the wait polls it with back-off.
    fn try_poll(&self, deadline: Instant) -> Result<Try> {
        self.try_part(&[], true, deadline)
    }
}

/// How a wait ended.
pub(crate) enum Waited {
    /// Handed over or taken, with the fencing tokens when they were issued, and when
    /// its lease ends at the earliest.
    Got(Fences, Until),
    /// The deadline passed; nothing of the waiter is left queued.
    TimedOut,
    /// Redis trouble that lasted until the deadline (the hold may have been taken:
    /// the caller keeps the token so that a release clears it).
    Failed(LockError),
}

/// Waits for the hold until `deadline`, after a first try that found it busy
/// (`tried`), or as the first try (the caller expects it busy), and counts the wait
/// (`stats`) once a try found it busy. Answers how it ended, and whether it was busy.
///
/// `may_hold`: the first try may find the hold this waiter's already (an earlier try
/// took it too late to be used: stale).
pub(crate) fn wait(
    w: &impl Waiter,
    deadline: Instant,
    may_hold: bool,
    tried: bool,
) -> (Waited, bool) {
    let started = Instant::now();
    let mut busy = tried;
    if tried {
        stats::note(Counter::Contended);
    }
    let waited = wait_for(w, deadline, may_hold, &mut busy);
    if busy {
        stats::waited(started.elapsed());
        if matches!(waited, Waited::TimedOut) {
            stats::note(Counter::Timeouts);
        }
    }
    (waited, busy)
}

/// `busy`: a try found the hold busy (set, and counted, at the first that does).
fn wait_for(w: &impl Waiter, deadline: Instant, may_hold: bool, busy: &mut bool) -> Waited {
    let route = w.route();
    if route.lease_only() {
        if may_hold {
            // A stale hold on a quorum: it goes first, or the polls would find it busy.
            w.abandon();
        }
        return poll(w, deadline);
    }
    // In a cluster, the first try found the slot's master: grants are published there.
    let mut ear = wake::Listener::lend(route.node(), route.slot());
    let waited = queue_and_listen(w, &mut ear, deadline, may_hold, busy);
    if matches!(waited, Waited::Failed(_)) {
        // An entry of this wait may still be queued: nobody must be found listening
        // for it once the wait has ended (`wake::Listener::in_doubt`).
        ear.in_doubt();
    }
    waited
}

/// The wait on a route that keeps a queue: an entry naming the channel of `lease`,
/// then grants, notices and timers until the hold is had or the deadline passes.
/// Blocking: it sleeps and listens where the steps (`Queued`) say.
fn queue_and_listen(
    w: &impl Waiter,
    ear: &mut wake::Listener,
    deadline: Instant,
    may_hold: bool,
    busy: &mut bool,
) -> Waited {
    let mut q = Queued::new(w, ear, deadline, may_hold, *busy);
    let waited = loop {
        match q.advance(w, ear) {
            Next::Done(waited) => break waited,
            Next::Pause(at) => std::thread::sleep(at.saturating_duration_since(Instant::now())),
            Next::Listen { mut until, exact } => {
                let woken = listen(ear, w.token(), &mut until);
                if let Some(waited) = q.heard(w, ear, woken, exact) {
                    break waited;
                }
            }
        }
    };
    *busy = q.busy;
    waited
}

/// What a wait does next (`Queued::advance`).
enum Next {
    /// It ended.
    Done(Waited),
    /// Nothing to listen to: it looks again at this instant (a back-off pause).
    Pause(Instant),
    /// Queued: it listens on its subscriber until `until` (a notice may bring that
    /// forward), and hands what came to `Queued::heard`. `exact`: a grant heard is this
    /// waiter's (else the next try confirms it: a cluster's unsharded PUBLISH).
    Listen { until: Instant, exact: bool },
}

/// A wait on a route that keeps a queue, as steps: `advance` tries (queueing the
/// waiter) and says what to wait for next; `heard` takes what listening brought. A
/// blocking wait drives them (`queue_and_listen`); nothing in them blocks but the
/// commands they send. It keeps only its own state: each step is handed the waiter
/// and its listener, so that a wait can be driven from elsewhere too.
struct Queued {
    deadline: Instant,
    /// The next try may find the hold this waiter's already (stale, or a try cut off).
    may_hold: bool,
    /// A try found the hold busy (set, and counted, at the first that does).
    busy: bool,
    backoff: Backoff,
    /// The channel and entry this wait last queued with (as queued, once a reply
    /// said so); it must not outlive the wait.
    queued_as: Option<(String, Vec<u8>)>,
    /// A grant heard on a cluster, which the next try confirms.
    heard: bool,
    /// This wait's latest exchange with the server that read its clock (a try that
    /// stamped the entry): a grant's lease is bounded from it (`grant_bound`).
    seen: Option<clock::Exchange>,
    /// The last try's error, while tries keep failing: what the wait ends with.
    failing: Option<LockError>,
}

impl Queued {
    fn new(
        w: &impl Waiter,
        ear: &mut wake::Listener,
        deadline: Instant,
        may_hold: bool,
        busy: bool,
    ) -> Self {
        // Listening before the first try of the wait, that try queues at once.
        ear.ensure();
        let backoff = w.backoff();
        Queued {
            deadline,
            may_hold,
            busy,
            backoff,
            queued_as: None,
            heard: false,
            seen: None,
            failing: None,
        }
    }

    /// One try (queueing the waiter when busy), and what to wait for next; at the
    /// deadline, the end of the wait.
    fn advance(&mut self, w: &impl Waiter, ear: &mut wake::Listener) -> Next {
        let (route, deadline) = (w.route(), self.deadline);
        if route.moves() {
            // The slot moved, or its master failed over: listen where releases run now.
            let node = route.node();
            if node.id() != ear.endpoint().id() {
                *ear = wake::Listener::lend(node, route.slot());
            }
        }
        if Instant::now() >= deadline {
            // Queued: the cancel says whether the hold was handed over meanwhile.
            if let Some((_, entry)) = &self.queued_as {
                return Next::Done(match (give_up(w, entry), self.failing.take()) {
                    (Waited::TimedOut, Some(e)) => Waited::Failed(e),
                    (outcome, _) => outcome,
                });
            }
            if self.may_hold {
                // A stale hold (or one a try cut off by a failover may have taken), and
                // no time to try again: it goes; Redis trouble that lasted is reported.
                w.abandon();
                return Next::Done(self.failing.take().map_or(Waited::TimedOut, Waited::Failed));
            }
        }
        let channel = ear.get().map(|sub| sub.channel().to_string());
        let entry = match (&channel, &self.queued_as) {
            (Some(ch), Some((was, entry))) if ch == was => entry.clone(),
            (Some(ch), _) => {
                let mut entry = entry::head(ear.endpoint(), deadline);
                entry.extend_from_slice(&w.entry(ch));
                entry
            }
            (None, _) => Vec::new(),
        };
        let may_be_queued = self.queued_as.is_some() || self.may_hold;
        if let Some(ch) = channel.filter(|_| !entry.is_empty()) {
            // Even if this try fails, it may have queued us: later tries and the
            // cancel at the deadline must know.
            self.queued_as = Some((ch, entry.clone()));
        }
        let sent = Boot::now();
        let (pttl, queued) = match w.try_part(&entry, may_be_queued, deadline) {
            Ok(Try::Acquired(fence)) => {
                let Some(until) = clock::taken(sent, w.lease()) else {
                    // Taken (or found its own) too late to use: the next try starts
                    // its lease again, or queues anew.
                    self.may_hold = true;
                    return Next::Pause(Instant::now());
                };
                if std::mem::take(&mut self.heard) {
                    stats::note(Counter::HandedOver);
                }
                return Next::Done(Waited::Got(fence, until));
            }
            Ok(Try::Busy { pttl, queued, clock }) => {
                self.may_hold = false;
                if let Some(server_ms) = clock {
                    self.seen = Some(clock::Exchange { sent, server_ms });
                    ear.endpoint().note_server_clock(Boot::now(), server_ms);
                }
                if !std::mem::replace(&mut self.busy, true) {
                    stats::note(Counter::Contended);
                }
                match (&queued, self.queued_as.as_mut()) {
                    (Some(stored), Some((_, entry))) => *entry = stored.clone(),
                    // Sent as queued and gone from the queue (granted, or passed
                    // over): never queued again; the next try queues anew.
                    (None, Some(_)) if !entry.is_empty() => self.queued_as = None,
                    _ => {}
                }
                (pttl, queued.is_some())
            }
            // Held by this token, not known to be this wait's: waited out like Redis
            // trouble (the other holder may release it), then reported as such.
            Ok(Try::Unsure) => return self.failed(unsure(route.node().addr())),
            // A refusal that waiting cannot change (an ACL) ends the wait at once.
            Err(e) if !e.may_pass() => return Next::Done(Waited::Failed(e)),
            // Mid-wait, a restart or a dropped connection is waited out until the deadline.
            Err(e) => return self.failed(e),
        };
        self.failing = None;
        if Instant::now() >= deadline {
            let Some((_, entry)) = &self.queued_as else { return Next::Done(Waited::TimedOut) };
            return Next::Done(give_up(w, entry));
        }
        // Wake at the holder's expiry, in case no grant ever comes, or at the deadline.
        let timer = Instant::now()
            + match pttl {
                Some(p) if queued => (p + EXPIRY_SLACK).min(RECHECK_EVERY),
                Some(p) => p + EXPIRY_SLACK,
                None => self.backoff.max(),
            };
        let wake_at = timer.min(deadline);
        if queued {
            let exact = !route.moves() || ear.get().is_some_and(|s| s.sharded());
            return Next::Listen { until: wake_at, exact };
        }
        if ear.ensure() {
            // With a subscriber now, the next try queues at once.
            return Next::Pause(Instant::now());
        }
        // No way to be woken: poll, never past the holder's expiry or the deadline.
        Next::Pause(self.backoff.pause_until(wake_at).unwrap_or_else(Instant::now))
    }

    /// A try that failed with `e` (Redis trouble, or a hold of this token not known to
    /// be this wait's): waited out with back-off until the deadline, then reported.
    fn failed(&mut self, e: LockError) -> Next {
        match self.backoff.pause_until(self.deadline) {
            None => Next::Done(Waited::Failed(e)),
            Some(at) => {
                self.failing = Some(e);
                Next::Pause(at)
            }
        }
    }

    /// What listening brought (`Next::Listen`): the end of the wait for a grant of
    /// this waiter's read in time, else nothing (the next `advance` tries again).
    fn heard(
        &mut self,
        w: &impl Waiter,
        ear: &mut wake::Listener,
        woken: Woken,
        exact: bool,
    ) -> Option<Waited> {
        match woken {
            Woken::Granted(fence, at) if exact => {
                if let Some(granted) = at {
                    ear.endpoint().note_server_clock(Boot::now(), granted);
                }
                let lease = w.lease();
                let until = match (self.seen, at) {
                    (Some(seen), Some(granted)) => {
                        clock::grant_bound(seen, granted, lease, Boot::now())
                    }
                    // A grant that does not say when (an older releaser), or a wait
                    // that saw no clock: the next try confirms it.
                    _ if lease.is_none() => None,
                    _ => Some(Boot::now()),
                };
                if let Some(until) = clock::fresh(until) {
                    stats::note(Counter::HandedOver);
                    return Some(Waited::Got(fence, until));
                }
                // Read too late: the next try finds the hold still this waiter's (and
                // starts its lease again), or queues anew.
                self.may_hold = true;
            }
            // Cluster PUBLISH (not sharded) reaches subscribers on every node, but the
            // releaser's script counts only its own node's: a grant heard here may
            // have been given to no one (the slot moved during the wait). The next
            // try, one round trip, confirms it.
            Woken::Granted(..) => self.heard = true,
            Woken::Nothing => {}
            Woken::Broken => ear.discard(),
        }
        None
    }
}

/// Leaves the queue at the deadline (`entry`, as queued or as sent). Cut off from
/// the server, the wait ends after one `read_timeout` more: the entry's time is up
/// on the server too, so no release hands it the hold after that.
fn give_up(w: &impl Waiter, entry: &[u8]) -> Waited {
    let sent = Boot::now();
    match w.cancel(entry) {
        Ok(Some(fence)) => {
            // Handed over just before the cancel, which started its lease again.
            let Some(until) = clock::taken(sent, w.lease()) else {
                w.abandon();
                return Waited::TimedOut;
            };
            stats::note(Counter::HandedOver);
            Waited::Got(fence, until)
        }
        Ok(None) => Waited::TimedOut,
        Err(e) => Waited::Failed(e),
    }
}

/// The wait on a route that keeps no queue to be woken from (a Redlock quorum): a
/// try after each jittered pause until the deadline. Redis trouble is waited out
/// until then too.
fn poll(w: &impl Waiter, deadline: Instant) -> Waited {
    let mut backoff = w.backoff();
    loop {
        if !backoff.sleep_before(deadline) {
            return Waited::TimedOut;
        }
        let sent = Boot::now();
        match w.try_poll(deadline) {
            Ok(Try::Acquired(fence)) => {
                if let Some(until) = clock::taken(sent, w.lease()) {
                    return Waited::Got(fence, until);
                }
                // Too late to use: it goes, and the polling goes on.
                w.abandon();
            }
            Ok(Try::Busy { .. }) => {}
            Ok(Try::Unsure) if Instant::now() >= deadline => {
                return Waited::Failed(unsure(w.route().node().addr()))
            }
            Ok(Try::Unsure) => {}
            Err(e) if Instant::now() >= deadline => return Waited::Failed(e),
            Err(_) => {}
        }
    }
}

/// What listening on the subscriber brought.
enum Woken {
    /// With the fencing token, when the grant carries one, and the server's time (ms)
    /// of the grant, when it says.
    Granted(Fences, Option<i64>),
    /// Nothing came before the wake-up time (which a notice may have brought forward).
    Nothing,
    Broken,
}

/// Blocks on the subscriber until this wait's grant arrives or `until` passes. A
/// notice ("look again in n ms": the lock was freed, not handed over) brings `until`
/// forward.
fn listen(ear: &mut wake::Listener, token: &[u8], until: &mut Instant) -> Woken {
    loop {
        let now = Instant::now();
        if now >= *until {
            return Woken::Nothing;
        }
        let Some(sub) = ear.get() else {
            return Woken::Broken;
        };
        match sub.next_grant(*until - now) {
            Ok(Some(msg)) => match entry::message(&msg, token) {
                Some(Message::Grant(fence, at)) => {
                    return Woken::Granted(fence.map(Numbers::One), at)
                }
                Some(Message::Notice(ms)) => {
                    *until = (*until).min(Instant::now() + ms + EXPIRY_SLACK)
                }
                // A message left over from an earlier wait that ended another way.
                None => {}
            },
            Ok(None) => return Woken::Nothing,
            Err(_) => return Woken::Broken,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acquire_replies_carry_the_stamping_clock() {
        let entry = Value::BulkString(b"10000:500:0:3:abcTOKEN".to_vec());
        let queued =
            Value::Array(vec![Value::Int(2), Value::Int(40), entry.clone(), Value::Int(9_000)]);
        assert_eq!(
            reply_parts(&queued),
            Some((2, 40, Some(b"10000:500:0:3:abcTOKEN".to_vec()), Some(9_000)))
        );
        // Sent as queued: no clock.
        let kept = Value::Array(vec![Value::Int(2), Value::Int(40), entry]);
        assert_eq!(reply_parts(&kept).map(|p| p.3), Some(None));
        // A clock on anything but a queued reply is not one.
        let taken = Value::Array(vec![Value::Int(1), Value::Int(7)]);
        assert_eq!(reply_parts(&taken), Some((1, 7, None, None)));
        let bad = Value::Array(vec![
            Value::Int(2),
            Value::Int(40),
            Value::Nil,
            Value::BulkString(b"x".to_vec()),
        ]);
        assert_eq!(reply_parts(&bad), None);
    }
}
