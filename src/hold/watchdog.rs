//! The watchdog: one background thread per process that renews the leases of the
//! locks held with `auto_renew`, so that work may outlive `$lockOut`.
//!
//! It wakes when the earliest renewal is due, and renews every due lock of an
//! endpoint in one pipeline on a connection of its own (never the request's, which
//! may be in use). Each renewal is the token-checked `RENEW` script: a lock whose
//! key expired during a stall, or that someone else now holds, is marked lost and no
//! longer renewed; the object reports it on its next call. A renewal that fails on
//! the network is retried soon after, well before the lease runs out if the network
//! comes back.
//!
//! The thread never calls into PHP, blocks every signal (they belong to the
//! request's thread: pcntl handlers, SIGALRM timeouts), is started on the first
//! auto-renewed acquisition, and is stopped and joined at module shutdown.

use crate::clock::{lease_end, Boot};
use crate::hold::table::{self, HoldId, Part, Shared};
use crate::net::fast::Fast;
use crate::net::pool::{self, Endpoint};
use crate::net::resp;
use crate::net::wire::{self, Connection};
use crate::stats::{self, Counter};
use crate::terms::Durable;
use crate::topology::durable;
use crate::topology::redlock::{Extended, Links as LinkSource};
use crate::topology::route::Route;
use redis::Value;
use redis::{ErrorKind, ServerErrorKind};
use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One renewal to send.
struct Due {
    id: HoldId,
    endpoint: Arc<Endpoint>,
    /// What is held, where, and how it is renewed (a Redlock quorum on all its nodes
    /// at once).
    part: Arc<dyn Part>,
    token: Vec<u8>,
    /// The hold's lease when the round began: an `extendLock()` meanwhile changes it.
    lease: Duration,
    /// The lease this renewal sets (shorter than `lease` when `max_hold` cuts it).
    sets: Duration,
    lease_ms: String,
    /// The lease was cut short by `max_hold`: this renewal is the last.
    last: bool,
    /// A durable hold: renewed once acknowledged (`durable`).
    durable: Option<Durable>,
}

/// What one renewal found.
enum Outcome {
    Renewed,
    /// The token no longer holds the key.
    Lost,
    /// No answer (network, server error): try again soon.
    Failed,
}

/// After a connection failure, an endpoint is left alone this long, so that one dead
/// server does not cost every round a connect timeout.
const DOWN_PAUSE: Duration = Duration::from_millis(100);

/// Starts the thread with every signal blocked; `None` if the system refuses a thread,
/// in which case renewal does not happen and leases run out as without `auto_renew`.
pub(crate) fn spawn(shared: &'static Shared) -> Option<JoinHandle<()>> {
    // The new thread inherits the mask of the thread that creates it, so block
    // everything here for the instant of the spawn: no window where a signal could
    // land on the watchdog.
    // SAFETY: plain sigset manipulation on local storage.
    let old = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        old
    };
    let handle = std::thread::Builder::new()
        .name("rl-watchdog".to_string())
        .stack_size(256 * 1024)
        .spawn(move || run(shared))
        .ok();
    // SAFETY: restores the mask saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    handle
}

