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

use crate::clock::Until;
use crate::error::LockError;
use crate::error::Result;
use crate::kinds::core::backoff::Backoff;
use crate::kinds::core::entry::{self, Message};
use crate::kinds::core::mailbox;
use crate::meter::Meter;
use crate::net::resp;
use crate::net::wake;
use crate::topology::route::Route;
use redis::Value;
use std::time::{Duration, Instant};

/// Waiting past the holder's expiry by this much lets Redis see the key as expired.
pub(super) const EXPIRY_SLACK: Duration = Duration::from_millis(2);

/// A queued waiter looks again at least this often, whatever the holder's lease: a
/// safety net for signals that cannot arrive (a releaser whose ACL forbids PUBLISH,
/// a subscriber connection that died without a word).
pub(super) const RECHECK_EVERY: Duration = Duration::from_secs(1);

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
    /// The object's pool-wide metrics.
    fn meter(&self) -> &Meter;
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

/// What listening on the subscriber brought.
pub(crate) enum Woken {
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
pub(crate) fn listen(ear: &mut wake::Listener, token: &[u8], until: &mut Instant) -> Woken {
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

/// Looks, without waiting, for what listening would bring (a wait an event loop
/// drives: `pending`): `Some` of it, or `None` while nothing has come for `token` and
/// `until` has not passed (a notice brings it forward). On the command connection
/// this wait's messages come through its box (`mailbox`), wherever they were read.
pub(crate) fn hear_now(
    ear: &mut wake::Listener,
    token: &[u8],
    until: &mut Instant,
) -> Option<Woken> {
    loop {
        let msg = match mailbox::take(token) {
            Some(msg) => Some(msg),
            None => {
                let Some(sub) = ear.get() else { return Some(Woken::Broken) };
                match sub.hear_now() {
                    Ok(Some(msg)) => Some(msg),
                    Ok(None) => mailbox::take(token),
                    Err(_) => return Some(Woken::Broken),
                }
            }
        };
        let Some(msg) = msg else {
            return (Instant::now() >= *until).then_some(Woken::Nothing);
        };
        match entry::message(&msg, token) {
            Some(Message::Grant(fence, at)) => {
                return Some(Woken::Granted(fence.map(Numbers::One), at))
            }
            Some(Message::Notice(ms)) => *until = (*until).min(Instant::now() + ms + EXPIRY_SLACK),
            // Left over from an earlier wait on a subscriber of its own.
            None => {}
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
