//! Token-checked renewals, sent: the one way every renewal, extension and durable
//! check reaches a server, whoever asks (an object through `Route`, the watchdog for
//! many holds at once) and whatever the topology. On one server the renewals of a
//! connection go in one pipeline, a durable hold's acknowledgement (`WAIT`,
//! `WAITAOF`) after them; a quorum's go to every node at once (`Quorum::extend`).
//! What came back is a `Landed`.

use crate::error::{LockError, Result};
use crate::net::call::{self, Call};
use crate::net::pool::{self, Endpoint, Retry};
use crate::net::wire::Connection;
use crate::stats::{self, Counter};
use crate::terms::Durable;
use crate::topology::durable;
use crate::topology::landed::Landed;
use crate::topology::redlock::{Links, Pooled};
use crate::topology::route::Route;
use redis::{ErrorKind, RedisError, RedisResult};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One token-checked renewal (a script answering 1 when renewed, 0 when the token
/// no longer holds what it held) to send where `route` keeps it.
pub struct Renewing<'a> {
    pub route: &'a Route,
    pub call: Call<'a>,
    /// The lease it sets, for a quorum's validity.
    pub lease: Duration,
    /// A durable hold: it counts once acknowledged as this asks.
    pub durable: Option<Durable>,
}

/// Sends `batch`, renewals of holds on one server, in one pipeline on `conn`, with one
/// wait of each kind its durable holds ask for after them (`WAIT` for the replicas'
/// copies, `WAITAOF` for the disks'): the strictest of that kind covers them all, as
/// each counts this connection's writes before it. Each renewal is judged by its own
/// reply and its own kind's wait. `Err`: the connection failed, or its server is a
/// replica now (READONLY).
pub(crate) fn on_conn(
    conn: &mut Connection,
    batch: &[&Renewing<'_>],
) -> RedisResult<Vec<RedisResult<Landed>>> {
    let asked = |aof: bool| {
        durable::strictest(batch.iter().filter_map(|r| r.durable).filter(|d| d.aof == aof))
    };
    let waits: Vec<Durable> = [asked(false), asked(true)].into_iter().flatten().collect();
    let calls: Vec<Call<'_>> = batch.iter().map(|r| r.call).collect();
    // The debug trace's clock is read only when the trace is on (`REDIS_LOCK_TRACE`).
    let traced = !waits.is_empty() && crate::trace::on();
    let t0 = if traced { crate::trace::now_ns() } else { 0 };
    // The acknowledgement's own wait is not the server's slowness: its reply may take
    // that long more than `read_timeout`.
    let patient = waits.iter().map(|d| d.timeout).max().zip(batch.first()).map(|(wait, r)| {
        let base = r.route.node().read_timeout();
        (base, base.saturating_add(wait))
    });
    if let Some((_, longer)) = patient {
        conn.set_read_timeout(Some(longer))?;
    }
    let sent = durable::wait_calls(&waits, |tail| call::pipeline(conn, &calls, tail));
    if let (Some((base, _)), Ok(_)) = (patient, &sent) {
        conn.set_read_timeout(Some(base))?;
    }
    if traced {
        trace_check(conn, batch.len(), &waits, &sent, t0);
    }
    let (replies, acks) = sent?;
    let mut out = Vec::with_capacity(batch.len());
    for (r, reply) in batch.iter().zip(replies) {
        out.push(reply.and_then(|reply| {
            let landed = Landed::of_reply(&reply)
                .ok_or_else(|| unexpected(format!("renewal script: {reply:?}")))?;
            let Some(d) = r.durable.filter(|_| landed == Landed::Yes) else { return Ok(landed) };
            let ack = waits.iter().zip(&acks).find(|(w, _)| w.aof == d.aof).map(|(_, a)| a);
            match ack {
                Some(Ok(v)) => match durable::judge(v, &d) {
                    Some(Ok(())) => Ok(Landed::Yes),
                    Some(Err(short)) => Ok(Landed::Unsure(short)),
                    None => Err(unexpected(format!("WAIT: {v:?}"))),
                },
                Some(Err(e)) => Err(e.clone()),
                None => Err(unexpected("no WAIT".to_string())),
            }
        }));
    }
    Ok(out)
}

/// The debug trace of one durable check (`crate::trace`, `REDIS_LOCK_TRACE`): the
/// server it reached (the connection's peer and serial), what the renewals and the
/// wait answered, how long the round trip took.
fn trace_check(
    conn: &Connection,
    renewals: usize,
    waits: &[Durable],
    sent: &RedisResult<(call::Replies, call::Replies)>,
    t0: u64,
) {
    use crate::trace::json;
    let wait: Vec<String> = waits
        .iter()
        .map(|d| {
            format!(
                "{} {} {}",
                if d.aof { "WAITAOF 1" } else { "WAIT" },
                d.replicas,
                d.timeout.as_millis()
            )
        })
        .collect();
    let what = match sent {
        Ok((replies, acks)) => {
            let renewed: Vec<String> = replies
                .iter()
                .map(|r| match r {
                    Ok(v) => json(&format!("{v:?}")),
                    Err(e) => json(&format!("error: {e}")),
                })
                .collect();
            let acks: Vec<String> = acks
                .iter()
                .map(|r| match r {
                    Ok(redis::Value::Int(n)) => n.to_string(),
                    Ok(v) => json(&format!("{v:?}")),
                    Err(e) => json(&format!("error: {e}")),
                })
                .collect();
            format!("\"renewed\":[{}],\"acks\":[{}]", renewed.join(","), acks.join(","))
        }
        Err(e) => format!("\"error\":{}", json(&e.to_string())),
    };
    crate::trace::write(
        "durable-check",
        t0,
        &format!(
            "\"peer\":{},\"conn\":{},\"renewals\":{renewals},\"wait\":{},{what}",
            json(&crate::trace::peer(conn.fd())),
            conn.serial(),
            json(&wait.join("; "))
        ),
    );
}

impl Route {
    /// Runs the token-checked renewal `call` that sets `lease`, from a request's thread.
    /// On a quorum, `Yes` needs a majority within the validity the lease leaves.
    pub fn renew(&self, call: &Call<'_>, lease: Duration) -> Result<Landed> {
        self.renew_as(&Renewing { route: self, call: *call, lease, durable: None }, Duration::ZERO)
    }

    /// Makes a hold durable (`Durable`): `prime`, its token-checked renewal (a write of
    /// this connection's own, which is all `WAIT` counts: a hold handed over was
    /// written by the releaser's), then `WAIT` (`WAITAOF` with `aof`), in one round
    /// trip on one connection. `Unsure` says what acknowledged it, for the message. A
    /// quorum keeps no replicas: nothing to wait for. Not acknowledged in time while
    /// the master has the replicas asked for online, it waits again, up to `patience`
    /// more (`ride`).
    pub fn confirm(&self, prime: &Call<'_>, d: &Durable, patience: Duration) -> Result<Landed> {
        if self.lease_only() {
            return Ok(Landed::Yes);
        }
        let check = Renewing { route: self, call: *prime, lease: d.timeout, durable: Some(*d) };
        self.renew_as(&check, patience)
            .map_err(|e| match e {
                LockError::Server { addr, cause }
                    if d.aof && cause.contains("unknown command") && cause.contains("WAITAOF") =>
                {
                    LockError::Server {
                        addr,
                        cause: format!("durable_aof needs WAITAOF, which Redis has from 7.2 (and Valkey from 8.0): {cause}"),
                    }
                }
                other => other,
            })
    }

    /// A durable check not acknowledged on a master the sentinels no longer name
    /// (`Endpoint::replaced`) drops the connection, so that the next command (the
    /// retry here, else the caller's next try) reaches the master they name.
    fn renew_as(&self, r: &Renewing<'_>, patience: Duration) -> Result<Landed> {
        if let Route::Quorum(q) = self {
            return q.extend(&mut Pooled, &r.call, r.lease);
        }
        let mut replaced = None;
        let landed = self.on_server(Retry::IfStale, |conn, _| {
            let landed = on_conn(conn, &[r])?
                .pop()
                .unwrap_or_else(|| Err(unexpected("no reply".to_string())))?;
            match landed {
                Landed::Unsure(why) if replaced.is_none() && self.node().replaced(conn) => {
                    let on = conn.named().unwrap_or("?");
                    replaced =
                        Some(format!("{why}, on {on}, a master the sentinels no longer name"));
                    Err(RedisError::from((ErrorKind::Client, "a replaced master", on.to_string())))
                }
                Landed::Unsure(why) => match r.durable {
                    Some(d) if !patience.is_zero() => {
                        ride(conn, &d, patience, why, self.node().read_timeout())
                    }
                    _ => Ok(Landed::Unsure(why)),
                },
                landed => Ok(landed),
            }
        });
        match (landed, replaced) {
            // Not retried, or the retry found no master yet: not acknowledged, and the
            // caller's next try finds the master the sentinels name.
            (Err(_), Some(why)) => Ok(Landed::Unsure(why)),
            (landed, _) => landed,
        }
    }
}

/// A durable check not acknowledged in time on a master that lists the replicas it
/// asks for as online (`ROLE` lists only those: not one in a full sync, nor one gone):
/// they are slow (a disk that syncs every write, a busy machine), not missing, so the
/// same write is waited for again, up to `patience` in all. A master short of them
/// (cut off, its replicas resyncing) is not waited on: the caller undoes the hold, so
/// that it blocks nobody meanwhile, and tries again.
fn ride(
    conn: &mut Connection,
    d: &Durable,
    patience: Duration,
    mut why: String,
    read_timeout: Duration,
) -> RedisResult<Landed> {
    let until = Instant::now() + patience;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let online = online_replicas(conn)?;
        if online < i64::from(d.replicas) {
            return Ok(Landed::Unsure(format!("{why}; {online} replicas online")));
        }
        if left.is_zero() {
            return Ok(Landed::Slow(why));
        }
        let again = Durable { timeout: d.timeout.min(left), ..*d };
        conn.set_read_timeout(Some(read_timeout.saturating_add(again.timeout)))?;
        let (_, acks) = durable::wait_calls(&[again], |tail| call::pipeline(conn, &[], tail))?;
        conn.set_read_timeout(Some(read_timeout))?;
        let ack = acks.into_iter().next().unwrap_or_else(|| Err(unexpected("no WAIT".into())))?;
        match durable::judge(&ack, &again) {
            Some(Ok(())) => return Ok(Landed::Yes),
            Some(Err(short)) => why = short,
            None => return Err(unexpected(format!("WAIT: {ack:?}"))),
        }
    }
}

