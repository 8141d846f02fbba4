//! The wake-up signal for blocked waiters.
//!
//! A waiter listens on a channel of its own (`redis_lock:wake:<random>:<n>`) and
//! queues an entry naming it; the releaser's script hands the lock over and publishes
//! the new holder's token there. Nothing is sent while waiting: a grant is one
//! message read from a socket the waiter was already blocked on.
//!
//! Where it listens: on its command connection, when the server speaks RESP3 (Redis
//! 6 and later, Valkey), so that a process that waited keeps one connection per
//! server (`Subscriber::Inline`: `HELLO 3` and the subscription once in the
//! connection's life), TLS included. On a server or proxy without RESP3, on a
//! subscriber connection of its own, one per endpoint, kept across waits
//! (`Subscriber::Separate`: a connection like any other, in RESP2's subscribed
//! mode). On a cluster the inline channel is sharded
//! (`SSUBSCRIBE`, Redis 7 and later, Valkey): its name carries a hash tag of the
//! lock's slot, the scripts `SPUBLISH` to it, and a grant stays in the slot's shard
//! instead of crossing the cluster bus to every node.
//!
//! Why a private channel and not one per lock: PUBLISH reports how many connections
//! heard the message, so the releaser learns in the same script whether the waiter
//! is still alive (a killed process's connection is closed by the kernel, and Redis
//! drops its subscription), and exactly one process wakes per release. That answer
//! must be about the wait an entry belongs to, not only the connection: an entry
//! left queued by a wait that has ended is passed over only when nobody listens on
//! its channel any more. So:
//! - **On the command connection**, the messages of a wait and the replies to its
//!   commands come in order on one socket: a grant for a wait that ended by its own
//!   try, or by its cancel, was read before that try's reply, and is dropped when the
//!   next wait starts. A wait's entries all leave the queue when it ends normally
//!   (its grant, its try or its cancel takes them out); one that ends in doubt (a
//!   refusal, Redis trouble until its deadline, an entry that may still be queued)
//!   retires its channel (`retire`: unsubscribed, and the connection's next
//!   wait listens on the next channel).
//! - **On a subscriber of its own**, nothing orders its messages with the command
//!   connection's replies, and a try sent again after a timeout (on a new command
//!   connection) names the same subscriber: each wait subscribes a channel of its own
//!   and unsubscribes it before it returns (confirmed), so that a message of an
//!   earlier wait is never read as this one's, and an entry of an ended wait is
//!   passed over.

use crate::fork_wiped;
use crate::net::endpoint::{self, Endpoint};
use crate::net::idle::Idle;
use crate::net::listen::Heard;
use crate::net::pool;
use crate::net::wire::Connection;
use crate::token;
use redis::RedisError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Prefix of every wake channel, for ACL rules (`&redis_lock:wake:*`). A sharded
/// channel goes on with `{` (the scripts tell them apart by it).
pub const CHANNEL_PREFIX: &str = "redis_lock:wake:";

/// The channel of generation `generation` of a command connection whose random id is
/// `id`: sharded, with a hash tag of `slot`, for a wait in a cluster slot.
fn inline_channel(id: &str, slot: Option<u16>, generation: u64) -> String {
    match slot {
        Some(slot) => {
            format!("{CHANNEL_PREFIX}{{{}}}{id}:{generation}", crate::keys::slot_tag(slot))
        }
        None => format!("{CHANNEL_PREFIX}{id}:{generation}"),
    }
}

/// The number of this process's next wait: with a subscriber's random name it names
/// the wait's channel there, which no other wait ever listens on.
fn next_wait() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

pub use crate::net::wire::set_router;

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
    let subs = guard.get_or_insert_with(|| Subscribers {
        pid,
        idle: Idle::default(),
        refused: HashMap::new(),
    });
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
    subscribers()
        .as_mut()
        .is_some_and(|s| s.refused.get(ep.id()).is_some_and(|at| at.elapsed() < REFUSAL_MEMORY))
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

/// Where a waiter listens for its grant. Not boxed: one lives per waiting
/// connection, moved between the pool and a wait, never in bulk.
#[allow(clippy::large_enum_variant)]
pub enum Subscriber {
    /// On the endpoint's command connection (RESP3), subscribed to `channel`.
    Inline { ep: Arc<Endpoint>, channel: String, sharded: bool },
    /// A connection in subscribed mode of its own, kept across waits; `base` is its
    /// random name, and `channel` the wait's it listens on now, if any.
    Separate { conn: Connection, base: String, channel: Option<String> },
}

