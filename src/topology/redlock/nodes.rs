//! What this thread knows of each node between fan-outs: the connection that owes
//! replies (parked, so that the next command follows the late one), the back-off of a
//! node that timed out, the `SET`s it may still run, and the scripts it has.

use crate::error::LockError;
use crate::fork_wiped;
use crate::net::call::Call;
use crate::net::pool::{self, Endpoint};
use crate::net::wire::Connection;
use crate::topology::redlock::tally::NodeError;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The first back-off of a node that timed out; it doubles at each failed probe.
pub(super) const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// The longest back-off: a node that comes back is asked again within this.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(16);

/// Replies a node may owe before it counts as timed out: what a stalled server is
/// sent piles up in its socket buffers, and runs all at once when it wakes.
pub(super) const MAX_OWED: usize = 64;

/// `SET`s remembered per node whose replies are owed (`Node::unsettled`).
pub(super) const MAX_UNSETTLED: usize = 128;

/// Nodes remembered per thread; only troubled ones are (a healthy node with nothing
/// owed is not kept).
pub(super) const MAX_NODES: usize = 64;

/// A node skipped after a timeout.
pub(super) struct Down {
    /// When it first timed out (for messages).
    pub(super) since: Instant,
    /// Skipped until then; the first call after it probes the node.
    pub(super) until: Instant,
    /// This back-off's length.
    pub(super) period: Duration,
    /// When the probe was sent, while its reply is awaited: the node is skipped
    /// meanwhile, and backs off longer if none comes within `read_timeout`.
    pub(super) probe: Option<Instant>,
}

/// A reply a connection owes, in the order its commands went.
pub(super) enum Expect {
    /// The reply the fan-out waits for.
    Ours,
    /// A late reply to a command: put aside when it comes.
    Drop,
    /// A late reply to a script sent by SHA1: if the server lacks the script
    /// (NOSCRIPT), this, the call by the script's text, goes on the connection then.
    Script(Vec<u8>),
}

