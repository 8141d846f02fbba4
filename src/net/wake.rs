//! The wake-up signal for blocked waiters.
//!
//! Each process keeps one subscriber connection per endpoint, subscribed once to a
//! channel of its own (`redis_lock:wake:<random>`). A waiter queues an entry naming
//! that channel; the releaser's script hands the lock over and publishes the new
//! holder's token there. Nothing is sent while waiting: a grant is one message read
//! from a socket the waiter was already blocked on.
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

/// Prefix of every wake channel, for ACL rules (`&redis_lock:wake:*`).
pub const CHANNEL_PREFIX: &str = "redis_lock:wake:";

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

/// Gives a subscriber back after a wait.
fn put_subscriber(ep: &Endpoint, sub: Subscriber) {
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

/// A connection in subscribed mode, listening on this process's wake channel.
pub struct Subscriber {
    conn: Connection,
    channel: String,
}

/// Why a subscriber could not be had.
pub enum Refusal {
    /// The server refuses pub/sub for this user (ACL): waiting falls back to polling.
    Denied,
    /// The connection failed; trying again later may work.
    Failed,
}

impl Subscriber {
    /// Connects and subscribes to a fresh random channel.
    pub fn connect(ep: &Endpoint) -> std::result::Result<Subscriber, Refusal> {
        let mut conn = pool::connect_subscriber(ep).map_err(|_| Refusal::Failed)?;
        let channel = format!("{CHANNEL_PREFIX}{}", String::from_utf8_lossy(&token::generate().map_err(|_| Refusal::Failed)?));
        // Sent by hand: redis-rs's PubSub::subscribe does not look at the reply, and
        // an ACL refusal (NOPERM) would pass for a subscription.
        let packed = redis::cmd("SUBSCRIBE").arg(&channel).get_packed_command();
        conn.send_packed_command(&packed).map_err(|_| Refusal::Failed)?;
        match conn.recv_response() {
            Ok(Value::Array(items)) if matches!(items.first(), Some(Value::BulkString(k)) if k == b"subscribe") => {
                Ok(Subscriber { conn, channel })
            }
            Ok(Value::ServerError(_)) => Err(Refusal::Denied),
            Err(e) if matches!(e.kind(), ErrorKind::Server(_)) => Err(Refusal::Denied),
            _ => Err(Refusal::Failed),
        }
    }

    /// The channel a waiter names in its queue entry.
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// Waits up to `timeout` for the next grant and returns the token it carries;
    /// `Ok(None)` when nothing came in time. An error means the connection broke
    /// (a restarted server, a killed client): drop this subscriber.
    pub fn next_grant(&mut self, timeout: Duration) -> std::result::Result<Option<Vec<u8>>, RedisError> {
        // A zero timeout would mean "block forever" to the socket.
        self.conn.set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
        let mut ps = self.conn.as_pubsub();
        let got = ps.get_message();
        std::mem::forget(ps);
        match got {
            Ok(msg) => Ok(Some(msg.get_payload_bytes().to_vec())),
            Err(e) if e.is_timeout() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The process's subscriber for an endpoint, lent out for one wait and given back
/// to the registry when dropped, so that it survives errors and early returns.
pub struct Lease {
    ep: Arc<Endpoint>,
    sub: Option<Subscriber>,
}

impl Lease {
    /// Borrows the endpoint's subscriber if the process already has one; does not connect.
    pub fn take(ep: Arc<Endpoint>) -> Self {
        let sub = take_subscriber(&ep);
        Lease { ep, sub }
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