/// Why a subscriber could not be had.
pub enum Refusal {
    /// The server refuses pub/sub for this user (ACL): waiting falls back to polling.
    Denied,
    /// The connection failed; trying again later may work.
    Failed,
}

impl Subscriber {
    /// Connects a subscriber of its own, listening on no channel yet.
    pub fn connect(ep: &Endpoint) -> std::result::Result<Subscriber, Refusal> {
        let conn = endpoint::connect(ep).map_err(|_| Refusal::Failed)?;
        let base = format!(
            "{CHANNEL_PREFIX}{}",
            String::from_utf8_lossy(&token::generate().map_err(|_| Refusal::Failed)?)
        );
        Ok(Subscriber::Separate { conn, base, channel: None })
    }

    /// A subscriber of its own listens on wait `wait`'s channel from now on. Messages
    /// that came before the confirmation were for earlier waits, and are dropped.
    fn listen_for(&mut self, wait: u64) -> std::result::Result<(), Refusal> {
        let Subscriber::Separate { conn, base, channel } = self else { return Ok(()) };
        let name = format!("{base}:{wait}");
        if channel.as_deref() == Some(name.as_str()) {
            return Ok(());
        }
        match conn.subscribe_resp2(&name) {
            Ok(true) => {
                *channel = Some(name);
                Ok(())
            }
            Ok(false) => Err(Refusal::Denied),
            Err(_) => Err(Refusal::Failed),
        }
    }

    /// A subscriber of its own stops listening on its wait's channel, and reads up to
    /// the confirmation: once this returns, no release can hand a lock to that wait's
    /// entries (its channel has no listener), even one run on another connection.
    fn stop_listening(&mut self) -> std::result::Result<(), ()> {
        let Subscriber::Separate { conn, channel, .. } = self else { return Ok(()) };
        let Some(name) = channel.take() else { return Ok(()) };
        conn.unsubscribe_resp2(&name).map_err(drop)
    }

    /// The channel a waiter names in its queue entry.
    pub fn channel(&self) -> &str {
        match self {
            Subscriber::Inline { channel, .. } => channel,
            Subscriber::Separate { channel, .. } => channel.as_deref().unwrap_or(""),
        }
    }

    /// Whether a grant heard here was surely given by the script that counted this
    /// listener: on one server always; on a cluster only on a sharded channel (a plain
    /// `PUBLISH` reaches every node, but the script counts its own node's listeners).
    pub fn sharded(&self) -> bool {
        matches!(self, Subscriber::Inline { sharded: true, .. })
    }

    /// Waits up to `timeout` for the next message on this wait's channel and returns
    /// it; `Ok(None)` when nothing came in time. An error means the connection broke,
    /// or no longer listens (a restarted server, a slot that moved): drop this
    /// subscriber.
    pub fn next_grant(
        &mut self,
        timeout: Duration,
    ) -> std::result::Result<Option<Vec<u8>>, RedisError> {
        // A zero timeout would mean "block forever" to the socket.
        let timeout = timeout.max(Duration::from_millis(1));
        match self {
            Subscriber::Inline { ep, channel, .. } => listen(ep, channel, timeout),
            Subscriber::Separate { conn, channel, .. } => match channel.as_deref() {
                Some(channel) => conn.next_message(channel, timeout),
                None => Err(RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the subscriber listens on no channel",
                ))),
            },
        }
    }
}

impl Subscriber {
    /// Reads what has arrived, without waiting: on the command connection, messages
    /// go to this thread's router (`set_router`), and `Ok(None)` comes back; on a
    /// subscriber of its own, the next message on this wait's channel, if one came.
    /// An error as for `next_grant`.
    pub fn hear_now(&mut self) -> std::result::Result<Option<Vec<u8>>, RedisError> {
        let gone = || {
            RedisError::from(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the wake channel is no longer listened to",
            ))
        };
        match self {
            Subscriber::Inline { ep, channel, .. } => {
                let heard = pool::with_connection(ep, false, |conn| match conn.arrived(channel) {
                    Ok(()) => (Ok(None), false),
                    Err(e) => (Err(e), true),
                });
                heard.unwrap_or_else(|| Err(gone()))
            }
            Subscriber::Separate { conn, channel, .. } => match channel.as_deref() {
                Some(channel) => conn.message_now(channel),
                None => Err(gone()),
            },
        }
    }

    /// The socket its messages come on, for an event loop to watch (`crate::ready`).
    pub fn socket(&mut self) -> Option<std::os::fd::RawFd> {
        match self {
            Subscriber::Inline { ep, .. } => {
                pool::with_connection(ep, false, |conn| (conn.fd(), false))
            }
            Subscriber::Separate { conn, .. } => Some(conn.fd()),
        }
    }

    /// Whether bytes it has read wait to be parsed (TLS), which its socket would not
    /// show: an event loop looks again at once.
    pub fn buffered(&mut self) -> bool {
        match self {
            Subscriber::Inline { ep, .. } => {
                pool::with_connection(ep, false, |conn| (conn.buffered(), false)).unwrap_or(false)
            }
            Subscriber::Separate { conn, .. } => conn.buffered(),
        }
    }
}