/// What this thread knows of one node between its fan-outs.
#[derive(Default)]
pub(super) struct Node {
    /// The connection that owes replies the node has not given yet: the next command
    /// to the node goes on it, after them, so that it runs after them.
    pub(super) parked: Option<Connection>,
    /// What `parked` owes.
    pub(super) owed: VecDeque<Expect>,
    /// Since when the node owes a reply without having given one.
    pub(super) silent_since: Option<Instant>,
    /// Set while the node is skipped.
    pub(super) down: Option<Down>,
    /// Our `SET`s (key, token) on `parked` whose replies are not in: a release or undo
    /// naming one still goes to the node while it is skipped (`Quorum::all`), so
    /// that a `SET` that lands late is cleared after it, on the same connection.
    pub(super) unsettled: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Node {
    /// Nothing worth keeping: a healthy node with nothing owed.
    pub(super) fn blank(&self) -> bool {
        self.parked.is_none() && self.silent_since.is_none() && self.down.is_none()
    }

    /// The node timed out: skip it for the first back-off, or, when it was already
    /// skipped (its probe failed), twice as long as last time. The next probe goes on
    /// the same connection when the server's host acknowledged all that was sent on
    /// it (the server is stalled: a new connection would wait as long, and the
    /// parked one carries what must run in order); otherwise on a new one (the old
    /// one may be dead without knowing it: a NAT or firewall forgot it).
    pub(super) fn timed_out(&mut self, now: Instant) {
        let (since, period) = match &self.down {
            Some(d) => (d.since, (d.period * 2).min(MAX_BACKOFF)),
            None => (now, FIRST_BACKOFF),
        };
        if self.down.is_some() && !self.parked.as_mut().is_some_and(host_acknowledges) {
            self.discard();
        }
        self.down = Some(Down { since, until: now + period, period, probe: None });
    }

    /// Closes the parked connection without waiting for what it owes (the server
    /// still runs what it was sent).
    pub(super) fn discard(&mut self) {
        if let Some(conn) = self.parked.take() {
            forsake(conn);
        }
        self.owed.clear();
        self.unsettled.clear();
        self.silent_since = None;
    }

    /// Whether `call` is a script for one of the keys and tokens of `unsettled`.
    pub(super) fn settles(&self, call: &Call<'_>) -> bool {
        let Call::Script(a) = call else { return false };
        self.unsettled.iter().any(|(k, t)| {
            let (mut key, mut token) = (false, false);
            a.each(&mut |part, is_key| {
                key |= is_key && part == &k[..];
                token |= !is_key && part == &t[..];
            });
            key && token
        })
    }

    /// Remembers the `SET` of `sets` as unsettled.
    pub(super) fn remember(&mut self, sets: Option<(&[u8], &[u8])>) {
        if let Some((key, token)) = sets {
            if self.unsettled.len() >= MAX_UNSETTLED {
                self.unsettled.remove(0);
            }
            self.unsettled.push((key.to_vec(), token.to_vec()));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(conn) = self.parked.take() {
            forsake(conn);
        }
    }
}

/// Whether the server's host has acknowledged everything sent on `conn`: true for
/// a Unix socket (the host is this one), false where this cannot be told.
#[cfg(target_os = "linux")]
pub(super) fn host_acknowledges(conn: &mut Connection) -> bool {
    // SAFETY: tcp_info is plain data, zeroed is valid; getsockopt writes at most `len` bytes.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            conn.fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    // Refused: not TCP, a Unix socket.
    r != 0 || info.tcpi_unacked == 0
}

#[cfg(not(target_os = "linux"))]
pub(super) fn host_acknowledges(_conn: &mut Connection) -> bool {
    false
}

/// Drops a connection that may owe replies to a silent server, waiting for them at
/// most a millisecond (a connection reads what it owes before it closes).
pub(super) fn forsake(conn: Connection) {
    let _ = conn.set_read_timeout(Some(Duration::from_millis(1)));
    drop(conn);
}

/// The nodes this thread knows something of, and the pid that made their connections.
pub(super) struct Nodes {
    pub(super) pid: u32,
    pub(super) list: Vec<(Arc<str>, Node)>,
}

thread_local! {
    static NODES: RefCell<Nodes> = const { RefCell::new(Nodes { pid: 0, list: Vec::new() }) };
}

thread_local! {
    /// The scripts (by SHA1) each node (by endpoint) is known to have cached.
    static LOADED: RefCell<Vec<(Arc<str>, String)>> = const { RefCell::new(Vec::new()) };
}

/// Scripts known cached on some node, at most: beyond, the list starts over.
pub(super) const MAX_LOADED: usize = 256;

/// Whether `ep` is known to have the script `sha` cached: it answered a call of it
/// on a connection that has not broken since. Until then a script goes to it by its
/// text (`EVAL`), so that a reply left owed is never a NOSCRIPT that came too late
/// for the script to be sent again before the call returned.
pub(super) fn loaded(ep: &Endpoint, sha: &str) -> bool {
    LOADED
        .try_with(|l| {
            l.try_borrow().is_ok_and(|l| {
                l.iter().any(|(id, s)| s == sha && (Arc::ptr_eq(id, ep.id()) || id == ep.id()))
            })
        })
        .unwrap_or(false)
}

/// What a fan-out learnt of `ep`'s script cache: it answered a call of `sha`; it may
/// have lost its scripts (`forget`: a NOSCRIPT, or the connection broke).
pub(super) fn learn(ep: &Endpoint, sha: Option<&str>, forget: bool) {
    let _ = LOADED.try_with(|l| {
        let Ok(mut l) = l.try_borrow_mut() else { return };
        if forget {
            l.retain(|(id, _)| id != ep.id());
        }
        if let Some(sha) = sha {
            if !l.iter().any(|(id, s)| s == sha && id == ep.id()) {
                if l.len() >= MAX_LOADED {
                    l.clear();
                }
                l.push((ep.id().clone(), sha.to_string()));
            }
        }
    });
}

/// Takes what this thread knows of each of `eps` out of its registry (a blank state
/// for the others). A forked child forgets its parent's parked sockets unclosed:
/// what they owe is the parent's to read.
pub(super) fn check_out(eps: &[Arc<Endpoint>]) -> Vec<Node> {
    let pid = fork_wiped::pid();
    let taken = NODES.try_with(|cell| {
        let mut reg = cell.try_borrow_mut().ok()?;
        if reg.pid != pid {
            for (_, mut node) in reg.list.drain(..) {
                if let Some(conn) = node.parked.take() {
                    std::mem::forget(conn);
                }
            }
            reg.pid = pid;
        }
        if reg.list.is_empty() {
            return None;
        }
        let found = eps
            .iter()
            .map(|ep| {
                let at =
                    reg.list.iter().position(|(id, _)| Arc::ptr_eq(id, ep.id()) || id == ep.id());
                at.map(|at| reg.list.swap_remove(at).1).unwrap_or_default()
            })
            .collect();
        Some(found)
    });
    taken.ok().flatten().unwrap_or_else(|| eps.iter().map(|_| Node::default()).collect())
}

/// Puts back what `check_out` took, keeping only nodes with something to remember.
pub(super) fn check_in(eps: &[Arc<Endpoint>], nodes: Vec<Node>) {
    let mut nodes: Vec<(Arc<str>, Node)> =
        eps.iter().map(|ep| ep.id().clone()).zip(nodes).filter(|(_, n)| !n.blank()).collect();
    if nodes.is_empty() {
        return;
    }
    let _ = NODES.try_with(|cell| {
        let Ok(mut reg) = cell.try_borrow_mut() else { return };
        for (id, node) in nodes.drain(..) {
            if let Some(at) = reg.list.iter().position(|(known, _)| *known == id) {
                reg.list.swap_remove(at);
            }
            if reg.list.len() >= MAX_NODES {
                reg.list.remove(0);
            }
            reg.list.push((id, node));
        }
    });
}

/// Why a skipped node was not asked.
pub(super) fn skip_error(ep: &Endpoint, d: &Down, now: Instant) -> NodeError {
    let ago = now.saturating_duration_since(d.since).as_secs_f64();
    let rt = ep.read_timeout().as_secs_f64();
    let text = match d.probe {
        Some(_) => format!("{}: timed out {ago:.1} s ago (read_timeout {rt} s); not asked while a probe awaits its reply", ep.addr()),
        None => format!(
            "{}: timed out {ago:.1} s ago (read_timeout {rt} s); not asked for {:.1} s more",
            ep.addr(),
            d.until.saturating_duration_since(now).as_secs_f64()
        ),
    };
    NodeError { text, sent: false, late: false }
}

/// A failure once the command was on its way to `ep`.
pub(super) fn failure(ep: &Endpoint, e: &redis::RedisError) -> NodeError {
    NodeError {
        text: format!("{}: {}", ep.addr(), pool::describe_failure(ep, e)),
        sent: true,
        late: false,
    }
}

/// What a connection's failure says, without the address an error of it names.
pub(super) fn cause_of(e: &LockError) -> String {
    match e {
        LockError::Connection { cause, .. }
        | LockError::Passing { cause, .. }
        | LockError::Server { cause, .. } => cause.clone(),
        other => other.to_string(),
    }
}
