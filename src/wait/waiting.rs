//! The one waiting mechanism every kind of hold uses: a mutex's writer, a reader of a
//! shared lock, a semaphore's permits.
//!
//! A waiter tries once; when busy, it queues an entry naming its private wake
//! channel (in the same script as the try), and sleeps on its subscriber until a
//! release hands it the hold (`g…:<token>`), a notice brings its next look forward
//! (`n<ms>:<token>`), the holder's lease runs out, or its deadline comes. At the
//! deadline it leaves the queue, unless the hold was handed to it in the last
//! instant. Without a subscriber (an ACL that forbids pub/sub, a connection that
//! keeps failing) it polls with jittered back-off instead, as it always does on a
//! Redlock quorum, which keeps no queue. Each kind supplies its
//! scripts through `Waiter`; none of them knows how waiting works.

use crate::error::LockError;
use crate::error::Result;
use crate::topology::route::Route;
use crate::wait::backoff::Backoff;
use crate::net::wake;
use crate::stats::{self, Counter};
use crate::net::resp;
use redis::Value;
use std::time::{Duration, Instant};

/// Waiting past the holder's expiry by this much lets Redis see the key as expired.
const EXPIRY_SLACK: Duration = Duration::from_millis(2);

/// A queued waiter looks again at least this often, whatever the holder's lease: a
/// safety net for signals that cannot arrive (a releaser whose ACL forbids PUBLISH,
/// a subscriber connection that died without a word).
const RECHECK_EVERY: Duration = Duration::from_secs(1);

/// What one try found.
pub(crate) enum Try {
    /// With the fencing token, when one was asked for.
    Acquired(Option<i64>),
    /// Someone else holds the lock for `pttl` more (None: no expiry); `queued` is
    /// this waiter's entry as it is in the queue now, if it is.
    Busy { pttl: Option<Duration>, queued: Option<Vec<u8>> },
}

impl Try {
    /// Busy, for `ms` more (negative: no expiry), queued as `entry` if given.
    pub(crate) fn busy(ms: i64, entry: Option<Vec<u8>>) -> Try {
        Try::Busy { pttl: u64::try_from(ms).ok().map(Duration::from_millis), queued: entry }
    }
}

/// An acquire script's reply, `{status, n}` or `{2, n, entry as queued}`.
pub(crate) fn reply_parts(reply: &Value) -> Option<(i64, i64, Option<Vec<u8>>)> {
    let Value::Array(items) = reply else { return None };
    if items.len() > 3 {
        return None;
    }
    let (status, n) = (resp::int(items.first()?)?, resp::int(items.get(1)?)?);
    let entry = match items.get(2) {
        Some(Value::BulkString(e)) => Some(e.clone()),
        Some(_) => return None,
        None => None,
    };
    Some((status, n, (status == 2).then_some(entry).flatten()))
}

/// One kind of hold's side of a wait.
pub(crate) trait Waiter {
    /// Where the key's commands run: grants are published on its server.
    fn route(&self) -> &Route;
    /// The token the wait is for.
    fn token(&self) -> &[u8];
    /// This waiter's queue entry, naming its wake `channel` (see `scripts`), without
    /// the time it waits, which `wait` puts in front (`queue_entry`).
    fn entry(&self, channel: &str) -> Vec<u8>;
    /// One try. A non-empty `entry` queues the waiter when busy; `again`: it may be
    /// queued already, or hold it (an earlier try's reply was lost).
    fn attempt(&self, entry: &[u8], again: bool, deadline: Instant) -> Result<Try>;
    /// Leaves the queue at the deadline. `Some(fencing token)` when the hold was
    /// handed to this waiter meanwhile: it is the caller's after all.
    fn cancel(&self, entry: &[u8]) -> Result<Option<Option<i64>>>;
    /// The pauses between polls, when no subscriber can wake the waiter.
    fn backoff(&self) -> Backoff;
    /// One try that queues nothing, for a route that keeps no queue
    /// (`Route::lease_only`, a Redlock quorum): the wait polls it with back-off.
    fn poll(&self, deadline: Instant) -> Result<Try> {
        self.attempt(&[], true, deadline)
    }
}

/// A queue entry as every kind's scripts read it, less its head:
/// `<lease ms>:<mark>:<channel length>:<channel><token>`, where the mark is the
/// kind's (a lock's mode flag, a semaphore's weight). The token comes last, whole,
/// so that any bytes a caller chose for it read unambiguously. A try sends it with
/// `+<ms>:` in front, how long the waiter still waits; the script queues it with
/// until when instead, on the server's clock (`scripts::lua_stamp`), and answers
/// with the entry as queued, which later tries and the cancel send.
pub(crate) fn queue_entry(lease_ms: &str, mark: impl std::fmt::Display, channel: &str, token: &[u8]) -> Vec<u8> {
    let mut entry = format!("{lease_ms}:{mark}:{}:{channel}", channel.len()).into_bytes();
    entry.extend_from_slice(token);
    entry
}