/// Where one wait listens: the command connection's channel, or the process's
/// subscriber of its own for the endpoint, lent out for the wait, on a channel of the
/// wait's own (see the module comment). When the wait ends (the listener is dropped), a
/// subscriber of its own gives its channel up and goes back to the registry (so that
/// it survives errors and early returns), and the command connection retires its
/// channel if the wait ended in doubt (`in_doubt`).
pub struct Listener {
    ep: Arc<Endpoint>,
    /// The cluster slot whose shard the wait's grants come from, if any.
    slot: Option<u16>,
    /// The wait's number (`next_wait`): on a subscriber of its own, its channel's name
    /// ends with it.
    wait: u64,
    sub: Option<Subscriber>,
    /// The wait ended in doubt: an entry of it may still be queued.
    doubt: bool,
}

impl Listener {
    /// Borrows the endpoint's subscriber if the process already has one (its command
    /// connection listening already, or a subscriber of its own); does not connect.
    /// Messages the command connection kept from earlier waits are dropped: a grant
    /// for this wait can only come after it queues.
    pub fn lend(ep: Arc<Endpoint>, slot: Option<u16>) -> Self {
        let sub = match listening(&ep, slot) {
            Some((channel, sharded)) => {
                Some(Subscriber::Inline { ep: ep.clone(), channel, sharded })
            }
            None => take_subscriber(&ep),
        };
        Listener { ep, slot, wait: next_wait(), sub, doubt: false }
    }

    /// The wait ends in doubt (a refusal, Redis trouble until its deadline): an entry
    /// of it may still be queued, naming the channel it listens on, which is given up
    /// when the listener is dropped.
    pub fn in_doubt(&mut self) {
        self.doubt = true;
    }

    /// The server this subscriber listens on.
    pub fn endpoint(&self) -> &Arc<Endpoint> {
        &self.ep
    }

    /// The subscriber, once it listens on this wait's channel.
    pub fn get(&mut self) -> Option<&mut Subscriber> {
        self.sub.as_mut().filter(|s| !s.channel().is_empty())
    }

    /// Listens on this wait's channel, unless it does already or the server refused a
    /// subscription recently: on the command connection (RESP3), or on a subscriber
    /// of its own. Returns whether it listens now; failures are not errors, because
    /// waiting can always fall back to polling.
    pub fn ensure(&mut self) -> bool {
        if self.get().is_some() {
            return true;
        }
        if subscribe_refused(&self.ep) {
            return false;
        }
        if self.sub.is_none() {
            match subscribe(&self.ep, self.slot) {
                Inline::Listening(channel, sharded) => {
                    self.sub = Some(Subscriber::Inline { ep: self.ep.clone(), channel, sharded });
                    return true;
                }
                Inline::Unsupported => {}
                Inline::Denied => {
                    note_subscribe_refused(&self.ep);
                    return false;
                }
                Inline::Failed => return false,
            }
            match Subscriber::connect(&self.ep) {
                Ok(sub) => self.sub = Some(sub),
                Err(_) => return false,
            }
        }
        let Some(sub) = self.sub.as_mut() else { return false };
        match sub.listen_for(self.wait) {
            Ok(()) => true,
            Err(Refusal::Denied) => {
                note_subscribe_refused(&self.ep);
                self.sub = None;
                false
            }
            Err(Refusal::Failed) => {
                self.sub = None;
                false
            }
        }
    }

    /// Forgets a subscriber whose connection broke.
    pub fn discard(&mut self) {
        self.sub = None;
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        match self.sub.take() {
            Some(Subscriber::Inline { ep, channel, .. }) if self.doubt => retire(&ep, &channel),
            Some(Subscriber::Inline { .. }) => {}
            Some(mut sub) => {
                // A subscriber that cannot confirm it stopped listening is not kept.
                let stopped = sub.stop_listening().is_ok();
                if stopped {
                    put_subscriber(&self.ep, sub);
                }
            }
            None => {}
        }
    }
}

