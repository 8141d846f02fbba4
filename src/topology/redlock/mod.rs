//! Redlock: one lock over N independent Redis masters (the `servers` setting).
//!
//! Every operation goes to all nodes at once. The command is written to every
//! connection first; the replies are then read as they come, whichever node's
//! first (`poll(2)` on the sockets), and the call returns as soon as its outcome
//! is decided: a majority took the lock (or renewed it, or gave one answer), or so
//! many refused or failed that no majority is possible. A node that has not
//! answered by then costs nothing: its reply is owed (`Expect`), read at the
//! connection's next use, and the connection stays with the node (`Node::parked`),
//! so that what goes to it next (the release, the undo of a failed attempt) follows
//! on the same connection and runs after the late command. A late script that the
//! server turns out to lack (NOSCRIPT) is sent again by its text when its reply is
//! read. Each node's wait is bounded by `read_timeout` without a reply.
//!
//! A node that timed out (no reply for `read_timeout`, a connect that ran out of
//! time, or `MAX_OWED` replies owed) is skipped for a back-off period,
//! 1 s at first and doubling while it keeps failing up to 16 s, and counts as
//! failed meanwhile; then one call probes it. A skipped node that answers an owed
//! reply in the meantime (it was only stalled) rejoins at once. This is per thread,
//! like the connections (`pool`); the watchdog's renewals keep their own.
//! TLS connections are polled too (`pollfd` counts bytes rustls decrypted and not
//! yet read), and so is a DSN with `?protocol=resp3`: every connection is ours.
//!
//! The lock is held when a majority of the nodes took it and time is left of the
//! lease: validity = lease − elapsed − drift, with drift = 1% of the lease + 2 ms
//! (clock drift between the nodes, and the time the caller needs to start). A failed
//! attempt is undone on every node that may have taken it (token-checked), late
//! ones included, so nothing is left behind.

//!
//! `tally` counts the nodes' answers, `nodes` keeps what this thread knows of each
//! node between fan-outs (its parked connection, its back-off, the scripts it has),
//! and `fanout` asks them all at once and reads the replies as they come.

mod fanout;
mod nodes;
mod tally;

// Extra safety taken off the validity of a lease: clock drift between the nodes, the
// same rule as every bound on a lease (`clock::drift`).
use crate::clock::drift;
use crate::error::{LockError, Result};
use crate::net::call::Call;
use crate::net::pool::{self, Endpoint};
use crate::net::wire::Connection;
use crate::topology::landed::Landed;
use redis::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally::{count, tally, Ask, NodeError, Reply};

/// Where a fan-out gets its connections: the thread's registry for requests, the
/// watchdog's own set for renewals (the watchdog must never lock the registry, whose
/// mutex a fork could catch held).
pub(crate) trait Links {
    /// A connection to `ep`, made within `budget` if none is at hand.
    fn check_out(&mut self, ep: &Endpoint, budget: Duration) -> Result<Connection>;
    /// Gives back a connection whose last exchange went well.
    fn check_in(&mut self, ep: &Endpoint, conn: Connection);
}

/// The process's registry (`pool`).
pub(crate) struct Pooled;

impl Links for Pooled {
    fn check_out(&mut self, ep: &Endpoint, budget: Duration) -> Result<Connection> {
        pool::check_out(ep, budget)
    }
    fn check_in(&mut self, ep: &Endpoint, conn: Connection) {
        pool::check_in(ep, conn)
    }
}

/// The independent masters of one Redlock.
#[derive(Debug)]
pub struct Quorum {
    nodes: Vec<Arc<Endpoint>>,
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

    /// One attempt to take `key` for `token` on a majority (`SET NX PX`).
    /// `Ok(Some(validity))` when held, `Ok(None)` when others hold it on too many
    /// nodes, a connection error when too many nodes did not answer for a majority
    /// to be possible at all. It returns once a majority took it, or once enough
    /// refused or failed that none can: a node still silent then is not waited for.
    /// `undo` is the kind's token-checked release, which a failed attempt runs on
    /// every node the `SET` went to, late ones on the connection the `SET` is
    /// waiting on, after it. A node that did not answer may still run the `SET`
    /// later (it waited in a partition), and enough of them would hold a majority
    /// for a whole lease: the error says what was sent then, so that the caller
    /// keeps the token and its `releaseLock()` clears what landed.
    pub fn take(
        &self,
        key: &[u8],
        token: &[u8],
        lease: Duration,
        undo: &Call<'_>,
    ) -> Result<Option<Duration>> {
        let ms = lease.as_millis().to_string();
        self.take_by(
            &Call::Command(&[b"SET", key, token, b"NX", b"PX", ms.as_bytes()]),
            &Value::Okay,
            key,
            token,
            lease,
            undo,
        )
    }

