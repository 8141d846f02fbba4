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

use crate::error::{LockError, Result};
use crate::fork_wiped;
use crate::net::call::Call;
use crate::net::pool::{self, Endpoint};
use crate::net::wire::Connection;
use redis::{ErrorKind, ServerErrorKind, Value};
use std::cell::RefCell;
use std::collections::VecDeque;
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
    /// Not failed: its reply was not waited for, the outcome being decided without it.
    pub(crate) late: bool,
}

/// One node's answer to a fan-out.
type Reply = std::result::Result<Value, NodeError>;

/// The independent masters of one Redlock.
#[derive(Debug)]
pub struct Quorum {
    nodes: Vec<Arc<Endpoint>>,
}

/// The first back-off of a node that timed out; it doubles at each failed probe.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// The longest back-off: a node that comes back is asked again within this.
const MAX_BACKOFF: Duration = Duration::from_secs(16);

/// Replies a node may owe before it counts as timed out: what a stalled server is
/// sent piles up in its socket buffers, and runs all at once when it wakes.
const MAX_OWED: usize = 64;

/// `SET`s remembered per node whose replies are owed (`Node::unsettled`).
const MAX_UNSETTLED: usize = 128;

/// Nodes remembered per thread; only troubled ones are (a healthy node with nothing
/// owed is not kept).
const MAX_NODES: usize = 64;

/// A node skipped after a timeout.
struct Down {
    /// When it first timed out (for messages).
    since: Instant,
    /// Skipped until then; the first call after it probes the node.
    until: Instant,
    /// This back-off's length.
    period: Duration,
    /// When the probe was sent, while its reply is awaited: the node is skipped
    /// meanwhile, and backs off longer if none comes within `read_timeout`.
    probe: Option<Instant>,
}

