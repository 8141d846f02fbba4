//! `inspect()`: what Redis holds for a lock right now, in one read-only step: its
//! state, lease, readers, live waiters, fencing counter, whether this object holds
//! it, and who does (`owner_info`). Tokens are never part of it: they are bearer
//! secrets.

use crate::error::Result;
use crate::keys::LockKeys;
use crate::kinds::lock::scripts::Inspect;
use crate::net::call::Call;
use crate::net::resp;
use crate::owner::{self, Owner};
use crate::topology::route::Route;
use redis::Value;

/// What a lock is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Free,
    /// Held by one writer.
    Write,
    /// Held by readers.
    Read,
}

impl State {
    /// The name `inspect()` gives it.
    pub fn name(self) -> &'static str {
        match self {
            State::Free => "free",
            State::Write => "write",
            State::Read => "read",
        }
    }
}

/// One look at a lock (`Lock::inspect`).
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    pub state: State,
    /// Seconds of lease left: `None` when free, infinite without expiry.
    pub ttl: Option<f64>,
    /// Live readers (0 unless `Read`).
    pub readers: u64,
    /// Queued waiters that still listen.
    pub waiters: u64,
    /// The last fencing number issued for this name.
    pub fence: Option<i64>,
    /// Whether this object's token holds it now.
    pub mine: bool,
    /// Who holds it, one entry per holder; `None` where no record was kept.
    pub owners: Vec<Option<Owner>>,
}

/// What Redis holds for the lock `keys` on `route` now, `mine` telling whether `token`
/// holds it (`Lock::inspect`, and each key of a MultiLock).
pub fn inspect_key(route: &Route, keys: &LockKeys, token: &[u8]) -> Result<Inspection> {
    if route.lease_only() {
        return inspect_quorum(route, keys, token);
    }
    let call = Inspect {
        lock: &keys.lock,
        queue: &keys.queue,
        fence: &keys.fence,
        readers: &keys.readers,
        owner: &keys.owner,
        token,
    };
    let reply = route.ask(&Call::Script(&call))?;
    parse(&reply).ok_or_else(|| route.unexpected("lock/inspect", &reply))
}

fn inspect_quorum(route: &Route, keys: &LockKeys, token: &[u8]) -> Result<Inspection> {
    let Some(pttl) = route.pttl(&keys.lock)? else {
        return Ok(Inspection {
            state: State::Free,
            ttl: None,
            readers: 0,
            waiters: 0,
            fence: None,
            mine: false,
            owners: Vec::new(),
        });
    };
    let holder = route.ask(&Call::Command(&[b"GET", &keys.lock]))?;
    let mine = !token.is_empty() && matches!(&holder, Value::BulkString(h) if h == token);
    let ttl = pttl.map_or(f64::INFINITY, |ms| ms as f64 / 1000.0);
    Ok(Inspection {
        state: State::Write,
        ttl: Some(ttl),
        readers: 0,
        waiters: 0,
        fence: None,
        mine,
        owners: vec![None],
    })
}

/// `INSPECT`'s reply, or `None` for any other shape.
fn parse(reply: &Value) -> Option<Inspection> {
    let Value::Array(items) = reply else { return None };
    let [state, pttl, readers, waiters, fence, mine, records] = &items[..] else { return None };
    let state = match state {
        Value::BulkString(s) if s == b"write" => State::Write,
        Value::BulkString(s) if s == b"read" => State::Read,
        Value::BulkString(s) if s == b"free" => State::Free,
        _ => return None,
    };
    let pttl = resp::int(pttl)?;
    let fence = match fence {
        Value::BulkString(f) if f.is_empty() => None,
        Value::BulkString(f) => std::str::from_utf8(f).ok()?.parse().ok(),
        _ => return None,
    };
    let owners = match records {
        Value::Array(list) => list.iter().map(|r| match r {
            Value::BulkString(raw) => owner::parse(raw),
            _ => None,
        }),
        _ => return None,
    }
    .collect();
    Some(Inspection {
        state,
        ttl: match pttl {
            -2 => None,
            ms if ms < 0 => Some(f64::INFINITY),
            ms => Some(ms as f64 / 1000.0),
        },
        readers: u64::try_from(resp::int(readers)?).ok()?,
        waiters: u64::try_from(resp::int(waiters)?).ok()?,
        fence,
        mine: resp::int(mine)? == 1,
        owners,
    })
}
