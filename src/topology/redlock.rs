//! Redlock: one lock over N independent Redis masters (the `servers` setting).
//!
//! Every operation goes to all nodes at once. The command is written to every
//! connection first, and the replies are read afterwards against one deadline shared
//! by all nodes, so a call costs about the slowest node's round trip, and a dead or
//! stalled node costs at most the per-node timeout (`read_timeout`), never one
//! timeout per node.
//!
//! The lock is held when a majority of the nodes took it and time is left of the
//! lease: validity = lease − elapsed − drift, with drift = 1% of the lease + 2 ms
//! (clock drift between the nodes, and the time the caller needs to start). A failed
//! attempt is undone on every node (token-checked), so nothing is left behind.

use crate::error::{LockError, Result};
use crate::net::call::Call;
use crate::net::pool::{self, Endpoint};
use crate::net::wire::Connection;
use redis::{ErrorKind, ServerErrorKind, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a fan-out gets its connections: the thread's registry for requests, the
/// watchdog's own set for renewals (the watchdog must never lock the registry, whose
/// mutex a fork could catch held).
pub(crate) trait Links {
    /// A connection to `ep`, made within `budget` if none is at hand.
    fn take(&mut self, ep: &Endpoint, budget: Duration) -> Result<Connection>;
    /// Gives back a connection whose last exchange went well.
    fn give(&mut self, ep: &Endpoint, conn: Connection);
}

/// The process's registry (`pool`).
pub(crate) struct Pooled;

impl Links for Pooled {
    fn take(&mut self, ep: &Endpoint, budget: Duration) -> Result<Connection> {
        pool::check_out(ep, budget)
    }
    fn give(&mut self, ep: &Endpoint, conn: Connection) {
        pool::check_in(ep, conn)
    }
}

/// Why a node gave no usable answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeError {
    /// Names the node and the cause.
    pub(crate) text: String,
    /// Whether the command may have reached the node.
    pub(crate) sent: bool,
}

/// The independent masters of one Redlock.
#[derive(Debug)]
pub struct Quorum {
    nodes: Vec<Arc<Endpoint>>,
}

/// Extra safety taken off the validity of a lease: clock drift between the nodes.
pub fn drift(lease: Duration) -> Duration {
    lease / 100 + Duration::from_millis(2)
}

impl Quorum {
    /// The nodes, in the order the settings list them.
    pub fn new(nodes: Vec<Arc<Endpoint>>) -> Self {
        Quorum { nodes }
    }

    /// Every node, as the settings list them.
    pub(crate) fn nodes(&self) -> &[Arc<Endpoint>] {
        &self.nodes
    }

    /// The first node, as the settings list it.
    pub(crate) fn first(&self) -> Arc<Endpoint> {
        self.nodes[0].clone()
    }

    /// Whether the endpoint `id` is one of the nodes.
    pub(crate) fn uses(&self, id: &Arc<str>) -> bool {
        self.nodes.iter().any(|n| n.id() == id)
    }

    /// How many nodes make a majority.
    pub fn majority(&self) -> usize {
        self.nodes.len() / 2 + 1
    }

    /// The nodes' addresses, for messages.
    pub fn describe(&self) -> String {
        self.nodes.iter().map(|n| n.addr()).collect::<Vec<_>>().join(", ")
    }