/// How many replicas the connection's server lists as online (`ROLE`); 0 when it is
/// not a master.
fn online_replicas(conn: &mut Connection) -> RedisResult<i64> {
    use redis::Value;
    match crate::net::wire::request(conn, &[b"ROLE"])? {
        Value::Array(items) => match (items.first(), items.get(2)) {
            (Some(Value::BulkString(role)), Some(Value::Array(replicas))) if role == b"master" => {
                Ok(i64::try_from(replicas.len()).unwrap_or(i64::MAX))
            }
            (Some(Value::BulkString(_)), _) => Ok(0),
            _ => Err(unexpected(format!("ROLE: {items:?}"))),
        },
        other => Err(unexpected(format!("ROLE: {other:?}"))),
    }
}

/// A reply of a shape the call never gives: the server broke the protocol.
fn unexpected(what: String) -> RedisError {
    RedisError::from((ErrorKind::UnexpectedReturnType, "unexpected reply", what))
}

/// After a connection failure, an endpoint is left alone this long, so that one dead
/// server does not cost every round a connect timeout.
const DOWN_PAUSE: Duration = Duration::from_millis(100);

/// A renewer with connections of its own, one per endpoint (the watchdog's: it must
/// never use a request's, which may be in use, nor lock the registry, whose mutex a
/// fork could catch held), and the endpoints that failed lately.
#[derive(Default)]
pub struct Renewer {
    conns: HashMap<Arc<str>, Connection>,
    down: HashMap<Arc<str>, Instant>,
}

