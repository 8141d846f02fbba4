//! A MultiLock's slot group as a part of its hold (the keys one script takes at once),
//! and the MultiLock as a kind of hold: its scripts, run on one group at a time.

use crate::error::Result;
use crate::hold::table::Part;
use crate::keys::LockKeys;
use crate::kinds::core::entry::{self, Mark};
use crate::kinds::core::waiting::{self, Fences, Numbers, Try};
use crate::kinds::core::{Attempt, Common, Kind, QUEUE_SLACK};
use crate::kinds::multi::scripts::{Acquire, Cancel, Release, Renew, Take};
use crate::net::call::{Call, Owned};
use crate::net::pool::Retry;
use crate::net::resp;
use crate::net::wire::Watch;
use crate::topology::route::Route;
use redis::Value;
use std::sync::Arc;
use std::time::Instant;

/// Keys that one script takes at once: every key, or on a Cluster the keys of one
/// slot (a slot group).
#[derive(Debug)]
pub(crate) struct Group {
    pub route: Route,
    pub keys: Vec<Arc<LockKeys>>,
    /// Each key's mode, a letter a key as the scripts take them: `w` taken alone, `r`
    /// a read share.
    pub modes: String,
    /// The "m" entry's key list (`kinds::core::entry::Mark::Group`).
    pub list: Vec<u8>,
}

impl Group {
    /// Whether key `i` of the group is taken as a read share.
    pub fn is_read(&self, i: usize) -> bool {
        self.modes.as_bytes().get(i) == Some(&b'r')
    }

    /// The release of every key of the group that `token` holds, each handed over.
    pub fn release_call<'a>(&'a self, token: &'a [u8]) -> Release<'a> {
        Release { keys: &self.keys, token, modes: self.modes.as_bytes() }
    }
}

impl Part for Group {
    fn route(&self) -> &Route {
        &self.route
    }

    fn key(&self) -> &[u8] {
        &self.keys[0].lock
    }

    fn covers(&self, lock: &[u8]) -> bool {
        self.keys.iter().any(|k| k.lock == lock)
    }

    fn renew<'a>(&'a self, token: &'a [u8], lease_ms: &'a [u8]) -> Owned<'a> {
        Owned::script(Renew {
            keys: &self.keys,
            token,
            lease: lease_ms,
            modes: self.modes.as_bytes(),
        })
    }

    fn release<'a>(&'a self, token: &'a [u8]) -> Option<Owned<'a>> {
        Some(Owned::script(self.release_call(token)))
    }
}

/// A MultiLock's own state, beside the core's.
pub(crate) struct GroupsKind {
    /// Whether the acquisition in progress issues fencing tokens.
    pub fence: bool,
    /// Whether each key, in the MultiLock's order, is taken as a read share.
    pub reads: Vec<bool>,
}

impl GroupsKind {
    /// `{1, f1..fn}`: every key of `group` taken, with the numbers when they were
    /// asked for; anything else as a `Lock`'s reply.
    fn read(&self, group: &Group, reply: &Value) -> Result<Try> {
        if let Value::Array(items) = reply {
            if resp::int(items.first().unwrap_or(&Value::Nil)) == Some(1)
                && items.len() == group.keys.len() + 1
            {
                let numbers = items[1..].iter().map(resp::int).collect::<Option<Vec<i64>>>();
                let numbers =
                    numbers.ok_or_else(|| group.route.unexpected("multi/acquire", reply))?;
                return Ok(Try::Acquired(self.fence.then(|| Numbers::of(numbers))));
            }
        }
        match waiting::reply_parts(reply) {
            Some((0 | 2 | 3, pttl, queued, clock)) => Ok(Try::busy(pttl, queued, clock)),
            Some((4, _, _, _)) => Ok(Try::Unsure),
            _ => Err(group.route.unexpected("multi/acquire", reply)),
        }
    }
}

impl Kind for GroupsKind {
    type Part = Group;

