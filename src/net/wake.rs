//! The wake-up signal for blocked waiters.
//!
//! A waiter listens on a channel of its own (`redis_lock:wake:<random>`) and queues
//! an entry naming it; the releaser's script hands the lock over and publishes the
//! new holder's token there. Nothing is sent while waiting: a grant is one message
//! read from a socket the waiter was already blocked on.
//!
//! Where it listens: on its command connection, when the server speaks RESP3 (Redis
//! 6 and later, Valkey), so that a process that waited keeps one connection per
//! server (`Subscriber::Inline`: the channel is the connection's, subscribed once in
//! its life, `HELLO 3` first), TLS included. On a server or proxy without RESP3, on
//! a subscriber connection of its own, one per endpoint, kept across waits
//! (`Subscriber::Separate`). On a cluster the inline channel is sharded
//! (`SSUBSCRIBE`, Redis 7 and later, Valkey): its name carries a hash tag of the
//! lock's slot, the scripts `SPUBLISH` to it, and a grant stays in the slot's shard
//! instead of crossing the cluster bus to every node.
//!
//! Why a private channel and not one per lock: PUBLISH reports how many connections
//! heard the message, so the releaser learns in the same script whether the waiter
//! is still alive (a killed process's connection is closed by the kernel, and Redis
//! drops its subscription), and exactly one process wakes per release.

use crate::fork_wiped;
use crate::net::idle::Idle;
use crate::net::pool::{self, Endpoint};
use crate::token;
use redis::{Connection, ErrorKind, RedisError, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Prefix of every wake channel, for ACL rules (`&redis_lock:wake:*`). A sharded
/// channel goes on with `{` (the scripts tell them apart by it).
pub const CHANNEL_PREFIX: &str = "redis_lock:wake:";

/// The channel of a command connection whose random id is `id`: sharded, with a hash
/// tag of `slot`, for a wait in a cluster slot.
fn inline_channel(id: &str, slot: Option<u16>) -> String {
    match slot {
        Some(slot) => format!("{CHANNEL_PREFIX}{{{}}}{id}", crate::keys::slot_tag(slot)),
        None => format!("{CHANNEL_PREFIX}{id}"),
    }
}

/// How long a refused subscription is not asked for again: waits poll meanwhile.
const REFUSAL_MEMORY: Duration = Duration::from_secs(30);

/// This process's subscribers, one per endpoint, kept across waits (as many as the
/// registry keeps connections: `max_endpoints`), and the servers that refused one.
struct Subscribers {
    pid: u32,
    idle: Idle<Subscriber>,
    /// When the server last refused a subscription (ACL), per endpoint.
    refused: HashMap<Arc<str>, Instant>,
}

static SUBSCRIBERS: Mutex<Option<Subscribers>> = Mutex::new(None);

/// This process's subscribers. A forked child forgets its parent's without closing
/// them (reading them would steal the parent's grants); a refusal it inherits still
/// holds for it, as for its parent.
fn subscribers() -> MutexGuard<'static, Option<Subscribers>> {
    // Nothing is left half-written by a panic that matters more than going on.
    let mut guard = SUBSCRIBERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let pid = fork_wiped::pid();
    let subs = guard.get_or_insert_with(|| Subscribers { pid, idle: Idle::default(), refused: HashMap::new() });
    if subs.pid != pid {
        subs.idle.forget_all();
        subs.pid = pid;
    }
    guard
}

/// Takes the process's subscriber for `ep` out, for one wait: nothing is locked
/// while the wait blocks.
fn take_subscriber(ep: &Endpoint) -> Option<Subscriber> {
    subscribers().as_mut().and_then(|s| s.idle.take(ep.id()))
}

/// Gives a subscriber of its own back after a wait (an inline one needs no keeping:
/// its connection is the registry's).
fn put_subscriber(ep: &Endpoint, sub: Subscriber) {
    if matches!(sub, Subscriber::Inline { .. }) {
        return;
    }
    let cap = pool::cap();
    if let Some(s) = subscribers().as_mut() {
        s.idle.put(ep.id(), sub, cap);
    }
}

/// Whether the server refused a subscription on `ep` in the last little while.
fn subscribe_refused(ep: &Endpoint) -> bool {
    subscribers().as_mut().is_some_and(|s| s.refused.get(ep.id()).is_some_and(|at| at.elapsed() < REFUSAL_MEMORY))
}

/// Remembers that the server refused a subscription on `ep`.
fn note_subscribe_refused(ep: &Endpoint) {
    if let Some(s) = subscribers().as_mut() {
        s.refused.insert(ep.id().clone(), Instant::now());
    }
}

/// Closes every subscriber of this process (module shutdown).
pub fn close_all() {
    if let Some(s) = subscribers().as_mut() {
        s.idle.clear();
    }
}

/// Where a waiter listens for its grant.
pub enum Subscriber {
    /// On the endpoint's command connection (RESP3), subscribed to `channel`.
    Inline { ep: Arc<Endpoint>, channel: String, sharded: bool },
    /// A connection in subscribed mode of its own.
    Separate { conn: Connection, channel: String },
}

/// Why a subscriber could not be had.
pub enum Refusal {
    /// The server refuses pub/sub for this user (ACL): waiting falls back to polling.
    Denied,
    /// The connection failed; trying again later may work.
    Failed,
}

