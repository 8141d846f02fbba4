//! Pub/sub on a connection, in the two ways a waiter listens (`wake`).
//!
//! - **Inline, in RESP3**, on the command connection: `HELLO 3` once in its life
//!   (`resp3`), then `SUBSCRIBE` (or `SSUBSCRIBE`), confirmed by a push message.
//!   Replies and push messages then share the socket: the messages that come while a
//!   reply is read are kept aside (`Connection::keep`) and handed to the waiter
//!   (`next_push`), never taken for a reply.
//! - **In RESP2's subscribed mode**, on a connection of its own, for a server or
//!   proxy that refuses `HELLO 3`: every frame is then a message or a confirmation,
//!   and the connection runs no command. Subscriptions and unsubscriptions are read
//!   up to their confirmation (`subscribe_resp2`, `unsubscribe_resp2`), messages on
//!   other channels dropped (`next_message`).
//!
//! A server could send messages without end and never the frame awaited: each wait
//! for a confirmation ends within the read timeout, each wait for a message at its
//! own deadline.

use crate::net::reply::protocol;
use crate::net::resp;
use crate::net::scan::Scan;
use crate::net::wire::{self, Connection};
use redis::{ErrorKind, RedisResult, Value};
use std::io;
use std::time::{Duration, Instant};

/// What listening brought (`Connection::next_push`).
pub enum Heard {
    /// A message on one of the connection's channels.
    Message(Vec<u8>),
    /// Nothing within the time given.
    Nothing,
    /// The server dropped a subscription (a cluster slot moved away).
    Unsubscribed,
}

/// Channels one connection stays subscribed to at most (sharded ones are per slot).
const MAX_CHANNELS: usize = 16;