    fn try_part(&self, c: &Common, group: &Group, a: &Attempt<'_>) -> Result<Try> {
        let life = a
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()) + QUEUE_SLACK)
            .unwrap_or(QUEUE_SLACK)
            .as_millis()
            .to_string();
        let reply = group.route.call(Retry::ToSettle, |run, settling| {
            run(&Call::Script(&Acquire {
                keys: &group.keys,
                token: a.token,
                lease: c.terms.ttl_arg.as_bytes(),
                sent: a.sent,
                life: life.as_bytes(),
                info: &c.record,
                modes: group.modes.as_bytes(),
                fair: c.terms.fair,
                again: a.again || settling,
                fenced: self.fence,
                chosen: c.caller_token,
            }))
        })?;
        self.read(group, &reply)
    }

    /// On a Redlock quorum, polling is the only way to wait (no queue there).
    fn try_first(&self, c: &Common, group: &Group, token: &[u8]) -> Result<Try> {
        if group.route.lease_only() {
            return self.try_poll(c, group, token, Instant::now());
        }
        self.try_part(c, group, &Attempt { token, sent: b"", again: false, deadline: None })
    }

    /// One try that queues nothing: on a Redlock quorum, `take` on every node, held
    /// when a majority took every key within the lease's validity (otherwise undone
    /// everywhere); elsewhere a try of the acquire script without an entry.
    fn try_poll(&self, c: &Common, group: &Group, token: &[u8], deadline: Instant) -> Result<Try> {
        let undo = group.release_call(token);
        let take = Take { keys: &group.keys, token, lease: c.terms.ttl_arg.as_bytes() };
        match group.route.take_on_quorum(
            &Call::Script(&take),
            &Value::Int(1),
            &group.keys[0].lock,
            token,
            c.terms.lease,
            &Call::Script(&undo),
        )? {
            Some(true) => Ok(Try::Acquired(None)),
            Some(false) => Ok(Try::busy_unqueued()),
            None => self.try_part(
                c,
                group,
                &Attempt { token, sent: b"", again: true, deadline: Some(deadline) },
            ),
        }
    }

    fn entry(&self, c: &Common, group: &Group, token: &[u8], channel: &str) -> Vec<u8> {
        entry::entry(&c.terms.ttl_arg, Mark::Group(self.fence), channel, &group.list, token)
    }

    fn cancel(
        &self,
        c: &Common,
        group: &Group,
        token: &[u8],
        entry: &[u8],
    ) -> Result<Option<Fences>> {
        let cancel = Cancel {
            keys: &group.keys,
            token,
            entry,
            lease: c.terms.ttl_arg.as_bytes(),
            modes: group.modes.as_bytes(),
            chosen: c.caller_token,
        };
        let reply = group.route.ask(&Call::Script(&cancel))?;
        match &reply {
            Value::Array(items)
                if items.len() == group.keys.len() + 1 && resp::int(&items[0]) == Some(1) =>
            {
                let numbers = items[1..].iter().map(resp::int).collect::<Option<Vec<i64>>>();
                Ok(Some(numbers.filter(|_| self.fence).map(Numbers::of)))
            }
            Value::Array(items) if items.len() == 1 => Ok(None),
            _ => Err(group.route.unexpected("multi/cancel", &reply)),
        }
    }

    fn release(&mut self, _c: &Common, group: &Group, token: &[u8], _own: bool) -> Result<u64> {
        let reply = group.route.ask(&Call::Script(&group.release_call(token)))?;
        let held =
            resp::int(&reply).ok_or_else(|| group.route.unexpected("multi/release", &reply))?;
        Ok(u64::try_from(held).unwrap_or(0))
    }

    fn fire_release(
        &mut self,
        _c: &Common,
        group: &Group,
        token: &[u8],
        watch: Watch,
    ) -> Result<()> {
        group.route.fire(&Call::Script(&group.release_call(token)), Some(watch))
    }

    fn keys_in(&self, group: &Group) -> u64 {
        group.keys.len() as u64
    }

    fn releases_lost(&self) -> bool {
        true
    }

    /// Fencing tokens stand only when every key taken alone has a number.
    fn acquiring(&mut self, c: &mut Common, _parts: &[Arc<Group>], _token: &[u8], _at: u64) {
        let reads = &self.reads;
        c.fences = c.fences.take().filter(|f| {
            f.as_slice().len() == reads.len()
                && f.as_slice().iter().zip(reads).all(|(&n, &r)| r || n > 0)
        });
        c.ever_held = true;
    }

    fn maybe_taken(&mut self, c: &mut Common) {
        c.ever_held = true;
    }
}