impl Subscriber {
    /// Connects a subscriber of its own and subscribes it to a fresh random channel.
    pub fn connect(ep: &Endpoint) -> std::result::Result<Subscriber, Refusal> {
        let mut conn = pool::connect_subscriber(ep).map_err(|_| Refusal::Failed)?;
        let channel = format!("{CHANNEL_PREFIX}{}", String::from_utf8_lossy(&token::generate().map_err(|_| Refusal::Failed)?));
        // Sent by hand: redis-rs's PubSub::subscribe does not look at the reply, and
        // an ACL refusal (NOPERM) would pass for a subscription.
        let packed = redis::cmd("SUBSCRIBE").arg(&channel).get_packed_command();
        conn.send_packed_command(&packed).map_err(|_| Refusal::Failed)?;
        match conn.recv_response() {
            Ok(Value::Array(items)) if matches!(items.first(), Some(Value::BulkString(k)) if k == b"subscribe") => {
                Ok(Subscriber::Separate { conn, channel })
            }
            Ok(Value::ServerError(_)) => Err(Refusal::Denied),
            Err(e) if matches!(e.kind(), ErrorKind::Server(_)) => Err(Refusal::Denied),
            _ => Err(Refusal::Failed),
        }
    }

    /// The channel a waiter names in its queue entry.
    pub fn channel(&self) -> &str {
        match self {
            Subscriber::Inline { channel, .. } | Subscriber::Separate { channel, .. } => channel,
        }
    }

    /// Whether a grant heard here was surely given by the script that counted this
    /// listener: on one server always; on a cluster only on a sharded channel (a plain
    /// `PUBLISH` reaches every node, but the script counts its own node's listeners).
    pub fn sharded(&self) -> bool {
        matches!(self, Subscriber::Inline { sharded: true, .. })
    }

    /// Waits up to `timeout` for the next message and returns it; `Ok(None)` when
    /// nothing came in time. An error means the connection broke, or no longer
    /// listens (a restarted server, a slot that moved): drop this subscriber.
    pub fn next_grant(&mut self, timeout: Duration) -> std::result::Result<Option<Vec<u8>>, RedisError> {
        // A zero timeout would mean "block forever" to the socket.
        let timeout = timeout.max(Duration::from_millis(1));
        match self {
            Subscriber::Inline { ep, channel, .. } => pool::listen(ep, channel, timeout),
            Subscriber::Separate { conn, .. } => {
                conn.set_read_timeout(Some(timeout))?;
                let mut ps = conn.as_pubsub();
                let got = ps.get_message();
                std::mem::forget(ps);
                match got {
                    Ok(msg) => Ok(Some(msg.get_payload_bytes().to_vec())),
                    Err(e) if e.is_timeout() => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// The process's subscriber for an endpoint, lent out for one wait and given back
/// to the registry when dropped, so that it survives errors and early returns.
pub struct Lease {
    ep: Arc<Endpoint>,
    /// The cluster slot whose shard the wait's grants come from, if any.
    slot: Option<u16>,
    sub: Option<Subscriber>,
}

impl Lease {
    /// Borrows the endpoint's subscriber if the process already has one (its command
    /// connection listening already, or a subscriber of its own); does not connect.
    /// Messages its command connection kept from earlier waits are dropped: a grant
    /// for this wait can only come after it queues.
    pub fn take(ep: Arc<Endpoint>, slot: Option<u16>) -> Self {
        let sub = match pool::listening(&ep, slot, inline_channel) {
            Some((channel, sharded)) => Some(Subscriber::Inline { ep: ep.clone(), channel, sharded }),
            None => take_subscriber(&ep),
        };
        Lease { ep, slot, sub }
    }

    /// The server this subscriber listens on.
    pub fn endpoint(&self) -> &Arc<Endpoint> {
        &self.ep
    }

    /// The subscriber, if there is one.
    pub fn get(&mut self) -> Option<&mut Subscriber> {
        self.sub.as_mut()
    }

    /// Connects a subscriber unless there is one already, or the server refused one
    /// recently. Returns whether there is one now; failures are not errors, because
    /// waiting can always fall back to polling.
    pub fn ensure(&mut self) -> bool {
        if self.sub.is_none() && !subscribe_refused(&self.ep) {
            match pool::subscribe(&self.ep, self.slot, inline_channel) {
                pool::Inline::Listening(channel, sharded) => {
                    self.sub = Some(Subscriber::Inline { ep: self.ep.clone(), channel, sharded });
                    return true;
                }
                pool::Inline::Unsupported => {}
                pool::Inline::Denied => {
                    note_subscribe_refused(&self.ep);
                    return false;
                }
                pool::Inline::Failed => return false,
            }
            match Subscriber::connect(&self.ep) {
                Ok(sub) => self.sub = Some(sub),
                Err(Refusal::Denied) => note_subscribe_refused(&self.ep),
                Err(Refusal::Failed) => {}
            }
        }
        self.sub.is_some()
    }

    /// Forgets a subscriber whose connection broke.
    pub fn discard(&mut self) {
        self.sub = None;
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(sub) = self.sub.take() {
            put_subscriber(&self.ep, sub);
        }
    }
}