/// What subscribing the command connection came to (`subscribe`).
enum Inline {
    /// It listens on this channel; `true`: a sharded one.
    Listening(String, bool),
    /// Not on this connection: a server or proxy without RESP3.
    Unsupported,
    /// The server refused the subscription (ACL).
    Denied,
    /// The connection failed.
    Failed,
}

/// The current wake channel of a command connection (its random id, made on first
/// use, and its generation), for a wait in `slot` (sharded) or on the server.
fn wake_channel(conn: &mut Connection, slot: Option<u16>) -> Option<String> {
    if conn.wake_id.is_none() {
        conn.wake_id = Some(String::from_utf8_lossy(&token::generate().ok()?).into_owned());
    }
    Some(inline_channel(conn.wake_id.as_deref()?, slot, conn.wake_generation))
}

/// The channel this thread's command connection for `ep` listens on for a wait in
/// `slot` (sharded) or on the server, if it does; its kept messages are dropped then
/// (they were for earlier waits).
fn listening(ep: &Endpoint, slot: Option<u16>) -> Option<(String, bool)> {
    pool::with_connection(ep, false, |conn| {
        let channel = wake_channel(conn, slot).filter(|c| conn.listens(c));
        if channel.is_some() {
            conn.forget_pushes();
        }
        (channel.map(|c| (c, slot.is_some())), false)
    })
    .flatten()
}

/// Retires `channel`, which a wait that ended in doubt listened on (an entry of its
/// may still be queued, naming it): this thread's command connection for `ep` stops
/// listening on it (unsubscribed without waiting for the confirmation), and the next
/// wait listens on the connection's next channel. A release then finds nobody on the
/// retired one, and passes its entries over. Nothing to do when the connection is
/// gone: its subscriptions went with it.
fn retire(ep: &Endpoint, channel: &str) {
    pool::with_connection(ep, false, |conn| {
        if !conn.listens(channel) {
            return ((), false);
        }
        conn.wake_generation += 1;
        ((), conn.unsubscribe(channel).is_err())
    });
}

/// Subscribes this thread's command connection for `ep` (connecting it if needed)
/// to its current wake channel: in RESP3, `HELLO 3` first, once in the connection's
/// life. For a wait in a cluster `slot`, the channel is sharded, unless the server has
/// no sharded pub/sub (Redis 6) or refuses it.
fn subscribe(ep: &Endpoint, slot: Option<u16>) -> Inline {
    let subscribed = pool::with_connection(ep, true, |conn| {
        let outcome = subscribe_on(conn, slot);
        let failed = matches!(outcome, Inline::Failed);
        (outcome, failed)
    });
    subscribed.unwrap_or(Inline::Failed)
}

fn subscribe_on(conn: &mut Connection, slot: Option<u16>) -> Inline {
    match conn.resp3() {
        Ok(true) => {}
        Ok(false) => return Inline::Unsupported,
        Err(_) => return Inline::Failed,
    }
    if slot.is_some() {
        let Some(channel) = wake_channel(conn, slot) else { return Inline::Failed };
        match conn.subscribe(&channel, true) {
            Ok(true) => return Inline::Listening(channel, true),
            Ok(false) => {}
            Err(_) => return Inline::Failed,
        }
    }
    let Some(channel) = wake_channel(conn, None) else { return Inline::Failed };
    match conn.subscribe(&channel, false) {
        Ok(true) => Inline::Listening(channel, false),
        Ok(false) => Inline::Denied,
        Err(_) => Inline::Failed,
    }
}

/// Waits up to `timeout` for a message on `channel`, which this thread's command
/// connection for `ep` listens on. An error when it broke or no longer listens.
fn listen(ep: &Endpoint, channel: &str, timeout: Duration) -> Result<Option<Vec<u8>>, RedisError> {
    let gone = || {
        RedisError::from(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the wake channel is no longer listened to",
        ))
    };
    let heard = pool::with_connection(ep, false, |conn| {
        let heard = conn.next_push(channel, timeout);
        let reset = conn.set_read_timeout(Some(ep.read_timeout()));
        let heard = match (heard, reset) {
            (Ok(Heard::Message(m)), Ok(())) => Ok(Some(m)),
            (Ok(Heard::Nothing), Ok(())) => Ok(None),
            (Ok(Heard::Unsubscribed), Ok(())) => Err(gone()),
            (Err(e), _) | (_, Err(e)) => return (Err(e), true),
        };
        (heard, false)
    });
    heard.unwrap_or_else(|| Err(gone()))
}
