//! What a kind of hold brings to the core: its scripts, run on one part at a time,
//! and what their replies mean. Everything else (the tries and the wait, recording,
//! renewal, the releases, request end) is the core's (`Holder`).

use crate::error::Result;
use crate::hold::table::Part;
use crate::kinds::core::common::Common;
use crate::kinds::core::waiting::{Fences, Try};
use crate::net::wire::Watch;
use crate::topology::landed::Landed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One try of an acquisition on one part.
#[derive(Clone, Copy)]
pub(crate) struct Attempt<'a> {
    pub token: &'a [u8],
    /// The queue entry to queue with when busy, as sent (or as queued); empty: a try
    /// that queues nothing.
    pub sent: &'a [u8],
    /// It may be queued already, or hold the part (an earlier try of this acquisition
    /// took it, or its reply was lost): a settle.
    pub again: bool,
    /// When the wait ends, for the queue's lifetime; `None`: no wait.
    pub deadline: Option<Instant>,
}

/// A kind of hold: a `Lock` (in write or read mode), a `Semaphore`'s permits, a
/// `MultiLock`'s keys. Its object is a `Holder<Self>`: one part per route it holds
/// on (one; a MultiLock on a Cluster, one per slot group), each recorded as a hold
/// of its own in the table.
pub(crate) trait Kind: Sized {
    /// One route's share of a hold: where it lives, its keys, and its renewal and
    /// release for the watchdog and request end.
    type Part: Part + 'static;

    /// The PHP method that releases a hold of this kind, for messages.
    const RELEASE: &'static str = "releaseLock()";

    /// A try on `part` (see `Attempt`).
    fn try_part(&self, c: &Common, part: &Self::Part, a: &Attempt<'_>) -> Result<Try>;

    /// The first try of an acquisition, queueing nothing.
    fn try_first(&self, c: &Common, part: &Self::Part, token: &[u8]) -> Result<Try> {
        self.try_part(c, part, &Attempt { token, sent: b"", again: false, deadline: None })
    }

    /// A try on a route that keeps no queue (a Redlock quorum), which the wait polls.
    fn try_poll(
        &self,
        c: &Common,
        part: &Self::Part,
        token: &[u8],
        deadline: Instant,
    ) -> Result<Try> {
        self.try_part(c, part, &Attempt { token, sent: b"", again: true, deadline: Some(deadline) })
    }

    /// The queue entry of a wait on `part` for `token`, naming `channel`, less its
    /// head (`entry`).
    fn entry(&self, c: &Common, part: &Self::Part, token: &[u8], channel: &str) -> Vec<u8>;

    /// Leaves the queue at the deadline (`entry` as queued, or as sent):
    /// `Some(fencing tokens)` when the part was handed to `token` meanwhile.
    fn cancel(
        &self,
        c: &Common,
        part: &Self::Part,
        token: &[u8],
        entry: &[u8],
    ) -> Result<Option<Fences>>;

    /// Releases `token`'s hold on `part` (`own`: this object's) and answers how many
    /// of the part's keys it held.
    fn release(&mut self, c: &Common, part: &Self::Part, token: &[u8], own: bool) -> Result<u64>;

    /// Sends the release of this object's hold `token` on `part` without waiting for
    /// the answer, which is checked against `watch` when it is read.
    fn fire_release(
        &mut self,
        c: &Common,
        part: &Self::Part,
        token: &[u8],
        watch: Watch,
    ) -> Result<()>;

    /// Renews `token`'s hold on `part` to `ms` (as the scripts take it; `lease` as a
    /// duration, for a quorum's validity); `own`: this object's hold (default: the
    /// part's own renewal, `Part::renew`).
    fn renew(
        &self,
        _c: &Common,
        part: &Self::Part,
        token: &[u8],
        ms: &[u8],
        lease: Duration,
        _own: bool,
    ) -> Result<Landed> {
        part.route().renew(&part.renew(token, ms).call(), lease)
    }

    /// How many keys `part` holds.
    fn keys_in(&self, _part: &Self::Part) -> u64 {
        1
    }

    /// The part a hold taken now is recorded with (a `Lock`'s write or read mode).
    fn held_as(&self, part: &Arc<Self::Part>) -> Arc<dyn Part> {
        part.clone()
    }

    /// The part a durable check of the last `renew` on `part` runs as: the hold it
    /// renewed (a `Lock`'s read share, when the token was a reader's), by default the
    /// hold taken now (`held_as`).
    fn renewed_as(&self, part: &Arc<Self::Part>) -> Arc<dyn Part> {
        self.held_as(part)
    }

    /// Whether a hold of this kind that was found lost may still hold some keys of a
    /// part (a MultiLock's group, lost in part): its release is sent anyway.
    fn releases_lost(&self) -> bool {
        false
    }

    /// Whether an acquisition that may wait goes straight to the try that queues,
    /// skipping the first try (`retake::contended_lately`).
    fn straight_to_wait(&self, _c: &Common, _start: Instant) -> bool {
        false
    }

    /// The object goes away holding nothing: what the kind still owes the others (a
    /// `Lock`'s lock left free for its own re-take goes to the waiters).
    fn left(&self, _c: &Common, _parts: &[Arc<Self::Part>]) {}

    /// An acquisition found the hold busy (`true`) or free, at `at`.
    fn contended(&self, _busy: bool, _at: Instant) {}

    /// An acquisition of `token` on `parts` is about to be recorded (after its last
    /// try, found fresh at `at`, `clock::mono_nanos`), its fencing tokens, if any, in
    /// `c.fences`.
    fn acquiring(&mut self, _c: &mut Common, _parts: &[Arc<Self::Part>], _token: &[u8], _at: u64) {}

    /// A hold of `token` may have been taken by a try whose reply was lost: it is
    /// recorded, unrenewed, so that a release clears it.
    fn maybe_taken(&mut self, _c: &mut Common) {}
}