fn run(shared: &'static Shared) {
    let mut links = Links::default();
    let mut table = shared.lock();
    loop {
        if table.stop {
            return;
        }
        let now = Instant::now();
        // The renewals of this round are sent after this instant: their leases count
        // from it, on the clock bounds are kept on.
        let sent = Boot::now();
        let mut batch = Vec::new();
        let mut next: Option<Instant> = None;
        for (&id, hold) in table.holds.iter_mut() {
            let Some(r) = hold.renew.as_mut() else { continue };
            if r.due > now {
                next = Some(next.map_or(r.due, |n| n.min(r.due)));
                continue;
            }
            let lease = match r.until {
                None => r.lease,
                Some(until) => {
                    let left = until.saturating_duration_since(now);
                    if left < Duration::from_millis(1) {
                        // max_hold reached: the lease set last runs out by itself.
                        hold.renew = None;
                        continue;
                    }
                    left.min(r.lease)
                }
            };
            // Not due again until this round's answer is in.
            r.due = now + r.lease;
            batch.push(Due {
                id,
                endpoint: hold.part.route().node(),
                part: hold.part.clone(),
                token: hold.token.clone(),
                lease: r.lease,
                sets: lease,
                lease_ms: lease.as_millis().max(1).to_string(),
                last: lease < r.lease,
                durable: r.durable,
            });
        }
        if batch.is_empty() {
            if next.is_none() {
                // Nothing to renew: no connection is kept open for nothing.
                links.conns.clear();
                links.down.clear();
            }
            table.asleep = Some(next);
            table = match next {
                Some(at) => {
                    let (t, _) = shared
                        .wake
                        .wait_timeout(table, at.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner());
                    t
                }
                None => shared.wake.wait(table).unwrap_or_else(|p| p.into_inner()),
            };
            table.asleep = None;
            continue;
        }
        // No lock held during the network round trips: the request's thread must
        // never wait on them.
        drop(table);
        let outcomes = links.renew_all(&batch);
        table = shared.lock();
        let done = Instant::now();
        for (due, outcome) in batch.iter().zip(outcomes) {
            let Some(hold) = table.holds.get_mut(&due.id) else { continue };
            let Some(r) = hold.renew.as_mut() else { continue };
            match outcome {
                Outcome::Lost => hold.mark_lost(done),
                Outcome::Renewed if due.last => {
                    stats::note(Counter::Renewals);
                    hold.until = Some(lease_end(sent, due.sets));
                    hold.renew = None
                }
                Outcome::Renewed if r.lease != due.lease => {
                    // extendLock() ran meanwhile, on another connection: this renewal
                    // may have landed after it with the old lease. Set the new one now.
                    let renewed = lease_end(sent, due.sets);
                    hold.until = hold.until.map(|u| u.min(renewed));
                    r.due = done;
                }
                Outcome::Renewed => {
                    stats::note(Counter::Renewals);
                    hold.until = Some(lease_end(sent, due.sets));
                    r.due = done + table::interval(r.lease);
                }
                Outcome::Failed if hold.until.is_some_and(|u| Boot::now() >= u) => {
                    // Unconfirmed for a whole lease: Redis has let the key go by now.
                    hold.mark_lost(done);
                }
                Outcome::Failed => {
                    // It may have landed: a last renewal (cut by max_hold) shortens
                    // the lease the server keeps.
                    hold.cap(lease_end(sent, due.sets));
                    if let Some(r) = hold.renew.as_mut() {
                        r.due = done + retry_after(r.lease);
                    }
                }
            }
        }
        // Orphans (auto_release off, object gone) leave the table when renewal ends.
        table.holds.retain(|_, h| !(h.orphan && h.renew.is_none()));
        // Endpoints no lock is renewed on any more: close their connections.
        links.conns.retain(|id, _| {
            table.holds.values().any(|h| h.renew.is_some() && h.part.route().uses(id))
        });
    }
}

/// The watchdog's own connections, one per endpoint, and the endpoints that failed.
#[derive(Default)]
struct Links {
    conns: HashMap<Arc<str>, Connection>,
    down: HashMap<Arc<str>, Instant>,
}

impl Links {
    /// Sends every renewal of the batch, one pipeline per endpoint; endpoints that
    /// answered last time go first, so a dead one delays the others as little as can be.
    fn renew_all(&mut self, batch: &[Due]) -> Vec<Outcome> {
        let mut outcomes: Vec<Outcome> = batch.iter().map(|_| Outcome::Failed).collect();
        let mut groups: Vec<(&Arc<str>, Vec<usize>)> = Vec::new();
        for (i, due) in batch.iter().enumerate() {
            if let Route::Quorum(q) = due.part.route() {
                // A Redlock lease goes to all its nodes at once, and counts by majority.
                let mut outcome = Outcome::Failed;
                due.part.renew(&due.token, due.lease_ms.as_bytes(), &mut |call| {
                    outcome = match q.extend(self, call, due.sets) {
                        Ok(Extended::Yes) => Outcome::Renewed,
                        Ok(Extended::Lost) => Outcome::Lost,
                        Ok(Extended::No) | Err(_) => Outcome::Failed,
                    };
                });
                outcomes[i] = outcome;
                continue;
            }
            let id = due.endpoint.id();
            match groups.iter_mut().find(|(g, _)| *g == id) {
                Some((_, members)) => members.push(i),
                None => groups.push((id, vec![i])),
            }
        }
        groups.sort_by_key(|(id, _)| self.down.contains_key(*id));
        for (id, members) in groups {
            if self.down.get(id).is_some_and(|at| at.elapsed() < DOWN_PAUSE) {
                continue;
            }
            let ep = &batch[members[0]].endpoint;
            let replies = match self.conns.remove(id) {
                Some(conn) => Some(conn),
                None => pool::connect(ep).ok(),
            }
            .and_then(|mut conn| {
                let replies = send(&mut conn, batch, &members)?;
                self.conns.insert(id.clone(), conn);
                Some(replies)
            });
            match replies {
                Some(replies) => {
                    self.down.remove(id);
                    for (i, outcome) in members.into_iter().zip(replies) {
                        outcomes[i] = outcome;
                    }
                }
                // The connection is not trusted again; the next round reconnects.
                None => {
                    self.down.insert(id.clone(), Instant::now());
                }
            }
        }
        outcomes
    }
}

impl LinkSource for Links {
    fn take(&mut self, ep: &Endpoint, _budget: Duration) -> crate::error::Result<Connection> {
        match self.conns.remove(ep.id()) {
            Some(conn) => Ok(conn),
            None => pool::connect(ep),
        }
    }
    fn give(&mut self, ep: &Endpoint, conn: Connection) {
        let _ = conn.set_read_timeout(Some(ep.read_timeout()));
        self.conns.insert(ep.id().clone(), conn);
    }
}