impl Connection {
    /// Whether the connection speaks RESP3, switching it on first use (`HELLO 3`, one
    /// round trip once in the connection's life). A server that refuses (Redis before
    /// 6, a proxy) keeps RESP2.
    pub fn resp3(&mut self) -> RedisResult<bool> {
        if let Some(yes) = self.resp3 {
            return Ok(yes);
        }
        let yes = match wire::request(self, &[b"HELLO", b"3"]) {
            Ok(_) => true,
            Err(e) if matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension) => false,
            Err(e) => return Err(e),
        };
        self.resp3 = Some(yes);
        Ok(yes)
    }

    /// Whether the connection listens on `channel` (in RESP3).
    pub fn listens(&self, channel: &str) -> bool {
        self.channels.iter().any(|(c, _)| c == channel)
    }

    /// Subscribes the connection (in RESP3) to `channel`, with `SSUBSCRIBE` when
    /// `sharded`. `Ok(false)`: the server refused (an ACL without the channel or the
    /// command, a server without sharded pub/sub). Beyond `MAX_CHANNELS` the oldest
    /// subscription is dropped in the same write.
    pub fn subscribe(&mut self, channel: &str, sharded: bool) -> RedisResult<bool> {
        if self.listens(channel) {
            return Ok(true);
        }
        let mut buf = Vec::new();
        resp::encode(
            &mut buf,
            2,
            [if sharded { &b"SSUBSCRIBE"[..] } else { b"SUBSCRIBE" }, channel.as_bytes()],
        );
        let mut dropped = None;
        if self.channels.len() >= MAX_CHANNELS {
            let (old, old_sharded) = self.channels.remove(0);
            let mut more = Vec::new();
            resp::encode(
                &mut more,
                2,
                [if old_sharded { &b"SUNSUBSCRIBE"[..] } else { b"UNSUBSCRIBE" }, old.as_bytes()],
            );
            buf.extend_from_slice(&more);
            dropped = Some(old);
        }
        self.reader.send(&buf)?;
        // The confirmations are push messages; a refusal is an error reply.
        let want: &[u8] = if sharded { b"ssubscribe" } else { b"subscribe" };
        let mut subscribed = None;
        let mut waiting_unsubscribe = dropped.is_some();
        let mut pushes = None;
        while subscribed.is_none() || waiting_unsubscribe {
            match self.reader.next_value()? {
                Value::Push { data, .. } => {
                    if names(&data, want, channel) {
                        subscribed = Some(true);
                    } else if dropped.as_deref().is_some_and(|d| {
                        names(&data, b"unsubscribe", d) || names(&data, b"sunsubscribe", d)
                    }) {
                        waiting_unsubscribe = false;
                    } else {
                        self.keep(data);
                        self.pushed(&mut pushes)?;
                    }
                }
                v if self.pending.any() => self.pending.came(&v),
                v if subscribed.is_none() => {
                    subscribed = Some(false);
                    if v.extract_error().is_ok() {
                        return Err(self.reader.broke(protocol("a subscription", b"a reply")));
                    }
                }
                // The unsubscription's refusal: nothing more comes for it.
                _ => waiting_unsubscribe = false,
            }
        }
        let yes = subscribed == Some(true);
        if yes {
            self.channels.push((channel.to_string(), sharded));
        }
        Ok(yes)
    }

    /// Unsubscribes the connection from `channel` without waiting: in RESP3 the
    /// confirmation is a push message, read and dropped whenever it comes. Commands
    /// sent after it run after it, so no message on `channel` is published to this
    /// connection once they have run.
    pub fn unsubscribe(&mut self, channel: &str) -> RedisResult<()> {
        let Some(at) = self.channels.iter().position(|(c, _)| c == channel) else { return Ok(()) };
        let (_, sharded) = self.channels.remove(at);
        self.pushes.retain(|(c, _)| c != channel.as_bytes());
        let mut buf = Vec::new();
        resp::encode(
            &mut buf,
            2,
            [if sharded { &b"SUNSUBSCRIBE"[..] } else { b"UNSUBSCRIBE" }, channel.as_bytes()],
        );
        self.reader.send(&buf)
    }

    /// Waits up to `timeout` for a message on `channel` (RESP3); messages on other
    /// channels are dropped (they were for waits that have ended). An error means the
    /// connection broke.
    pub fn next_push(&mut self, channel: &str, timeout: Duration) -> RedisResult<Heard> {
        if let Some(msg) = self.kept_for(channel) {
            return Ok(Heard::Message(msg));
        }
        let until = Instant::now() + timeout;
        let mut scan = self.reader.scan();
        loop {
            if !self.listens(channel) {
                return Ok(Heard::Unsubscribed);
            }
            match self.frame_before(&mut scan, until)? {
                None => return Ok(Heard::Nothing),
                Some(Value::Push { data, .. }) => {
                    self.keep(data);
                    if let Some(msg) = self.kept_for(channel) {
                        return Ok(Heard::Message(msg));
                    }
                }
                Some(v) if self.pending.any() => self.pending.came(&v),
                Some(_) => {
                    return Err(self
                        .reader
                        .broke(protocol("a push message", b"a reply nobody asked for")))
                }
            }
            // Checked after every frame too: pushes that are no message could come without end.
            if Instant::now() >= until {
                return Ok(Heard::Nothing);
            }
        }
    }

    /// Forgets the messages that have come so far, read or not (a new wait starts:
    /// they were for earlier ones).
    pub fn forget_pushes(&mut self) {
        self.read_arrived();
        self.pushes.clear();
    }

    /// The oldest kept message on `channel`, dropping those before it on other channels.
    fn kept_for(&mut self, channel: &str) -> Option<Vec<u8>> {
        while let Some((c, msg)) = self.pushes.pop_front() {
            if c == channel.as_bytes() {
                return Some(msg);
            }
        }
        None
    }

    /// Reads what has arrived, without waiting (RESP3): replies owed to unawaited
    /// commands, and push messages, each offered to this thread's router before it is
    /// kept (`wake::set_router`). An error when the connection broke, or no longer
    /// listens on `channel`.
    pub fn arrived(&mut self, channel: &str) -> RedisResult<()> {
        self.read_arrived();
        if self.reader.broken {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the connection broke").into());
        }
        if !self.listens(channel) {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the wake channel is no longer listened to",
            )
            .into());
        }
        Ok(())
    }

    /// The next message on `channel` that has arrived (RESP2's subscribed mode),
    /// without waiting; messages on other channels are dropped.
    pub fn message_now(&mut self, channel: &str) -> RedisResult<Option<Vec<u8>>> {
        self.reader.stream.set_nonblocking(true).map_err(|e| self.reader.broke(e))?;
        let mut scan = self.reader.scan();
        let heard = loop {
            match self.reader.parse_next(&mut scan) {
                Ok(Some(v)) => {
                    if let Some(payload) = message_on(v, channel) {
                        break Ok(Some(payload));
                    }
                }
                Ok(None) => match self.reader.fill() {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(None),
                    Err(e) => break Err(self.reader.broke(e)),
                },
                Err(e) => break Err(e),
            }
        };
        self.reader.stream.set_nonblocking(false).map_err(|e| self.reader.broke(e))?;
        heard
    }

    /// Subscribes the connection, in RESP2's subscribed mode, to `channel`, and reads
    /// up to the confirmation; what comes before it (messages on channels it listened
    /// on earlier, their unsubscriptions' confirmations) is dropped. `Ok(false)`: the
    /// server refused (an ACL without the channel: NOPERM).
    pub fn subscribe_resp2(&mut self, channel: &str) -> RedisResult<bool> {
        self.confirmed(b"SUBSCRIBE", channel)
    }

    /// Unsubscribes the connection from `channel` (RESP2's subscribed mode), and reads
    /// up to the confirmation: once this returns, the server publishes nothing more to
    /// it there. An error, a refusal included, means the connection cannot be trusted
    /// to have stopped listening.
    pub fn unsubscribe_resp2(&mut self, channel: &str) -> RedisResult<()> {
        match self.confirmed(b"UNSUBSCRIBE", channel)? {
            true => Ok(()),
            false => Err(self.reader.broke(protocol("an unsubscription", b"a refusal"))),
        }
    }

    /// Waits up to `timeout` for a message on `channel` (RESP2's subscribed mode) and
    /// returns its payload; `None` when none came in time. Messages on other channels
    /// are dropped. The read timeout is as it was after.
    pub fn next_message(
        &mut self,
        channel: &str,
        timeout: Duration,
    ) -> RedisResult<Option<Vec<u8>>> {
        let was = self.reader.stream.read_timeout().map_err(|e| self.reader.broke(e))?;
        let until = Instant::now() + timeout;
        let mut scan = self.reader.scan();
        let heard = loop {
            match self.frame_before(&mut scan, until) {
                Ok(Some(v)) => {
                    if let Some(payload) = message_on(v, channel) {
                        break Ok(Some(payload));
                    }
                }
                other => break other.map(|_| None),
            }
            if Instant::now() >= until {
                break Ok(None);
            }
        };
        self.set_read_timeout(was)?;
        heard
    }

    /// Sends `verb` (`SUBSCRIBE`, `UNSUBSCRIBE`) for `channel` in RESP2's subscribed
    /// mode, and reads up to its confirmation (`true`) or an error reply (`false`),
    /// for no longer than the read timeout in all.
    fn confirmed(&mut self, verb: &[u8], channel: &str) -> RedisResult<bool> {
        let mut buf = Vec::new();
        resp::encode(&mut buf, 2, [verb, channel.as_bytes()]);
        self.reader.send(&buf)?;
        let kind = verb.to_ascii_lowercase();
        let mut others = None;
        loop {
            match self.reader.next_value()? {
                Value::ServerError(_) => return Ok(false),
                Value::Array(data) | Value::Push { data, .. } if names(&data, &kind, channel) => {
                    return Ok(true)
                }
                _ => self.pushed(&mut others)?,
            }
        }
    }

    /// The next whole frame, read until `until` at the latest; `None` when none came
    /// whole by then (what came of one stays for the next call, which scans it again).
    fn frame_before(&mut self, scan: &mut Scan, until: Instant) -> RedisResult<Option<Value>> {
        loop {
            if let Some(v) = self.reader.parse_next(scan)? {
                return Ok(Some(v));
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.reader.stream.set_read_timeout(Some(left)).map_err(|e| self.reader.broke(e))?;
            match self.reader.fill() {
                Ok(()) => {}
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) =>
                {
                    return Ok(None)
                }
                Err(e) => return Err(self.reader.broke(e)),
            }
        }
    }
}

/// Whether the parts of a pub/sub frame say `kind` ("subscribe", "unsubscribe",
/// "ssubscribe"…) of `channel`.
fn names(data: &[Value], kind: &[u8], channel: &str) -> bool {
    matches!(data.first(), Some(Value::BulkString(k)) if k == kind)
        && matches!(data.get(1), Some(Value::BulkString(c)) if c == channel.as_bytes())
}

/// The payload of `frame` if it is a message on `channel` (RESP2's subscribed mode,
/// or a push message).
fn message_on(frame: Value, channel: &str) -> Option<Vec<u8>> {
    let (Value::Array(mut data) | Value::Push { mut data, .. }) = frame else { return None };
    if data.len() != 3 || !names(&data, b"message", channel) {
        return None;
    }
    match data.pop() {
        Some(Value::BulkString(payload)) => Some(payload),
        _ => None,
    }
}