/// How a wait ended.
pub(crate) enum Waited {
    /// Handed over or taken, with the fencing token when one was issued.
    Got(Option<i64>),
    /// The deadline passed; nothing of the waiter is left queued.
    TimedOut,
    /// Redis trouble that lasted until the deadline (the hold may have been taken:
    /// the caller keeps the token so that a release clears it).
    Failed(LockError),
}

/// Waits for the hold until `deadline`, after a first try that found it busy, and
/// counts the wait (`stats`).
pub(crate) fn wait(w: &impl Waiter, deadline: Instant) -> Waited {
    let started = Instant::now();
    stats::note(Counter::Contended);
    let waited = wait_for(w, deadline);
    stats::waited(started.elapsed());
    if matches!(waited, Waited::TimedOut) {
        stats::note(Counter::Timeouts);
    }
    waited
}

fn wait_for(w: &impl Waiter, deadline: Instant) -> Waited {
    let route = w.route();
    if route.lease_only() {
        return poll(w, deadline);
    }
    // In a cluster, the first try found the slot's master: grants are published there.
    let mut lease = wake::Lease::take(route.node(), route.slot());
    // Listening before the first try of the wait, that try queues at once.
    lease.ensure();
    let mut backoff = w.backoff();
    // The channel and entry this wait last queued with (as queued, once a reply
    // said so); it must not outlive the wait.
    let mut queued_as: Option<(String, Vec<u8>)> = None;
    // A grant heard on a cluster, which the next try confirms.
    let mut heard = false;
    // The last try's error, while tries keep failing: what the wait ends with.
    let mut failing: Option<LockError> = None;
    loop {
        if route.moves() {
            // The slot moved, or its master failed over: listen where releases run now.
            let node = route.node();
            if node.id() != lease.endpoint().id() {
                lease = wake::Lease::take(node, route.slot());
            }
        }
        if Instant::now() >= deadline {
            // Queued: the cancel says whether the hold was handed over meanwhile.
            if let Some((_, entry)) = &queued_as {
                return match (give_up(w, entry), failing) {
                    (Waited::TimedOut, Some(e)) => Waited::Failed(e),
                    (outcome, _) => outcome,
                };
            }
        }
        let channel = lease.get().map(|sub| sub.channel().to_string());
        let entry = match (&channel, &queued_as) {
            (Some(ch), Some((was, entry))) if ch == was => entry.clone(),
            (Some(ch), _) => {
                let ms = deadline.saturating_duration_since(Instant::now()).as_millis();
                let mut entry = format!("+{ms}:").into_bytes();
                entry.extend_from_slice(&w.entry(ch));
                entry
            }
            (None, _) => Vec::new(),
        };
        let may_be_queued = queued_as.is_some();
        if let Some(ch) = channel.filter(|_| !entry.is_empty()) {
            // Even if this try fails, it may have queued us: later tries and the
            // cancel at the deadline must know.
            queued_as = Some((ch, entry.clone()));
        }
        let (pttl, queued) = match w.attempt(&entry, may_be_queued, deadline) {
            Ok(Try::Acquired(fence)) => {
                if std::mem::take(&mut heard) {
                    stats::note(Counter::HandedOver);
                }
                return Waited::Got(fence);
            }
            Ok(Try::Busy { pttl, queued }) => {
                if let (Some(stored), Some((_, entry))) = (&queued, queued_as.as_mut()) {
                    *entry = stored.clone();
                }
                (pttl, queued.is_some())
            }
            // A refusal that waiting cannot change (an ACL) ends the wait at once.
            Err(e) if !e.may_pass() => return Waited::Failed(e),
            // Mid-wait, a restart or a dropped connection is waited out until the deadline.
            Err(e) => {
                if !backoff.sleep_before(deadline) {
                    return Waited::Failed(e);
                }
                failing = Some(e);
                continue;
            }
        };
        failing = None;
        if Instant::now() >= deadline {
            let Some((_, entry)) = queued_as else { return Waited::TimedOut };
            return give_up(w, &entry);
        }
        // Wake at the holder's expiry, in case no grant ever comes, or at the deadline.
        let timer = Instant::now()
            + match pttl {
                Some(p) if queued => (p + EXPIRY_SLACK).min(RECHECK_EVERY),
                Some(p) => p + EXPIRY_SLACK,
                None => backoff.max(),
            };
        let mut wake_at = timer.min(deadline);
        if queued {
            let exact = !route.moves() || lease.get().is_some_and(|s| s.sharded());
            match listen(&mut lease, w.token(), &mut wake_at) {
                Heard::Granted(fence) if exact => {
                    stats::note(Counter::HandedOver);
                    return Waited::Got(fence);
                }
                // Cluster PUBLISH (not sharded) reaches subscribers on every node, but
                // the releaser's script counts only its own node's: a grant heard here
                // may have been given to no one (the slot moved during the wait). The
                // next try, one round trip, confirms it.
                Heard::Granted(_) => heard = true,
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

/// Leaves the queue at the deadline (`entry`, as queued or as sent). Cut off from
/// the server, the wait ends after one `read_timeout` more: the entry's time is up
/// on the server too, so no release hands it the hold after that.
fn give_up(w: &impl Waiter, entry: &[u8]) -> Waited {
    match w.cancel(entry) {
        Ok(Some(fence)) => {
            // Handed over just before the cancel.
            stats::note(Counter::HandedOver);
            Waited::Got(fence)
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
        match w.poll(deadline) {
            Ok(Try::Acquired(fence)) => return Waited::Got(fence),
            Ok(Try::Busy { .. }) => {}
            Err(e) if Instant::now() >= deadline => return Waited::Failed(e),
            Err(_) => {}
        }
    }
}

/// What listening on the subscriber brought.
enum Heard {
    /// With the fencing token, when the grant carries one.
    Granted(Option<i64>),
    /// Nothing came before the wake-up time (which a notice may have brought forward).
    Nothing,
    Broken,
}

/// Blocks on the subscriber until this wait's grant arrives or `until` passes. A
/// notice ("look again in n ms": the lock was freed, not handed over) brings `until`
/// forward.
fn listen(lease: &mut wake::Lease, token: &[u8], until: &mut Instant) -> Heard {
    loop {
        let now = Instant::now();
        if now >= *until {
            return Heard::Nothing;
        }
        let Some(sub) = lease.get() else {
            return Heard::Broken;
        };
        match sub.next_grant(*until - now) {
            Ok(Some(msg)) => match parse_message(&msg, token) {
                Some(Message::Grant(fence)) => return Heard::Granted(fence),
                Some(Message::Notice(ms)) => *until = (*until).min(Instant::now() + ms + EXPIRY_SLACK),
                // A message left over from an earlier wait that ended another way.
                None => {}
            },
            Ok(None) => return Heard::Nothing,
            Err(_) => return Heard::Broken,
        }
    }
}

/// A message on the wake channel, for this wait's token. The token comes last, after
/// the first colon, so that any bytes a caller chose for it read unambiguously.
#[derive(Debug, PartialEq)]
enum Message {
    /// `g:<token>` or `g<fencing token>:<token>`: the lock is this waiter's.
    Grant(Option<i64>),
    /// `n<ms>:<token>`: look again in `ms`.
    Notice(Duration),
}

fn parse_message(msg: &[u8], token: &[u8]) -> Option<Message> {
    let (&kind, rest) = msg.split_first()?;
    let colon = rest.iter().position(|&b| b == b':')?;
    if &rest[colon + 1..] != token {
        return None;
    }
    let digits = &rest[..colon];
    let number = || -> Option<u64> { std::str::from_utf8(digits).ok()?.parse().ok() };
    match kind {
        b'g' if digits.is_empty() => Some(Message::Grant(None)),
        b'g' => Some(Message::Grant(Some(i64::try_from(number()?).ok()?))),
        b'n' => Some(Message::Notice(Duration::from_millis(number()?))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_messages_are_read_for_this_token_only() {
        let t = b"0123abcd";
        assert_eq!(parse_message(b"g:0123abcd", t), Some(Message::Grant(None)));
        assert_eq!(parse_message(b"g42:0123abcd", t), Some(Message::Grant(Some(42))));
        assert_eq!(parse_message(b"n5:0123abcd", t), Some(Message::Notice(Duration::from_millis(5))));
        for other in [&b"g:ffff0000"[..], b"gx:0123abcd", b"n:0123abcd", b"g:0123abcdef", b"g:0123", b"0123abcd", b""] {
            assert_eq!(parse_message(other, t), None, "{}", String::from_utf8_lossy(other));
        }
        // A chosen token may hold the separators: it is compared whole, after the first colon.
        let odd = b"a:b=c\0";
        assert_eq!(parse_message(b"g7:a:b=c\0", odd), Some(Message::Grant(Some(7))));
        assert_eq!(parse_message(b"g:a:b=c", odd), None);
        // An earlier wait's grant whose token starts like this one's is not this one's.
        assert_eq!(parse_message(b"g:x=7", b"x"), None);
    }
}