    /// Sends `call` to every node and returns each node's reply, in order.
    pub(crate) fn all(&self, links: &mut impl Links, call: &Call<'_>) -> Vec<std::result::Result<Value, NodeError>> {
        let start = Instant::now();
        let packed = call.packed();
        let n = self.nodes.len();
        let mut out: Vec<std::result::Result<Value, NodeError>> = (0..n).map(|_| Err(NodeError::default())).collect();
        let mut conns: Vec<Option<Connection>> = (0..n).map(|_| None).collect();
        let deadline = |ep: &Endpoint| start + ep.read_timeout();
        // Every request is on the wire before any reply is awaited.
        for (i, ep) in self.nodes.iter().enumerate() {
            let budget = deadline(ep).saturating_duration_since(Instant::now());
            match links.take(ep, budget) {
                Ok(mut conn) => match conn.send_packed_command(&packed) {
                    Ok(()) => conns[i] = Some(conn),
                    Err(e) => out[i] = Err(failure(ep, &e)),
                },
                Err(e) => out[i] = Err(NodeError { text: format!("{}: {}", ep.addr(), cause_of(&e)), sent: false }),
            }
        }
        for (i, ep) in self.nodes.iter().enumerate() {
            let Some(mut conn) = conns[i].take() else { continue };
            let left = deadline(ep).saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
            if let Err(e) = conn.set_read_timeout(Some(left)) {
                out[i] = Err(failure(ep, &e));
                continue;
            }
            let reply = conn.recv_response().and_then(Value::extract_error);
            let reply = match (reply, call) {
                (Err(e), Call::Script(script, keys, args)) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    script.invoke::<Value>(&mut conn, keys, args)
                }
                (other, _) => other,
            };
            match reply {
                Ok(v) => {
                    out[i] = Ok(v);
                    links.give(ep, conn);
                }
                Err(e) => {
                    out[i] = Err(failure(ep, &e));
                    // An error reply leaves the connection in step; anything else does not.
                    if matches!(e.kind(), ErrorKind::Server(_)) {
                        links.give(ep, conn);
                    }
                }
            }
        }
        out
    }

    /// One attempt to take `key` for `token` on a majority (`SET NX PX`).
    /// `Ok(Some(validity))` when held, `Ok(None)` when others hold it on too many
    /// nodes, a connection error when too many nodes did not answer for a majority
    /// to be possible at all. `undo` is the kind's token-checked release, which a
    /// failed attempt runs on every node. A node that did not answer may still run
    /// the `SET` later (it waited in a partition), and enough of them would hold a
    /// majority for a whole lease: the error says what was sent then, so that the
    /// caller keeps the token and its `releaseLock()` clears what landed.
    pub fn try_acquire(&self, key: &[u8], token: &[u8], lease: Duration, undo: &Call<'_>) -> Result<Option<Duration>> {
        let start = Instant::now();
        let ms = lease.as_millis().to_string();
        let replies = self.all(&mut Pooled, &Call::Command(&[b"SET", key, token, b"NX", b"PX", ms.as_bytes()]));
        let took = replies.iter().filter(|r| matches!(r, Ok(Value::Okay))).count();
        let validity = lease.checked_sub(start.elapsed() + drift(lease));
        if took >= self.majority() {
            if let Some(v) = validity.filter(|v| !v.is_zero()) {
                return Ok(Some(v));
            }
        }
        // Not held: undo everywhere, including where the reply was lost.
        if took > 0 || replies.iter().any(|r| r.is_err()) {
            let _ = self.agreed(undo);
        }
        self.enough_answered(&replies).map(|_| None)
    }

    /// Runs `call` on every node and returns the reply a majority gave, or `Nil`
    /// when no majority agrees (an error when too few answered for one to be possible).
    pub fn agreed(&self, call: &Call<'_>) -> Result<Value> {
        let replies = self.all(&mut Pooled, call);
        for r in replies.iter().flatten() {
            if replies.iter().filter(|o| o.as_ref().is_ok_and(|v| v == r)).count() >= self.majority() {
                return Ok(r.clone());
            }
        }
        self.enough_answered(&replies)?;
        Ok(Value::Nil)
    }

    /// Runs the renewal `call` (a token-checked script setting `lease`, answering 1
    /// when renewed and 0 when the token no longer holds the key) on every node.
    /// `Yes` when a majority took it within the validity it gives.
    pub(crate) fn extend(&self, links: &mut impl Links, call: &Call<'_>, lease: Duration) -> Result<Extended> {
        let start = Instant::now();
        let replies = self.all(links, call);
        let renewed = replies.iter().filter(|r| matches!(r, Ok(Value::Int(1)))).count();
        let refused = replies.iter().filter(|r| matches!(r, Ok(Value::Int(0)))).count();
        let in_time = lease > start.elapsed() + drift(lease);
        if renewed >= self.majority() && in_time {
            return Ok(Extended::Yes);
        }
        if refused > self.nodes.len() - self.majority() {
            // No majority can hold this token any more.
            return Ok(Extended::Lost);
        }
        self.enough_answered(&replies)?;
        Ok(Extended::No)
    }

    /// How long a majority still has the key, in ms: the lease of the node at the
    /// majority's edge. `None` when no majority has it; `Some(None)` when a majority
    /// has it without expiry.
    pub fn pttl(&self, key: &[u8]) -> Result<Option<Option<u64>>> {
        let replies = self.all(&mut Pooled, &Call::Command(&[b"PTTL", key]));
        self.enough_answered(&replies)?;
        // No expiry counts as the longest.
        let mut left: Vec<Option<u64>> = replies
            .iter()
            .filter_map(|r| match r {
                Ok(Value::Int(-1)) => Some(None),
                Ok(Value::Int(ms)) if *ms >= 0 => Some(Some(*ms as u64)),
                _ => None,
            })
            .collect();
        left.sort_by(|a, b| match (a, b) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, _) => std::cmp::Ordering::Less,
            (_, None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => y.cmp(x),
        });
        Ok(left.get(self.majority() - 1).copied())
    }

    /// An error naming the silent nodes when too few answered for a majority.
    fn enough_answered(&self, replies: &[std::result::Result<Value, NodeError>]) -> Result<()> {
        let failed: Vec<&NodeError> = replies.iter().filter_map(|r| r.as_ref().err()).collect();
        let answered = self.nodes.len() - failed.len();
        if answered >= self.majority() {
            return Ok(());
        }
        Err(LockError::Connection {
            addr: format!("{} of the {} Redlock servers", failed.len(), self.nodes.len()),
            cause: format!(
                "{answered} answered, a majority needs {}: {}",
                self.majority(),
                failed.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join("; ")
            ),
            sent: failed.iter().any(|f| f.sent),
        })
    }
}

/// What a renewal of a Redlock lease found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extended {
    /// A majority has the new lease.
    Yes,
    /// Too many nodes no longer hold the token: the lock is lost.
    Lost,
    /// Not confirmed in time; it may still be held.
    No,
}

/// A failure once the command was on its way to `ep`.
fn failure(ep: &Endpoint, e: &redis::RedisError) -> NodeError {
    NodeError { text: format!("{}: {}", ep.addr(), pool::describe_failure(ep, e)), sent: true }
}

fn cause_of(e: &LockError) -> String {
    match e {
        LockError::Connection { cause, .. } | LockError::Passing { cause, .. } | LockError::Server { cause, .. } => cause.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_one_percent_plus_two_milliseconds() {
        assert_eq!(drift(Duration::from_secs(10)), Duration::from_millis(102));
        assert_eq!(drift(Duration::from_millis(100)), Duration::from_millis(3));
    }
}
