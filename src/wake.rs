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

use crate::pool::{self, Endpoint};
use crate::token;
use redis::{Connection, ErrorKind, RedisError, Value};
use std::sync::Arc;
use std::time::Duration;

/// Prefix of every wake channel, for ACL rules (`&redis_lock:wake:*`).
pub const CHANNEL_PREFIX: &str = "redis_lock:wake:";

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
        let sub = pool::take_subscriber(&ep);
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
        if self.sub.is_none() && !pool::subscribe_refused(&self.ep) {
            match Subscriber::connect(&self.ep) {
                Ok(sub) => self.sub = Some(sub),
                Err(Refusal::Denied) => pool::note_subscribe_refused(&self.ep),
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
            pool::put_subscriber(&self.ep, sub);
        }
    }
}