impl Renewer {
    /// Sends every renewal of `batch`: one pipeline per endpoint, endpoints that
    /// answered last time first, so that a dead one delays the others as little as can
    /// be; a quorum's to all its nodes. A renewal without an answer is `Unsure`.
    pub fn renew_all(&mut self, batch: &[Renewing<'_>]) -> Vec<Landed> {
        let mut out: Vec<Landed> = batch.iter().map(|_| Landed::Unsure(String::new())).collect();
        let mut groups: Vec<(Arc<Endpoint>, Vec<usize>)> = Vec::new();
        for (i, r) in batch.iter().enumerate() {
            if let Route::Quorum(q) = r.route {
                out[i] = match q.extend(self, &r.call, r.lease) {
                    Ok(landed) => landed,
                    Err(e) => Landed::Unsure(e.to_string()),
                };
                continue;
            }
            let ep = r.route.node();
            match groups.iter_mut().find(|(g, _)| g.id() == ep.id()) {
                Some((_, members)) => members.push(i),
                None => groups.push((ep, vec![i])),
            }
        }
        groups.sort_by_key(|(ep, _)| self.down.contains_key(ep.id()));
        for (ep, members) in groups {
            let id = ep.id();
            if self.down.get(id).is_some_and(|at| at.elapsed() < DOWN_PAUSE) {
                continue;
            }
            let items: Vec<&Renewing<'_>> = members.iter().map(|&i| &batch[i]).collect();
            let replies = match self.conns.remove(id) {
                Some(conn) => Some(conn),
                None => pool::connect(&ep).ok(),
            }
            .and_then(|mut conn| {
                let replies = on_conn(&mut conn, &items).ok()?;
                // A durable renewal not acknowledged on a master the sentinels replaced:
                // the next round reconnects to the one they name.
                let unsure = replies.iter().any(|r| matches!(r, Ok(Landed::Unsure(_))));
                if !(unsure && ep.replaced(&conn)) {
                    self.conns.insert(id.clone(), conn);
                }
                Some(replies)
            });
            match replies {
                Some(replies) => {
                    self.down.remove(id);
                    for (i, reply) in members.into_iter().zip(replies) {
                        if batch[i].durable.is_some() {
                            match &reply {
                                Ok(Landed::Yes) => stats::note(Counter::DurableAcks),
                                Ok(Landed::Unsure(_)) => stats::note(Counter::Undurable),
                                _ => {}
                            }
                        }
                        out[i] = reply.unwrap_or_else(|e| Landed::Unsure(e.to_string()));
                    }
                }
                // The connection is not trusted again; the next round reconnects.
                None => {
                    self.down.insert(id.clone(), Instant::now());
                }
            }
        }
        out
    }

    /// Closes the connections of the endpoints `used` says no renewal goes to now.
    pub fn keep(&mut self, used: impl Fn(&Arc<str>) -> bool) {
        self.conns.retain(|id, _| used(id));
    }

    /// Nothing left to renew: no connection is kept open for nothing, and no failure
    /// remembered.
    pub fn clear(&mut self) {
        self.conns.clear();
        self.down.clear();
    }
}

impl Links for Renewer {
    fn check_out(&mut self, ep: &Endpoint, _budget: Duration) -> Result<Connection> {
        match self.conns.remove(ep.id()) {
            Some(conn) => Ok(conn),
            None => pool::connect(ep),
        }
    }
    fn check_in(&mut self, ep: &Endpoint, conn: Connection) {
        let _ = conn.set_read_timeout(Some(ep.read_timeout()));
        self.conns.insert(ep.id().clone(), conn);
    }
}