    /// `take` for any taking `call` that answers `took` on a node where it took
    /// what it takes (a MultiLock's keys: `key` is the first, by which a late reply's
    /// cleanup is found, as for a `SET` of it).
    pub fn take_by(
        &self,
        call: &Call<'_>,
        took: &Value,
        key: &[u8],
        token: &[u8],
        lease: Duration,
        undo: &Call<'_>,
    ) -> Result<Option<Duration>> {
        let start = Instant::now();
        let (n, majority) = (self.nodes.len(), self.majority());
        let ask = Ask { cleanup: false, sets: Some((key, token)) };
        let yes = took;
        let replies = self.all(&mut Pooled, call, ask, |s| {
            let took = count(s, yes);
            let t = tally(s);
            took >= majority
                || (took + t.pending < majority
                    && (t.answered >= majority || t.failed > n - majority))
        });
        let took = replies.iter().filter(|r| r.as_ref().is_ok_and(|v| v == yes)).count();
        let elapsed = start.elapsed();
        let validity = lease.checked_sub(elapsed + drift(lease));
        if took >= majority {
            if let Some(v) = validity.filter(|v| !v.is_zero()) {
                return Ok(Some(v));
            }
        }
        // Not held: undo wherever the SET went, including where the reply is not in.
        if took > 0 || replies.iter().any(|r| matches!(r, Err(e) if e.sent)) {
            let _ = self.agreed(undo);
        }
        self.enough_answered(&replies)?;
        if took >= majority {
            // Free, and taken, but too slowly to be held: Redis trouble, not "someone
            // else holds it". A passing state: a wait tries again until its deadline.
            return Err(LockError::Passing {
                addr: format!("{took} of the {n} Redlock servers"),
                cause: format!(
                    "a majority took the lock, but only after its validity had run out ({} ms of a {} ms lease, less {} ms for clock drift): the servers answered too slowly; undone on every server",
                    elapsed.as_millis(),
                    lease.as_millis(),
                    drift(lease).as_millis()
                ),
                sent: true,
            });
        }
        Ok(None)
    }

    /// Runs `call` on every node and returns the reply a majority gave, or `Nil`
    /// when no majority agrees (an error when too few answered for one to be possible).
    /// A release: it also reaches a skipped node that may hold a late `SET` of its key
    /// and token (see `Ask::cleanup`).
    pub fn agreed(&self, call: &Call<'_>) -> Result<Value> {
        let (n, majority) = (self.nodes.len(), self.majority());
        let replies = self.all(&mut Pooled, call, Ask { cleanup: true, sets: None }, |s| {
            let t = tally(s);
            let most = s.iter().flatten().flatten().map(|v| count(s, v)).max().unwrap_or(0);
            most >= majority
                || (most + t.pending < majority
                    && (t.answered >= majority || t.failed > n - majority))
        });
        for r in replies.iter().flatten() {
            if replies.iter().filter(|o| o.as_ref().is_ok_and(|v| v == r)).count() >= majority {
                return Ok(r.clone());
            }
        }
        self.enough_answered(&replies)?;
        Ok(Value::Nil)
    }

    /// Runs the renewal `call` (a token-checked script setting `lease`, answering 1
    /// when renewed and 0 when the token no longer holds the key) on every node.
    /// `Yes` when a majority took it within the validity it gives, `Lost` when no
    /// majority can hold the token any more.
    pub(crate) fn extend(
        &self,
        links: &mut impl Links,
        call: &Call<'_>,
        lease: Duration,
    ) -> Result<Landed> {
        let start = Instant::now();
        let (n, majority) = (self.nodes.len(), self.majority());
        let replies = self.all(links, call, Ask::default(), |s| {
            let renewed = count(s, &Value::Int(1));
            let refused = count(s, &Value::Int(0));
            let t = tally(s);
            renewed >= majority
                || refused > n - majority
                || (renewed + t.pending < majority
                    && refused + t.pending <= n - majority
                    && (t.answered >= majority || t.failed > n - majority))
        });
        let renewed = replies.iter().filter(|r| matches!(r, Ok(Value::Int(1)))).count();
        let refused = replies.iter().filter(|r| matches!(r, Ok(Value::Int(0)))).count();
        let in_time = lease > start.elapsed() + drift(lease);
        if renewed >= majority && in_time {
            return Ok(Landed::Yes);
        }
        if refused > n - majority {
            // No majority can hold this token any more.
            return Ok(Landed::Lost);
        }
        self.enough_answered(&replies)?;
        Ok(Landed::Unsure(format!(
            "{renewed} of the {n} Redlock servers renewed it{}, a majority needs {majority}",
            if in_time { "" } else { " (too late for the lease's validity)" }
        )))
    }

    /// How long a majority still has the key, in ms: the lease of the node at the
    /// majority's edge (among the nodes that answered once a majority did: a lower
    /// bound). `None` when no majority has it; `Some(None)` when a majority has it
    /// without expiry.
    pub fn pttl(&self, key: &[u8]) -> Result<Option<Option<u64>>> {
        let (n, majority) = (self.nodes.len(), self.majority());
        let replies = self.all(&mut Pooled, &Call::Command(&[b"PTTL", key]), Ask::default(), |s| {
            let t = tally(s);
            t.answered >= majority || t.failed > n - majority
        });
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

    /// An error naming the silent nodes when too few answered for a majority. (Nodes
    /// not waited for are not named: the others decided the outcome without them.)
    fn enough_answered(&self, replies: &[Reply]) -> Result<()> {
        let errors = replies.iter().filter_map(|r| r.as_ref().err());
        let late = errors.clone().filter(|e| e.late).count();
        let failed: Vec<&NodeError> = errors.filter(|e| !e.late).collect();
        let answered = self.nodes.len() - failed.len() - late;
        if answered >= self.majority() {
            return Ok(());
        }
        let pending = if late > 0 { format!(" and {late} had not yet") } else { String::new() };
        Err(LockError::Connection {
            addr: format!("{} of the {} Redlock servers", failed.len(), self.nodes.len()),
            cause: format!(
                "{answered} answered{pending}, a majority needs {}: {}",
                self.majority(),
                failed.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join("; ")
            ),
            sent: late > 0 || failed.iter().any(|f| f.sent),
        })
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
