//! The fan-out: a command written to every node first, the replies read as they
//! come (`poll(2)` on the sockets), and a return as soon as the outcome is decided.

use crate::net::call::Call;
use crate::net::script;
use crate::net::wire::Connection;
use crate::topology::redlock::nodes::{
    cause_of, check_in, check_out, failure, forsake, learn, loaded, skip_error, Expect, Node,
    MAX_OWED,
};
use crate::topology::redlock::tally::{Ask, NodeError, Reply};
use crate::topology::redlock::{Links, Quorum};
use redis::{ErrorKind, Value};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

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
fn drain(
    conn: &mut Connection,
    owed: &mut VecDeque<Expect>,
    mut read: bool,
    call: Option<&Call<'_>>,
    flushed: &mut bool,
) -> redis::RedisResult<(Option<Value>, bool)> {
    let mut heard = false;
    loop {
        let Some(reply) = conn.try_reply(read)? else { return Ok((None, heard)) };
        read = false;
        heard = true;
        let missing = script::lacking(&reply);
        *flushed |= missing;
        match owed.pop_front() {
            Some(Expect::Ours) => {
                if let (true, Some(a)) = (missing, call.and_then(Call::args)) {
                    conn.send_packed_command(&a.script().packed_eval(a))?;
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
            None => {
                return Err(redis::RedisError::from((
                    ErrorKind::Parse,
                    "protocol error",
                    "a reply nobody asked for".to_string(),
                )))
            }
        }
    }
}

/// The replies awaited become owed: a script's with its text at hand for a NOSCRIPT.
fn owe(owed: &mut VecDeque<Expect>, call: &Call<'_>) {
    for e in owed.iter_mut().filter(|e| matches!(e, Expect::Ours)) {
        *e = match call.args() {
            Some(a) => Expect::Script(a.script().packed_eval(a)),
            None => Expect::Drop,
        };
    }
}

impl Quorum {
    /// Sends `call` to every node that is not skipped and returns each node's reply,
    /// in the nodes' order, once `decided` says the replies so far settle the outcome
    /// whatever the others would say (`None`: not in yet), or every node answered or
    /// ran out of time. A node not in then is an error (`sent`), its reply owed.
    pub(super) fn all(
        &self,
        links: &mut impl Links,
        call: &Call<'_>,
        ask: Ask<'_>,
        decided: impl Fn(&[Option<Reply>]) -> bool,
    ) -> Vec<Reply> {
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
        let sha = call.args().map(|a| a.script().sha());

        for (ep, node) in self.nodes.iter().zip(nodes.iter_mut()) {
            let rt = ep.read_timeout();
            match &node.down {
                None => {
                    if node.owed.len() >= MAX_OWED
                        || node
                            .silent_since
                            .is_some_and(|t| start.saturating_duration_since(t) >= rt)
                    {
                        node.timed_out(start);
                    }
                }
                Some(d) if d.probe.is_some_and(|p| start.saturating_duration_since(p) >= rt) => {
                    node.timed_out(start)
                }
                Some(_) => {}
            }
        }
        // Skipping buys nothing when no majority can be had without the skipped
        // nodes: those not awaiting a probe are probed now, so that a quorum that came
        // back is used at once, not after its back-off (a call then costs at most one
        // read_timeout, as it did before the skipping, and fails only if they are
        // still silent). Not for a release or an undo: what it leaves ends with the
        // lease, and it must not hold up the error of the attempt it undoes.
        let waits =
            |node: &Node| node.down.as_ref().is_some_and(|d| d.probe.is_some() || start < d.until);
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
            if let (true, Some(conn), Call::Script(a)) =
                (ask.cleanup && node.settles(call), node.parked.as_mut(), call)
            {
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
                None => links.check_out(ep, budget),
            };
            let mut conn = match conn {
                Ok(conn) => conn,
                Err(e) => {
                    // A connect that failed only after most of its whole time timed out
                    // (a stalled server accepts, then never answers the PING); one
                    // left little time by others' is not the node's fault.
                    timed_out[i] =
                        asked.elapsed() >= ep.connect_timeout().min(ep.read_timeout()).mul_f64(0.9);
                    slots[i] = Some(Err(NodeError {
                        text: format!("{}: {}", ep.addr(), cause_of(&e)),
                        sent: false,
                        late: false,
                    }));
                    continue;
                }
            };
            let bytes: &[u8] = match (call.args(), sha) {
                (Some(a), Some(sha)) if !loaded(ep, sha) => {
                    by_text.get_or_insert_with(|| a.script().packed_eval(a))
                }
                _ => &packed,
            };
            match conn.send_packed_command(bytes) {
                Ok(()) => {
                    // A probe gets a whole read_timeout; any other command to a node
                    // that owes replies, what is left of the node's.
                    quiet[i] = if probing[i] {
                        asked
                    } else {
                        node.silent_since.map_or(asked, |t| t.min(asked))
                    };
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
                    slots[i] = Some(Err(NodeError {
                        text: format!("{}: poll failed: {e}", self.nodes[i].addr()),
                        sent: true,
                        late: false,
                    }));
                    if let Some(conn) = conns[i].take() {
                        forsake(conn);
                    }
                }
                break;
            }
            for (fd, &i) in fds.iter().zip(&at) {
                if fd.revents != 0 {
                    self.read_some(
                        i,
                        call,
                        &mut slots,
                        &mut conns,
                        &mut owed,
                        &mut quiet,
                        &mut timed_out,
                        &mut flushed[i],
                    );
                }
            }
            let now = Instant::now();
            for &i in &at {
                let ep = &self.nodes[i];
                if slots[i].is_none() && conns[i].is_some() && now >= quiet[i] + ep.read_timeout() {
                    let text = format!(
                        "{}: timed out (read_timeout {} s)",
                        ep.addr(),
                        ep.read_timeout().as_secs_f64()
                    );
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
                    self.read_some(
                        i,
                        call,
                        &mut slots,
                        &mut conns,
                        &mut owed,
                        &mut quiet,
                        &mut timed_out,
                        &mut flushed[i],
                    );
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
                        links.check_in(ep, conn);
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
                    slot.unwrap_or_else(|| {
                        Err(NodeError {
                            text: format!("{}: no answer yet", ep.addr()),
                            sent: true,
                            late: true,
                        })
                    })
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
                (None, None) => Err(NodeError {
                    text: format!("{}: not asked", ep.addr()),
                    sent: false,
                    late: false,
                }),
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
    fn take_reply(
        &self,
        i: usize,
        reply: redis::RedisResult<Value>,
        slots: &mut [Option<Reply>],
        conns: &mut [Option<Connection>],
        timed_out: &mut [bool],
    ) {
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
}