/// One pipeline of renewals on `conn` (each hold's kind says how, `Part::renew`);
/// `None` when the connection failed. Calls that find the script missing from the
/// server's cache (a restart, `SCRIPT FLUSH`) are sent again one by one, by text,
/// which loads it: no `SCRIPT LOAD`, which an ACL may forbid.
///
/// A renewal the server may do by its own command (a lock held alone, `net::fast`)
/// goes in the pipeline as that command; where it did nothing (someone queued since,
/// or the server refused it), the script follows on its own.
fn send(conn: &mut Connection, batch: &[Due], members: &[usize]) -> Option<Vec<Outcome>> {
    let mut pipe = Vec::new();
    let mut fast = Vec::with_capacity(members.len());
    for &i in members {
        let due = &batch[i];
        let mut sent = false;
        due.part.renew(&due.token, due.lease_ms.as_bytes(), &mut |call| {
            sent = call.push_for(conn, &mut pipe)
        });
        fast.push(sent);
    }
    // Durable holds: after the renewals, one wait of each kind they ask for (`WAIT`
    // for the replicas' copies, `WAITAOF` for the disks'), the strictest of that kind,
    // covers them all (each counts this connection's writes up to it). Each hold is
    // judged by the reply of its own kind's wait.
    let asked = |aof: bool| {
        durable::strictest(
            members.iter().filter_map(|&i| batch[i].durable).filter(|d| d.aof == aof),
        )
    };
    let waits: Vec<Durable> = [asked(false), asked(true)].into_iter().flatten().collect();
    for d in &waits {
        durable::wait_call(d, |wait| wait.push(&mut pipe));
    }
    let mut replies = wire::pipeline(conn, &pipe, members.len() + waits.len()).ok()?;
    let acks: Vec<(Durable, Value)> =
        replies.split_off(members.len()).into_iter().zip(&waits).map(|(v, d)| (*d, v)).collect();
    let mut outcomes = Vec::with_capacity(members.len());
    for ((&i, reply), fast) in members.iter().zip(replies).zip(fast) {
        let due = &batch[i];
        let mut late = false;
        let reply = match reply.extract_error() {
            // A replica now (a failover): this connection must find the master again.
            Err(e) if e.code() == Some("READONLY") => return None,
            Ok(reply) if fast && Fast::renewed(&reply) => Ok(Value::Int(1)),
            // Not renewed by the server's command: the script decides, on its own.
            _ if fast => {
                let mut again = Ok(Value::Nil);
                due.part.renew(&due.token, due.lease_ms.as_bytes(), &mut |call| {
                    if let Some(args) = call.args() {
                        again = args.script().run(conn, args);
                    }
                });
                late = true;
                match again {
                    Err(e) if !matches!(e.kind(), ErrorKind::Server(_)) => return None,
                    other => other,
                }
            }
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                let mut again = Err(e);
                // The script itself, which loads it (a durable hold's renewal the server
                // may do by its own command too is pipelined as its script).
                due.part.renew(&due.token, due.lease_ms.as_bytes(), &mut |call| {
                    again = match call.args() {
                        Some(args) => args.script().run(conn, args),
                        None => call.run(conn),
                    }
                });
                // Sent after the wait: not acknowledged by it.
                late = true;
                match again {
                    Err(e) if !matches!(e.kind(), ErrorKind::Server(_)) => return None,
                    other => other,
                }
            }
            other => other,
        };
        outcomes.push(match reply.as_ref().ok().and_then(resp::int) {
            Some(1) => match &due.durable {
                None => Outcome::Renewed,
                // Sent after the wait (a script run on its own), or not acknowledged:
                // not renewed, and tried again soon.
                Some(d) => {
                    let ack = acks
                        .iter()
                        .find(|(w, _)| w.aof == d.aof)
                        .map(|(_, v)| durable::judge(v, d));
                    if !late && matches!(ack, Some(Some(Ok(())))) {
                        stats::note(Counter::DurableAcks);
                        Outcome::Renewed
                    } else {
                        stats::note(Counter::Undurable);
                        Outcome::Failed
                    }
                }
            },
            Some(_) => Outcome::Lost,
            // An error reply (OOM, READONLY, NOPERM), or no number: the lease is not
            // renewed, but the lock is not known to be lost either.
            None => Outcome::Failed,
        });
    }
    Some(outcomes)
}

/// After a failed renewal, the next try comes sooner than the normal interval, so
/// that a short network blip costs nothing.
fn retry_after(lease: Duration) -> Duration {
    (lease / 12).clamp(Duration::from_millis(5), Duration::from_millis(250))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_come_well_inside_the_lease() {
        assert_eq!(retry_after(Duration::from_millis(30)), Duration::from_millis(5));
        assert!((Duration::from_millis(83)..Duration::from_millis(84))
            .contains(&retry_after(Duration::from_secs(1))));
        assert_eq!(retry_after(Duration::from_secs(60)), Duration::from_millis(250));
        assert_eq!(table::interval(Duration::from_millis(1)), Duration::from_millis(1));
        assert_eq!(table::interval(Duration::from_secs(3)), Duration::from_secs(1));
    }
}