/// A reply a connection owes, in the order its commands went.
enum Expect {
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
struct Node {
    /// The connection that owes replies the node has not given yet: the next command
    /// to the node goes on it, after them, so that it runs after them.
    parked: Option<Connection>,
    /// What `parked` owes.
    owed: VecDeque<Expect>,
    /// Since when the node owes a reply without having given one.
    silent_since: Option<Instant>,
    /// Set while the node is skipped.
    down: Option<Down>,
    /// Our `SET`s (key, token) on `parked` whose replies are not in: a release or undo
    /// naming one still goes to the node while it is skipped (`Quorum::all`), so
    /// that a `SET` that lands late is cleared after it, on the same connection.
    unsettled: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Node {
    /// Nothing worth keeping: a healthy node with nothing owed.
    fn blank(&self) -> bool {
        self.parked.is_none() && self.silent_since.is_none() && self.down.is_none()
    }

    /// The node timed out: skip it for the first back-off, or, when it was already
    /// skipped (its probe failed), twice as long as last time. The next probe goes on
    /// the same connection when the server's host acknowledged all that was sent on
    /// it (the server is stalled: a new connection would wait as long, and the
    /// parked one carries what must run in order); otherwise on a new one (the old
    /// one may be dead without knowing it: a NAT or firewall forgot it).
    fn timed_out(&mut self, now: Instant) {
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
    fn discard(&mut self) {
        if let Some(conn) = self.parked.take() {
            forsake(conn);
        }
        self.owed.clear();
        self.unsettled.clear();
        self.silent_since = None;
    }

    /// Whether `call` is a script for one of the keys and tokens of `unsettled`.
    fn settles(&self, call: &Call<'_>) -> bool {
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
    fn remember(&mut self, sets: Option<(&[u8], &[u8])>) {
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
fn host_acknowledges(conn: &mut Connection) -> bool {
    // SAFETY: tcp_info is plain data, zeroed is valid; getsockopt writes at most `len` bytes.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(conn.fd(), libc::IPPROTO_TCP, libc::TCP_INFO, (&mut info as *mut libc::tcp_info).cast(), &mut len) };
    // Refused: not TCP, a Unix socket.
    r != 0 || info.tcpi_unacked == 0
}

#[cfg(not(target_os = "linux"))]
fn host_acknowledges(_conn: &mut Connection) -> bool {
    false
}

/// Drops a connection that may owe replies to a silent server, waiting for them at
/// most a millisecond (a connection reads what it owes before it closes).
fn forsake(conn: Connection) {
    let _ = conn.set_read_timeout(Some(Duration::from_millis(1)));
    drop(conn);
}

/// The nodes this thread knows something of, and the pid that made their connections.
struct Nodes {
    pid: u32,
    list: Vec<(Arc<str>, Node)>,
}

thread_local! {
    static NODES: RefCell<Nodes> = const { RefCell::new(Nodes { pid: 0, list: Vec::new() }) };
}

thread_local! {
    /// The scripts (by SHA1) each node (by endpoint) is known to have cached.
    static LOADED: RefCell<Vec<(Arc<str>, String)>> = const { RefCell::new(Vec::new()) };
}

/// Scripts known cached on some node, at most: beyond, the list starts over.
const MAX_LOADED: usize = 256;

/// Whether `ep` is known to have the script `sha` cached: it answered a call of it
/// on a connection that has not broken since. Until then a script goes to it by its
/// text (`EVAL`), so that a reply left owed is never a NOSCRIPT that came too late
/// for the script to be sent again before the call returned.
fn loaded(ep: &Endpoint, sha: &str) -> bool {
    LOADED.try_with(|l| l.try_borrow().is_ok_and(|l| l.iter().any(|(id, s)| s == sha && (Arc::ptr_eq(id, ep.id()) || id == ep.id()))))
        .unwrap_or(false)
}

/// What a fan-out learnt of `ep`'s script cache: it answered a call of `sha`; it may
/// have lost its scripts (`forget`: a NOSCRIPT, or the connection broke).
fn learn(ep: &Endpoint, sha: Option<&str>, forget: bool) {
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
fn check_out(eps: &[Arc<Endpoint>]) -> Vec<Node> {
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
                let at = reg.list.iter().position(|(id, _)| Arc::ptr_eq(id, ep.id()) || id == ep.id());
                at.map(|at| reg.list.swap_remove(at).1).unwrap_or_default()
            })
            .collect();
        Some(found)
    });
    taken.ok().flatten().unwrap_or_else(|| eps.iter().map(|_| Node::default()).collect())
}

/// Puts back what `check_out` took, keeping only nodes with something to remember.
fn check_in(eps: &[Arc<Endpoint>], nodes: Vec<Node>) {
    let mut nodes: Vec<(Arc<str>, Node)> = eps.iter().map(|ep| ep.id().clone()).zip(nodes).filter(|(_, n)| !n.blank()).collect();
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

/// What a fan-out does beyond asking the nodes that are not skipped.
#[derive(Clone, Copy, Default)]
struct Ask<'a> {
    /// A release or an undo: it also goes, unawaited, to a skipped node whose
    /// parked connection carries a `SET` of one of its keys and tokens.
    cleanup: bool,
    /// The `SET` of this key and token: a node that leaves it unanswered remembers
    /// it (`Node::unsettled`).
    sets: Option<(&'a [u8], &'a [u8])>,
}

/// How the nodes stand in a fan-out so far.
struct Tally {
    answered: usize,
    failed: usize,
    pending: usize,
}

fn tally(slots: &[Option<Reply>]) -> Tally {
    let mut t = Tally { answered: 0, failed: 0, pending: 0 };
    for s in slots {
        match s {
            Some(Ok(_)) => t.answered += 1,
            Some(Err(_)) => t.failed += 1,
            None => t.pending += 1,
        }
    }
    t
}

/// How many nodes gave exactly `want`.
fn count(slots: &[Option<Reply>], want: &Value) -> usize {
    slots.iter().filter(|s| matches!(s, Some(Ok(v)) if v == want)).count()
}

/// Waits until one of `fds` is readable, at most `wait` (zero: only looks). An entry
/// readable already (`pollfd`: TLS bytes decrypted and not read) stays readable and
/// ends the wait at once; the kernel is still asked about the others, without waiting.
fn poll(fds: &mut [libc::pollfd], wait: Duration) -> std::io::Result<()> {
    // The kernel skips an entry with a negative fd: those readable already are
    // hidden from it so (`!fd` is negative for every fd), and shown again after.
    let mut early = false;
    for f in fds.iter_mut().filter(|f| f.revents != 0) {
        f.fd = !f.fd;
        early = true;
    }
    let wait = if early { Duration::ZERO } else { wait };
    let ms = i32::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
    // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfds.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    let failed = (r < 0).then(std::io::Error::last_os_error);
    if failed.is_some() {
        // A signal: the caller looks again (after the entries readable already).
        fds.iter_mut().for_each(|f| f.revents = 0);
    }
    for f in fds.iter_mut().filter(|f| f.fd < 0) {
        f.fd = !f.fd;
        f.revents = libc::POLLIN;
    }
    match failed {
        Some(e) if e.kind() != std::io::ErrorKind::Interrupted => Err(e),
        _ => Ok(()),
    }
}

/// What `poll` watches for `p`: its socket, and whether it has bytes to read already
/// that the socket would not show (TLS).
fn pollfd(p: &mut Connection) -> libc::pollfd {
    let revents = if p.buffered() { libc::POLLIN } else { 0 };
    libc::pollfd { fd: p.fd(), events: libc::POLLIN, revents }
}

/// Reads, without waiting, what the parked connections have received: replies to
/// earlier calls. A node that answers is back, skipped or not.
fn catch_up(nodes: &mut [Node], now: Instant) {
    let mut fds = Vec::new();
    let mut at = Vec::new();
    for (i, node) in nodes.iter_mut().enumerate() {
        if let Some(p) = node.parked.as_mut() {
            fds.push(pollfd(p));
            at.push(i);
        }
    }
    if fds.is_empty() || poll(&mut fds, Duration::ZERO).is_err() {
        return;
    }
    for (fd, &i) in fds.iter().zip(&at) {
        if fd.revents == 0 {
            continue;
        }
        let node = &mut nodes[i];
        let Some(conn) = node.parked.as_mut() else { continue };
        match drain(conn, &mut node.owed, true, None, &mut false) {
            Ok((None, heard)) => {
                if heard {
                    node.down = None;
                    node.silent_since = (!node.owed.is_empty()).then_some(now);
                    if node.owed.is_empty() {
                        node.unsettled.clear();
                    }
                }
            }
            // Broken, or out of step: nothing more will be read on it.
            _ => {
                if let Some(conn) = node.parked.take() {
                    forsake(conn);
                }
                node.owed.clear();
                node.unsettled.clear();
                node.silent_since = None;
            }
        }
    }
}

/// Reads what has come on `conn` (from the socket once, when `read`) and files the
/// replies it owes in order (`owed`): a late script's NOSCRIPT sends it again by its
/// text, and `Ours` is the reply awaited, returned (after the same for `call`'s
/// script). `heard`: some reply came; `flushed` is set on a NOSCRIPT.
fn drain(conn: &mut Connection, owed: &mut VecDeque<Expect>, mut read: bool, call: Option<&Call<'_>>, flushed: &mut bool) -> redis::RedisResult<(Option<Value>, bool)> {
    let mut heard = false;
    loop {
        let Some(reply) = conn.try_reply(read)? else { return Ok((None, heard)) };
        read = false;
        heard = true;
        let missing = matches!(&reply, Value::ServerError(e) if e.kind() == Some(ServerErrorKind::NoScript));
        *flushed |= missing;
        match owed.pop_front() {
            Some(Expect::Ours) => {
                if let (true, Some(Call::Script(a))) = (missing, call) {
                    conn.send_packed_command(&a.script().packed_eval(*a))?;
                    owed.push_back(Expect::Ours);
                    continue;
                }
                return Ok((Some(reply), true));
            }
            Some(Expect::Script(text)) if missing => {
                conn.send_packed_command(&text)?;
                owed.push_back(Expect::Drop);
            }
            Some(_) => {}
            None => return Err(redis::RedisError::from((ErrorKind::Parse, "protocol error", "a reply nobody asked for".to_string()))),
        }
    }
}

/// The replies awaited become owed: a script's with its text at hand for a NOSCRIPT.
fn owe(owed: &mut VecDeque<Expect>, call: &Call<'_>) {
    for e in owed.iter_mut().filter(|e| matches!(e, Expect::Ours)) {
        *e = match call {
            Call::Script(a) => Expect::Script(a.script().packed_eval(*a)),
            Call::Command(_) => Expect::Drop,
        };
    }
}

// Extra safety taken off the validity of a lease: clock drift between the nodes, the
// same rule as every bound on a lease (`clock::drift`).
use crate::clock::drift;

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

    /// Sends `call` to every node that is not skipped and returns each node's reply,
    /// in the nodes' order, once `decided` says the replies so far settle the outcome
    /// whatever the others would say (`None`: not in yet), or every node answered or
    /// ran out of time. A node not in then is an error (`sent`), its reply owed.
    fn all(&self, links: &mut impl Links, call: &Call<'_>, ask: Ask<'_>, decided: impl Fn(&[Option<Reply>]) -> bool) -> Vec<Reply> {
        let start = Instant::now();
        let n = self.nodes.len();
        let mut nodes = check_out(&self.nodes);
        catch_up(&mut nodes, start);
        let mut slots: Vec<Option<Reply>> = (0..n).map(|_| None).collect();
        let mut conns: Vec<Option<Connection>> = (0..n).map(|_| None).collect();
        let mut owed: Vec<VecDeque<Expect>> = (0..n).map(|_| VecDeque::new()).collect();
        // Since when each node is quiet while it owes a reply: `read_timeout` of that
        // is a timeout, as on a blocking read.
        let mut quiet: Vec<Instant> = vec![start; n];
        let mut timed_out = vec![false; n];
        let mut skipped = vec![false; n];
        let mut probing = vec![false; n];
        let mut flushed = vec![false; n];
        let sha = match call {
            Call::Script(a) => Some(a.script().sha()),
            Call::Command(_) => None,
        };

        for (ep, node) in self.nodes.iter().zip(nodes.iter_mut()) {
            let rt = ep.read_timeout();
            match &node.down {
                None => {
                    if node.owed.len() >= MAX_OWED || node.silent_since.is_some_and(|t| start.saturating_duration_since(t) >= rt) {
                        node.timed_out(start);
                    }
                }
                Some(d) if d.probe.is_some_and(|p| start.saturating_duration_since(p) >= rt) => node.timed_out(start),
                Some(_) => {}
            }
        }
        // Skipping buys nothing when no majority can be had without the skipped
        // nodes: those not awaiting a probe are probed now, so that a quorum that came
        // back is used at once, not after its back-off (a call then costs at most one
        // read_timeout, as it did before the skipping, and fails only if they are
        // still silent). Not for a release or an undo: what it leaves ends with the
        // lease, and it must not hold up the error of the attempt it undoes.
        let waits = |node: &Node| node.down.as_ref().is_some_and(|d| d.probe.is_some() || start < d.until);
        if !ask.cleanup && nodes.iter().filter(|node| !waits(node)).count() < self.majority() {
            for node in nodes.iter_mut() {
                if let Some(d) = node.down.as_mut().filter(|d| d.probe.is_none()) {
                    d.until = d.until.min(start);
                }
            }
        }
        for (i, (ep, node)) in self.nodes.iter().zip(nodes.iter_mut()).enumerate() {
            let Some(d) = &node.down else { continue };
            if d.probe.is_none() && start >= d.until {
                probing[i] = true;
                continue;
            }
            skipped[i] = true;
            let mut error = skip_error(ep, d, start);
            if let (true, Some(conn), Call::Script(a)) = (ask.cleanup && node.settles(call), node.parked.as_mut(), call) {
                // A SET of this key and token may still land there: its release or undo
                // follows it on its connection, unawaited (by its text: no NOSCRIPT).
                match conn.send_packed_command(&a.script().packed_eval(*a)) {
                    Ok(()) => {
                        node.owed.push_back(Expect::Drop);
                        error.sent = true;
                    }
                    Err(_) => node.discard(),
                }
            }
            slots[i] = Some(Err(error));
        }

        // Every request is on the wire before any reply is awaited.
        let packed = call.packed();
        let mut by_text: Option<Vec<u8>> = None;
        for (i, (ep, node)) in self.nodes.iter().zip(nodes.iter_mut()).enumerate() {
            if slots[i].is_some() {
                continue;
            }
            let asked = Instant::now();
            let budget = (start + ep.read_timeout()).saturating_duration_since(asked);
            let conn = match node.parked.take() {
                Some(conn) => {
                    owed[i] = std::mem::take(&mut node.owed);
                    Ok(conn)
                }
                None => links.take(ep, budget),
            };
            let mut conn = match conn {
                Ok(conn) => conn,
                Err(e) => {
                    // A connect that failed only after most of its whole time timed out
                    // (a stalled server accepts, then never answers the PING); one
                    // left little time by others' is not the node's fault.
                    timed_out[i] = asked.elapsed() >= ep.connect_timeout().min(ep.read_timeout()).mul_f64(0.9);
                    slots[i] = Some(Err(NodeError { text: format!("{}: {}", ep.addr(), cause_of(&e)), sent: false, late: false }));
                    continue;
                }
            };
            let bytes: &[u8] = match (call, sha) {
                (Call::Script(a), Some(sha)) if !loaded(ep, sha) => by_text.get_or_insert_with(|| a.script().packed_eval(*a)),
                _ => &packed,
            };
            match conn.send_packed_command(bytes) {
                Ok(()) => {
                    // A probe gets a whole read_timeout; any other command to a node
                    // that owes replies, what is left of the node's.
                    quiet[i] = if probing[i] { asked } else { node.silent_since.map_or(asked, |t| t.min(asked)) };
                    owed[i].push_back(Expect::Ours);
                    conns[i] = Some(conn);
                }
                Err(e) => {
                    timed_out[i] = e.is_timeout();
                    node.discard();
                    slots[i] = Some(Err(failure(ep, &e)));
                }
            }
        }

        // The others as they come, until the outcome is decided. A node's time runs
        // out only after a last look at its socket.
        let mut fds = Vec::with_capacity(n);
        let mut at = Vec::with_capacity(n);
        loop {
            if decided(&slots) {
                break;
            }
            fds.clear();
            at.clear();
            let mut next: Option<Instant> = None;
            for i in 0..n {
                if slots[i].is_some() {
                    continue;
                }
                let Some(p) = conns[i].as_mut() else { continue };
                let due = quiet[i] + self.nodes[i].read_timeout();
                next = Some(next.map_or(due, |x: Instant| x.min(due)));
                fds.push(pollfd(p));
                at.push(i);
            }
            let Some(next) = next else { break };
            if let Err(e) = poll(&mut fds, next.saturating_duration_since(Instant::now())) {
                for &i in &at {
                    slots[i] = Some(Err(NodeError { text: format!("{}: poll failed: {e}", self.nodes[i].addr()), sent: true, late: false }));
                    if let Some(conn) = conns[i].take() {
                        forsake(conn);
                    }
                }
                break;
            }
            for (fd, &i) in fds.iter().zip(&at) {
                if fd.revents != 0 {
                    self.read_some(i, call, &mut slots, &mut conns, &mut owed, &mut quiet, &mut timed_out, &mut flushed[i]);
                }
            }
            let now = Instant::now();
            for &i in &at {
                let ep = &self.nodes[i];
                if slots[i].is_none() && conns[i].is_some() && now >= quiet[i] + ep.read_timeout() {
                    let text = format!("{}: timed out (read_timeout {} s)", ep.addr(), ep.read_timeout().as_secs_f64());
                    slots[i] = Some(Err(NodeError { text, sent: true, late: false }));
                    timed_out[i] = true;
                }
            }
        }

        // What has come already is read too: the connection goes back with nothing
        // owed, and the answer counts.
        fds.clear();
        at.clear();
        for i in 0..n {
            if slots[i].is_none() {
                if let Some(p) = conns[i].as_mut() {
                    fds.push(pollfd(p));
                    at.push(i);
                }
            }
        }
        if !fds.is_empty() && poll(&mut fds, Duration::ZERO).is_ok() {
            for (fd, &i) in fds.iter().zip(&at) {
                if fd.revents != 0 {
                    self.read_some(i, call, &mut slots, &mut conns, &mut owed, &mut quiet, &mut timed_out, &mut flushed[i]);
                }
            }
        }

        let now = Instant::now();
        let mut out = Vec::with_capacity(n);
        for (i, (ep, node)) in self.nodes.iter().zip(nodes.iter_mut()).enumerate() {
            let reply = match (slots[i].take(), conns[i].take()) {
                // Answered: the node is well, whatever it was before.
                (Some(reply), Some(conn)) if !timed_out[i] => {
                    if sha.is_some() || flushed[i] {
                        learn(ep, sha, flushed[i]);
                    }
                    node.down = None;
                    if owed[i].is_empty() {
                        node.silent_since = None;
                        node.unsettled.clear();
                        links.give(ep, conn);
                    } else {
                        // A late script sent again after this reply: still owed.
                        node.silent_since = Some(now);
                        node.owed = std::mem::take(&mut owed[i]);
                        node.parked = Some(conn);
                    }
                    reply
                }
                // No reply yet: owed, and the connection kept for the node's next command.
                (slot, Some(conn)) => {
                    if flushed[i] {
                        learn(ep, None, true);
                    }
                    owe(&mut owed[i], call);
                    node.remember(ask.sets);
                    node.silent_since = Some(quiet[i]);
                    node.owed = std::mem::take(&mut owed[i]);
                    node.parked = Some(conn);
                    if timed_out[i] || node.owed.len() >= MAX_OWED {
                        node.timed_out(now);
                    } else if probing[i] {
                        if let Some(d) = node.down.as_mut() {
                            d.probe = Some(start);
                        }
                    }
                    slot.unwrap_or_else(|| Err(NodeError { text: format!("{}: no answer yet", ep.addr()), sent: true, late: true }))
                }
                (Some(reply), None) => {
                    if !skipped[i] {
                        // A new connection next time, maybe to a restarted server.
                        learn(ep, None, true);
                        node.discard();
                        if timed_out[i] || probing[i] {
                            node.timed_out(now);
                        }
                    }
                    reply
                }
                // Unreachable: every node has a reply or a connection by now.
                (None, None) => Err(NodeError { text: format!("{}: not asked", ep.addr()), sent: false, late: false }),
            };
            out.push(reply);
        }
        check_in(&self.nodes, nodes);
        out
    }

    /// Reads what has come on node `i`'s connection; its reply, when whole, goes in
    /// `slots`.
    #[allow(clippy::too_many_arguments)]
    fn read_some(
        &self,
        i: usize,
        call: &Call<'_>,
        slots: &mut [Option<Reply>],
        conns: &mut [Option<Connection>],
        owed: &mut [VecDeque<Expect>],
        quiet: &mut [Instant],
        timed_out: &mut [bool],
        flushed: &mut bool,
    ) {
        let Some(conn) = conns[i].as_mut() else { return };
        let now = Instant::now();
        match drain(conn, &mut owed[i], true, Some(call), flushed) {
            Ok((None, heard)) => {
                if heard {
                    quiet[i] = now;
                }
            }
            Ok((Some(v), _)) => {
                quiet[i] = now;
                self.take_reply(i, Ok(v), slots, conns, timed_out);
            }
            Err(e) => self.take_reply(i, Err(e), slots, conns, timed_out),
        }
    }

    /// Files node `i`'s `reply` (`drain` sent a script the server lacked again by its
    /// text already); a connection that failed is dropped.
    fn take_reply(&self, i: usize, reply: redis::RedisResult<Value>, slots: &mut [Option<Reply>], conns: &mut [Option<Connection>], timed_out: &mut [bool]) {
        let ep = &self.nodes[i];
        match reply.and_then(Value::extract_error) {
            Ok(v) => slots[i] = Some(Ok(v)),
            Err(e) => {
                slots[i] = Some(Err(failure(ep, &e)));
                // An error reply leaves the connection in step; anything else does not.
                if !matches!(e.kind(), ErrorKind::Server(_)) {
                    timed_out[i] = e.is_timeout();
                    if let Some(conn) = conns[i].take() {
                        forsake(conn);
                    }
                }
            }
        }
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
    pub fn try_acquire(&self, key: &[u8], token: &[u8], lease: Duration, undo: &Call<'_>) -> Result<Option<Duration>> {
        let ms = lease.as_millis().to_string();
        self.try_take(&Call::Command(&[b"SET", key, token, b"NX", b"PX", ms.as_bytes()]), &Value::Okay, key, token, lease, undo)
    }

    /// `try_acquire` for any taking `call` that answers `took` on a node where it took
    /// what it takes (a MultiLock's keys: `key` is the first, by which a late reply's
    /// cleanup is found, as for a `SET` of it).
    pub fn try_take(&self, call: &Call<'_>, took: &Value, key: &[u8], token: &[u8], lease: Duration, undo: &Call<'_>) -> Result<Option<Duration>> {
        let start = Instant::now();
        let (n, majority) = (self.nodes.len(), self.majority());
        let ask = Ask { cleanup: false, sets: Some((key, token)) };
        let yes = took;
        let replies = self.all(&mut Pooled, call, ask, |s| {
            let took = count(s, yes);
            let t = tally(s);
            took >= majority || (took + t.pending < majority && (t.answered >= majority || t.failed > n - majority))
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
            most >= majority || (most + t.pending < majority && (t.answered >= majority || t.failed > n - majority))
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
    /// `Yes` when a majority took it within the validity it gives.
    pub(crate) fn extend(&self, links: &mut impl Links, call: &Call<'_>, lease: Duration) -> Result<Extended> {
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
            return Ok(Extended::Yes);
        }
        if refused > n - majority {
            // No majority can hold this token any more.
            return Ok(Extended::Lost);
        }
        self.enough_answered(&replies)?;
        Ok(Extended::No)
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

/// Why a skipped node was not asked.
fn skip_error(ep: &Endpoint, d: &Down, now: Instant) -> NodeError {
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
fn failure(ep: &Endpoint, e: &redis::RedisError) -> NodeError {
    NodeError { text: format!("{}: {}", ep.addr(), pool::describe_failure(ep, e)), sent: true, late: false }
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
    fn an_entry_readable_already_ends_the_wait_and_the_others_are_still_looked_at() {
        let pipe = || {
            let mut fds = [0i32; 2];
            // SAFETY: a plain pipe into a two-int array.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            fds
        };
        let (quiet, ready, silent) = (pipe(), pipe(), pipe());
        // SAFETY: one byte written to a pipe this test owns.
        assert_eq!(unsafe { libc::write(ready[1], b"x".as_ptr().cast(), 1) }, 1);
        let mut fds = [
            libc::pollfd { fd: quiet[0], events: libc::POLLIN, revents: libc::POLLIN },
            libc::pollfd { fd: ready[0], events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: silent[0], events: libc::POLLIN, revents: 0 },
        ];
        let started = Instant::now();
        poll(&mut fds, Duration::from_secs(5)).expect("poll");
        assert!(started.elapsed() < Duration::from_secs(1), "waited {:?}", started.elapsed());
        assert_eq!((fds[0].fd, fds[0].revents), (quiet[0], libc::POLLIN));
        assert_eq!((fds[1].fd, fds[1].revents & libc::POLLIN), (ready[0], libc::POLLIN));
        assert_eq!((fds[2].fd, fds[2].revents), (silent[0], 0));
        // Nothing readable already: the wait is the kernel's.
        fds[1].revents = 0;
        fds[0].revents = 0;
        let started = Instant::now();
        poll(&mut fds[2..], Duration::from_millis(50)).expect("poll");
        assert!(started.elapsed() >= Duration::from_millis(45));
        for fd in quiet.iter().chain(&ready).chain(&silent) {
            // SAFETY: closing the pipes this test opened.
            unsafe { libc::close(*fd) };
        }
    }

    #[test]
    fn drift_is_one_percent_plus_two_milliseconds() {
        assert_eq!(drift(Duration::from_secs(10)), Duration::from_millis(102));
        assert_eq!(drift(Duration::from_millis(100)), Duration::from_millis(3));
    }
}
