//! A MultiLock: several keys held at once under one token, all of them or none.
//!
//! On one server, a Sentinel master, or one Cluster slot, one script takes every key
//! or none (`lua/multi/acquire.lua`): no other client ever sees some of them taken
//! and not the others. Each key is an ordinary lock key, holding the token, with the
//! same queue and fencing counter as a `Lock` of that name: a `Lock` holding a key
//! keeps a MultiLock that wants it waiting, and the other way round.
//!
//! A waiter queues one entry ("m", naming every key with its mode, queue, counter
//! and readers) in the queue of the first key, in its order, that is busy. The
//! release of that key (a `Lock`'s or a MultiLock's, through `grant_multi`) takes
//! every key for it when the others are free too, or moves the entry to the front
//! of the queue of the next busy one. Its place is kept in each queue in turn, and it is woken by those
//! releases only: no polling, and no herd. Every MultiLock orders its keys the same
//! way (by name), so two never wait on each other in a circle.
//!
//! On a Cluster, keys in several slots are taken slot group by slot group, in one
//! order (slot, then name), one script per group. A group found busy ends the
//! round: the groups taken in it are given back before the wait for that group
//! starts, so a MultiLock never waits while it holds anything, and two never wait
//! on each other in a circle. Another client may see some groups held then, for
//! the round's few round trips; within a group, never a subset.
//!
//! On a Redlock quorum (`servers`) each node runs `lua/multi/take.lua`, every key or
//! none, with no queue: held when a majority took every key within the lease's
//! validity, undone everywhere otherwise, and waiters poll with back-off, as a
//! `Lock`'s do there.
//!
//! Keys named in the `read` option are taken as read shares, as `Lock`'s readers
//! are: beside other readers, behind any waiter queued for the key.
//!
//! A MultiLock's release lets every key go before it hands any over, so that a
//! MultiLock waiting for the same keys finds them all free at its turn.
//!
//! Once held, each key is a hold in the process's table (`hold::table`), like a
//! `Lock`'s: the watchdog renews each one, the object's end and request end release
//! them, and a key found taken marks the whole MultiLock lost.

use crate::clock::Boot;
use crate::config::Settings;
use crate::error::{LockError, Result};
use crate::hold::claim::Claim;
use crate::hold::table::{Hold, Kind, Owner, Renewal};
use crate::keys::{self, LockKeys};
use crate::kinds::lua;
use crate::net::call::Call;
use crate::net::wire::Watch;
use crate::net::pool::Retry;
use crate::net::resp;
use crate::net::script::Script;
use crate::terms::{self, Terms};
use crate::token::{self, Token};
use crate::topology::route::{Extended, Route};
use crate::wait::backoff::Backoff;
use crate::wait::waiting::{self, Try, Waited, Waiter};
use redis::{ErrorKind, RedisError, Value};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// Takes every key or none, or queues. See `lua/multi/acquire.lua`.
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| lua::script("multi/acquire"));
/// Gives up every key the token holds, each handed over. See `lua/multi/release.lua`.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| lua::script("multi/release"));
/// Leaves the queue when a wait gives up. See `lua/multi/cancel.lua`.
pub static CANCEL: LazyLock<Script> = LazyLock::new(|| lua::script("multi/cancel"));
/// Sets every key's lease, if the token holds them all. See `lua/multi/renew.lua`.
pub static RENEW: LazyLock<Script> = LazyLock::new(|| lua::script("multi/renew"));
/// Fencing tokens for a hold taken without them. See `lua/multi/fence.lua`.
pub static FENCE: LazyLock<Script> = LazyLock::new(|| lua::script("multi/fence"));
/// Whether a token holds every key, and each key's lease. See `lua/multi/state.lua`.
pub static STATE: LazyLock<Script> = LazyLock::new(|| lua::script("multi/state"));
/// A Redlock node's part: every key or none, no queue. See `lua/multi/take.lua`.
pub static TAKE: LazyLock<Script> = LazyLock::new(|| lua::script("multi/take"));

/// Set once this process has asked a MultiLock for its fencing tokens: from then on
/// its acquisitions issue them in the same step (as `Lock` does).
static EAGER_FENCING: AtomicBool = AtomicBool::new(false);

/// The queue outlives the longest wait in it by this much (as a `Lock`'s).
const QUEUE_SLACK: Duration = Duration::from_secs(5);

/// Keys that one script takes at once: every key, or on a Cluster the keys of one
/// slot (a slot group).
struct Group {
    route: Route,
    keys: Vec<Arc<LockKeys>>,
    /// Each key's mode, a letter a key as the scripts take them: `w` taken alone, `r`
    /// a read share.
    modes: String,
    /// Where its keys start in the MultiLock's order.
    first: usize,
    /// The "m" entry's key list: for each key its mode, then `<length>:<name>` for its
    /// lock, queue, fencing counter and readers.
    blob: Vec<u8>,
}

impl Group {
    fn is_read(&self, i: usize) -> bool {
        self.modes.as_bytes().get(i) == Some(&b'r')
    }

    /// Each key's lock and readers, as `renew` and `state` take them.
    fn locks_and_readers(&self) -> Vec<&[u8]> {
        self.keys.iter().flat_map(|k| [&k.lock[..], &k.readers[..]]).collect()
    }

    /// Every key's name, queue, fencing counter, readers and owner records, as the
    /// scripts take them.
    fn all_keys(&self) -> Vec<&[u8]> {
        self.keys.iter().flat_map(|k| [&k.lock[..], &k.queue[..], &k.fence[..], &k.readers[..], &k.owner[..]]).collect()
    }

    fn locks(&self) -> Vec<&[u8]> {
        self.keys.iter().map(|k| &k.lock[..]).collect()
    }

    /// Releases every key of the group that `token` holds, each handed over;
    /// answers how many it held.
    fn release(&self, token: &[u8]) -> Result<i64> {
        let all = self.all_keys();
        let reply = self.route.ask(&Call::Script(&RELEASE, &all, &[token, self.modes.as_bytes()]))?;
        resp::int(&reply).ok_or_else(|| bad_reply(&self.route, "release", &reply))
    }
}

/// Several keys, held all at once under one token.
pub struct MultiLock {
    /// The keys as given, deduplicated, in the order they are taken: by name, and on
    /// a Cluster by slot, then name.
    names: Vec<Vec<u8>>,
    /// One group, or one per slot on a Cluster, in that order.
    groups: Vec<Group>,
    terms: Terms,
    fencing: bool,
    /// One claim per key, in the keys' order: each key is a hold in the table.
    claims: Vec<Claim>,
    /// The fencing tokens of the last acquisition, in the keys' order, once issued.
    fences: Option<Vec<i64>>,
    ever_held: bool,
    /// The connection of each group that `synchronized()`'s hold was taken (or last
    /// extended) on: its release goes unawaited only while they are all the same
    /// ones, unclosed (see `Lock::finish`).
    serials: Vec<Option<u64>>,
    /// Record who holds each key (`owner_info`; never on a Redlock quorum).
    owner_info: bool,
    /// Whether the acquisition in progress takes a token the caller chose.
    caller_token: bool,
    /// The record of the acquisition in progress (`owner::record`), empty when none is kept.
    record: Vec<u8>,
}

/// What a try or a wait took of one group: its fencing tokens (when issued) and when
/// its lease ends at the earliest.
type Taken = (Option<Vec<i64>>, waiting::Until);

impl MultiLock {
    /// Validates everything up front, so that a bad argument never reaches Redis.
    /// `names` are the keys as given (without the prefix); `read` those of them taken
    /// as read shares.
    pub fn new(names: Vec<Vec<u8>>, read: Vec<Vec<u8>>, time_out: f64, lock_out: f64, settings: &Settings) -> Result<Self> {
        if names.is_empty() {
            return Err(LockError::InvalidValue("MultiLock::__construct(): Argument #1 ($keys) must not be empty".to_string()));
        }
        if names.iter().any(Vec::is_empty) {
            return Err(LockError::InvalidValue("MultiLock::__construct(): Argument #1 ($keys) must not contain an empty key".to_string()));
        }
        let wait = terms::time_out(time_out)?;
        let ttl_ms = terms::lock_out_ms(lock_out)?;
        settings.check()?;
        if !settings.servers.is_empty() && ttl_ms == terms::NO_EXPIRY {
            return Err(LockError::InvalidValue(
                "MultiLock::__construct(): Argument #3 ($lockOut) must be finite with Redlock (\"servers\"): its safety rests on the lease".to_string(),
            ));
        }
        if settings.fair && !settings.servers.is_empty() {
            return Err(LockError::InvalidValue("option \"fair\" needs a queue, which Redlock (\"servers\") does not keep".to_string()));
        }
        if let Some(stray) = read.iter().find(|r| !names.contains(r)) {
            return Err(LockError::InvalidValue(format!(
                "MultiLock::__construct(): option \"read\" must name keys of Argument #1 ($keys); {:?} is not one",
                String::from_utf8_lossy(stray)
            )));
        }
        if !read.is_empty() && !settings.servers.is_empty() {
            return Err(LockError::InvalidValue(
                "MultiLock::__construct(): option \"read\": shared locks need one server, Sentinel or Cluster; Redlock (\"servers\") keeps no readers' leases on a majority".to_string(),
            ));
        }
        let cluster = !settings.cluster.is_empty();
        // (slot, key, name as given): one order for every MultiLock, so that none
        // waits on another in a circle.
        let mut order: Vec<(u16, Vec<u8>, Vec<u8>)> = names
            .into_iter()
            .map(|name| {
                let mut key = settings.prefix.clone();
                key.extend_from_slice(&name);
                (if cluster { keys::slot(&key) } else { 0 }, key, name)
            })
            .collect();
        order.sort();
        order.dedup_by(|a, b| a.1 == b.1);
        let mut groups: Vec<Group> = Vec::new();
        for (i, (slot, key, _)) in order.iter().enumerate() {
            let lock_keys = Arc::new(LockKeys::new(key.clone()));
            let same = i > 0 && order[i - 1].0 == *slot;
            if !same {
                groups.push(Group { route: Route::for_key(settings, key)?, keys: Vec::new(), modes: String::new(), first: i, blob: Vec::new() });
            }
            let Some(group) = groups.last_mut() else { continue };
            let mode = if read.contains(&order[i].2) { 'r' } else { 'w' };
            group.modes.push(mode);
            group.blob.push(mode as u8);
            for name in [&lock_keys.lock, &lock_keys.queue, &lock_keys.fence, &lock_keys.readers] {
                group.blob.extend_from_slice(format!("{}:", name.len()).as_bytes());
                group.blob.extend_from_slice(name);
            }
            group.keys.push(lock_keys);
        }
        let lease_only = groups.first().is_some_and(|g| g.route.lease_only());
        Ok(MultiLock {
            claims: order.iter().map(|_| Claim::default()).collect(),
            names: order.into_iter().map(|(_, _, n)| n).collect(),
            groups,
            terms: Terms::new(settings, wait, ttl_ms),
            // Independent counters give no order across holders: see docs/redlock.md.
            fencing: settings.fencing && !lease_only,
            fences: None,
            ever_held: false,
            serials: Vec::new(),
            owner_info: settings.owner_info && !lease_only,
            caller_token: false,
            record: Vec::new(),
        })
    }

    /// Whether the keys live on a Redlock quorum (every group does, or none).
    fn lease_only(&self) -> bool {
        self.groups[0].route.lease_only()
    }

    /// The keys as given (without the prefix), deduplicated, in the order they are taken.
    pub fn names(&self) -> &[Vec<u8>] {
        &self.names
    }

    /// The token this object last acquired, while it believes it holds it.
    pub fn token(&self) -> Option<&[u8]> {
        self.claims[0].token.as_deref()
    }

    /// One try: `Some(token)` when every key was taken, `None` when any is held.
    pub fn try_acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        self.obtain(chosen, false)
    }

    /// Waits up to `$timeOut` for every key (see the module comment).
    pub fn acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        let wait = !self.terms.wait.is_zero();
        self.obtain(chosen, wait)
    }

    /// Acquires like `acquire()`, a timeout being `LockError::Timeout` (`synchronized()`).
    pub fn acquire_or_fail(&mut self) -> Result<Token> {
        let what = self.describe();
        let token = self.acquire(None)?.ok_or_else(|| LockError::timeout("multilock", what.as_bytes(), self.terms.wait))?;
        self.serials = self.groups.iter().map(|g| g.route.serial()).collect();
        Ok(token)
    }

    /// The keys, for messages: `a, b, c`.
    fn describe(&self) -> String {
        self.names.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect::<Vec<_>>().join(", ")
    }

    /// Takes the groups in order, one try each. A group found busy ends the round:
    /// the groups taken in it are given back first, and then (`wait`) the MultiLock
    /// queues for that group and sleeps until it is handed over, and the next round
    /// tries the others. So it never waits while it holds anything.
    fn obtain(&mut self, chosen: Option<Token>, wait: bool) -> Result<Option<Token>> {
        let start = Instant::now();
        let deadline = self.terms.deadline(start);
        // A token the caller chose may be another holder's too (see `Try::Unsure`).
        self.caller_token = chosen.is_some();
        let token = match chosen {
            Some(t) => t,
            None => token::generate()?,
        };
        let fence = self.fencing && EAGER_FENCING.load(Ordering::Relaxed);
        if self.owner_info {
            self.record = crate::owner::record();
        }
        let mut got: Vec<Option<Taken>> = self.groups.iter().map(|_| None).collect();
        loop {
            let mut busy = None;
            for g in 0..self.groups.len() {
                if got[g].is_some() {
                    continue;
                }
                let fences = RefCell::new(None);
                let w = GroupWait { multi: self, group: &self.groups[g], token: &token, fence, fences: &fences };
                let sent = Boot::now();
                let first = if w.group.route.lease_only() { w.poll(deadline) } else { w.attempt(b"", false, deadline) };
                match first {
                    Ok(Try::Acquired(_)) => got[g] = Some((fences.into_inner(), waiting::lease_bound(sent, self.terms.lease))),
                    Ok(Try::Busy { .. }) => {
                        busy = Some(g);
                        break;
                    }
                    Ok(Try::Unsure) => {
                        let e = waiting::unsure(self.groups[g].route.node().addr());
                        self.give_back(&token, &mut got);
                        return Err(self.maybe_taken(token, e));
                    }
                    // A passing state (a failover, a loading server) is waited out.
                    Err(e) if wait && e.is_passing() && Instant::now() < deadline => {
                        busy = Some(g);
                        break;
                    }
                    Err(e) => {
                        self.give_back(&token, &mut got);
                        return Err(self.maybe_taken(token, e));
                    }
                }
            }
            let Some(g) = busy else {
                let until = got.iter().flatten().filter_map(|(_, u)| *u).min();
                if !waiting::is_stale(until) {
                    let fences = got.iter_mut().map(|t| t.take().and_then(|(f, _)| f)).collect::<Option<Vec<Vec<i64>>>>();
                    return Ok(Some(self.took(token, fences.map(|f| f.concat()), until)));
                }
                // Taken too late to be used (a paused process): given back, and tried again.
                crate::stats::note(crate::stats::Counter::Stale);
                self.give_back(&token, &mut got);
                if !wait || Instant::now() >= deadline {
                    return Ok(None);
                }
                continue;
            };
            self.give_back(&token, &mut got);
            if !wait || Instant::now() >= deadline {
                return Ok(None);
            }
            let fences = RefCell::new(None);
            let w = GroupWait { multi: self, group: &self.groups[g], token: &token, fence, fences: &fences };
            let (outcome, _) = waiting::wait(&w, deadline, false, true);
            match outcome {
                Waited::Got(_, until) => got[g] = Some((fences.into_inner(), until)),
                Waited::TimedOut => return Ok(None),
                Waited::Failed(e) => return Err(self.maybe_taken(token, e)),
            }
        }
    }

    /// Releases the groups of `got` (those taken in this round), before a wait starts.
    /// Errors are left to the lease.
    fn give_back(&self, token: &[u8], got: &mut [Option<Taken>]) {
        for (group, taken) in self.groups.iter().zip(got.iter_mut()) {
            if taken.take().is_some() {
                let _ = group.release(token);
            }
        }
    }

    /// Records an acquisition: every key becomes a hold in the table (renewed by the
    /// watchdog with `auto_renew`).
    fn took(&mut self, token: Token, fences: Option<Vec<i64>>, until: waiting::Until) -> Token {
        crate::stats::note(crate::stats::Counter::Acquired);
        let now = Instant::now();
        self.hold_token(&token, |terms| Renewal::for_terms(terms, until, now), until);
        let reads = self.reads();
        self.fences = if self.fencing { fences.filter(|f| f.len() == self.names.len() && f.iter().zip(&reads).all(|(&n, &r)| r || n > 0)) } else { None };
        self.ever_held = true;
        token
    }

    /// Whether each key, in order, is taken as a read share.
    fn reads(&self) -> Vec<bool> {
        self.groups.iter().flat_map(|g| (0..g.keys.len()).map(move |i| g.is_read(i))).collect()
    }

    fn hold_token(&mut self, token: &Token, renew: impl Fn(&Terms) -> Option<Box<Renewal>>, until: waiting::Until) {
        let owner = Owner::current();
        for group in &self.groups {
            for (i, keys) in group.keys.iter().enumerate() {
                let read = group.is_read(i);
                self.claims[group.first + i].record(Hold {
                    kind: if read { Kind::Read } else { Kind::Write },
                    owner,
                    route: group.route.clone(),
                    keys: keys.clone(),
                    token: token.clone(),
                    renew_by: if read { &crate::kinds::lock::READ_RENEWAL } else { &crate::kinds::lock::WRITE_RENEWAL },
                    renew: renew(&self.terms),
                    until,
                    lost: None,
                    auto_release: self.terms.auto_release,
                    orphan: false,
                });
            }
        }
    }

    /// After a failed try the keys may have been taken (a lost reply): the token is
    /// kept, unrenewed, so that a release or the object's end clears them.
    fn maybe_taken(&mut self, token: Token, e: LockError) -> LockError {
        if self.token().is_none() && !matches!(e, LockError::Connection { sent: false, .. } | LockError::Passing { sent: false, .. }) {
            // Not known to be held: it promises nothing (a bound already past).
            self.hold_token(&token, |_| None, Some(Boot::now()));
            self.fences = None;
            self.ever_held = true;
        }
        e
    }

    /// Whether the watchdog found any key of this object's hold `token` taken.
    fn lost(&self, token: &[u8]) -> bool {
        self.claims.iter().any(|c| c.lost(token))
    }

    /// The claims and keys of every key, in order.
    fn each_key(&mut self) -> impl Iterator<Item = (&mut Claim, &Arc<LockKeys>)> {
        self.claims.iter_mut().zip(self.groups.iter().flat_map(|g| g.keys.iter()))
    }

    /// Releases every key `token` (default: this object's) holds, each handed to its
    /// first waiter, one script per group. True only when the token held every key;
    /// keys it still held are released either way.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.claims[0].pick(token) else { return Ok(false) };
        let mut own = false;
        let mut holds = Vec::new();
        let mut lost = false;
        for claim in &mut self.claims {
            let (mine, hold) = claim.take_for_release(&token);
            own |= mine;
            lost |= hold.as_ref().is_some_and(|h| h.lost.is_some());
            holds.push(hold);
        }
        let mut held = 0;
        let mut failed = None;
        for group in &self.groups {
            match group.release(&token) {
                Ok(n) => held += n,
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            let e = crate::hold::claim::unconfirmed(e, holds.iter().flatten().next(), "multilock", self.describe().as_bytes());
            // Tried again by the object's end or request end; otherwise the lease ends them.
            for (claim, hold) in self.claims.iter_mut().zip(holds) {
                claim.put_back(hold);
            }
            return Err(e);
        }
        for (claim, keys) in self.each_key() {
            claim.released(own, keys, &token);
        }
        if held > 0 {
            crate::stats::note(crate::stats::Counter::Released);
        }
        Ok(!lost && held == self.names.len() as i64)
    }

    /// How long this object's hold of every key surely lasts from now: the shortest of
    /// its keys' (`Claim::remaining`), `None` when no lease ends.
    pub fn remaining(&self) -> Option<Duration> {
        self.claims.iter().map(Claim::remaining).fold(None, |least, r| match (least, r) {
            (None, r) => r,
            (l, None) => l,
            (Some(a), Some(b)) => Some(a.min(b)),
        })
    }

    /// Sets every key's lease to `lock_out` seconds (default: the object's `$lockOut`)
    /// if `token` (default: this object's) still holds them all (per group: a group
    /// whose keys it no longer holds is left as it is).
    pub fn extend(&mut self, token: Option<&[u8]>, lock_out: Option<f64>) -> Result<bool> {
        let ms = terms::extension_ms("MultiLock::extendLock(): Argument #2 ($lockOut)", lock_out, self.terms.lease)?;
        let Some(token) = self.claims[0].pick(token) else { return Ok(false) };
        if self.lost(&token) {
            return Ok(false);
        }
        let ms_arg = ms.to_string();
        let sent = Boot::now();
        let mut done = true;
        for group in &self.groups {
            let keys = group.locks_and_readers();
            match group.route.renew(&Call::Script(&RENEW, &keys, &[&token, ms_arg.as_bytes(), group.modes.as_bytes()]), Duration::from_millis(ms))? {
                Extended::Yes => {}
                Extended::Lost => done = false,
                // Not confirmed (a quorum's renewal ran out of time): not known to be lost either.
                Extended::No => return Ok(false),
            }
        }
        let lease = (ms != terms::NO_EXPIRY).then(|| Duration::from_millis(ms));
        for claim in &self.claims {
            Claim::renewed(claim.own_for(&token), done, lease, sent);
        }
        if done && self.claims[0].own_for(&token).is_some() {
            self.serials = self.groups.iter().map(|g| g.route.serial()).collect();
        }
        Ok(done)
    }

    /// Every key's remaining lease (PTTL: -2 free, -1 no expiry), and whether `token`
    /// holds them all.
    fn state(&self, token: &[u8]) -> Result<(bool, Vec<i64>)> {
        let mut mine = true;
        let mut pttls = Vec::with_capacity(self.names.len());
        for group in &self.groups {
            let locks = group.locks();
            let keys = group.locks_and_readers();
            let modes = group.modes.as_bytes();
            if group.route.lease_only() {
                // The nodes' leases differ, and a quorum's answer is the one a majority
                // gave: whether the token holds every key, alone; each lease by `Route::pttl`.
                let reply = group.route.ask(&Call::Script(&STATE, &keys, &[token, b"1", modes]))?;
                mine &= matches!(&reply, Value::Array(items) if items.len() == 1 && resp::int(&items[0]) == Some(1));
                for key in &locks {
                    pttls.push(match group.route.pttl(key)? {
                        None => -2,
                        Some(None) => -1,
                        Some(Some(ms)) => ms as i64,
                    });
                }
                continue;
            }
            let reply = group.route.ask(&Call::Script(&STATE, &keys, &[token, b"0", modes]))?;
            let parts = match &reply {
                Value::Array(items) if items.len() == locks.len() + 1 => items.iter().map(resp::int).collect::<Option<Vec<i64>>>(),
                _ => None,
            };
            let parts = parts.ok_or_else(|| bad_reply(&group.route, "state", &reply))?;
            mine &= parts[0] == 1;
            pttls.extend_from_slice(&parts[1..]);
        }
        Ok((mine, pttls))
    }

    /// What Redis holds for each key now, as `Lock::inspect()` shows it (one read-only
    /// script per key), in the keys' order; `mine` of each is whether this object's
    /// token holds that key.
    pub fn inspect(&self) -> Result<Vec<crate::kinds::lock::Inspection>> {
        let token = self.token().unwrap_or_default().to_vec();
        let mut out = Vec::with_capacity(self.names.len());
        for group in &self.groups {
            for keys in &group.keys {
                out.push(crate::kinds::lock::inspect_key(&group.route, keys, &token)?);
            }
        }
        Ok(out)
    }

    /// Whether `token` (default: this object's) holds every key right now.
    pub fn is_owned(&self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.claims[0].pick(token) else { return Ok(false) };
        if self.lost(&token) {
            return Ok(false);
        }
        Ok(self.state(&token)?.0)
    }

    /// The shortest remaining lease of the keys, in seconds: `None` when any key is
    /// free, infinite when none has an expiry.
    pub fn ttl(&self) -> Result<Option<f64>> {
        let (_, pttls) = self.state(b"")?;
        if pttls.iter().any(|&ms| ms == -2) {
            return Ok(None);
        }
        Ok(Some(pttls.iter().filter(|&&ms| ms >= 0).min().map_or(f64::INFINITY, |&ms| ms as f64 / 1000.0)))
    }

    /// The fencing tokens of this object's last acquisition, one per key in the
    /// order of `names()`: `None` before the first, or with `fencing` off (and on
    /// Redlock). Taken when first asked for, token-checked on every key of a group,
    /// like `Lock`'s.
    pub fn fencing_tokens(&mut self) -> Result<Option<Vec<i64>>> {
        if !self.fencing {
            return Ok(None);
        }
        EAGER_FENCING.store(true, Ordering::Relaxed);
        if self.fences.is_some() || !self.ever_held {
            return Ok(self.fences.clone());
        }
        let lost = || LockError::Unfenced { key: self.describe() };
        let Some(token) = self.token().map(<[u8]>::to_vec) else { return Err(lost()) };
        if self.lost(&token) {
            return Err(lost());
        }
        let mut all = Vec::with_capacity(self.names.len());
        for group in &self.groups {
            // Read shares have no number: 0 in their place.
            let writers: Vec<usize> = (0..group.keys.len()).filter(|&i| !group.is_read(i)).collect();
            if writers.is_empty() {
                all.extend(std::iter::repeat(0).take(group.keys.len()));
                continue;
            }
            let keys: Vec<&[u8]> = writers.iter().flat_map(|&i| [&group.keys[i].lock[..], &group.keys[i].fence[..]]).collect();
            let reply = group.route.ask(&Call::Script(&FENCE, &keys, &[&token]))?;
            let numbers = match &reply {
                Value::Array(items) if items.is_empty() => return Err(lost()),
                Value::Array(items) if items.len() == writers.len() => items.iter().map(resp::int).collect::<Option<Vec<i64>>>(),
                _ => None,
            };
            let mut numbers = numbers.ok_or_else(|| bad_reply(&group.route, "fence", &reply))?.into_iter();
            all.extend((0..group.keys.len()).map(|i| if group.is_read(i) { 0 } else { numbers.next().unwrap_or(0) }));
        }
        self.fences = Some(all.clone());
        Ok(Some(all))
    }

    /// Releases `token` after `synchronized()`'s work: an error when it was this
    /// object's and some key no longer held it (the work outlived the hold).
    ///
    /// While every key's lease surely lasts (by more than `read_timeout`, as this
    /// process counts) and no server closed the connection the hold was taken on, the
    /// release is sent unawaited, one script per group: it cannot find the hold lost.
    pub fn finish(&mut self, token: &[u8]) -> Result<()> {
        let margin = self.terms.read_timeout;
        let sure = self.serials.len() == self.groups.len()
            && !self.lease_only()
            && self.groups.iter().zip(&self.serials).all(|(g, s)| g.route.intact(*s))
            && self.claims.iter().all(|c| c.surely_held(token, margin));
        if sure {
            return self.release_unawaited(token);
        }
        let ours = self.claims[0].is(token);
        let lost_ago = self.claims.iter().filter_map(|c| c.lost_ago(token)).max();
        let released = self.release(Some(token))?;
        let what = self.describe();
        self.claims[0].finished(ours, lost_ago, released, "multilock", what.as_bytes())
    }

    /// Releases this object's hold `token` without waiting for the answers, keeping
    /// the table right as `Claim::release_unawaited` does.
    fn release_unawaited(&mut self, token: &[u8]) -> Result<()> {
        let by = self.claims.iter().filter_map(|c| c.until().flatten()).min();
        let holds: Vec<_> = self.claims.iter_mut().map(|c| c.take_for_release(token).1).collect();
        let name = self.describe().into_bytes();
        for group in &self.groups {
            let all = group.all_keys();
            // The release answers how many of the group's keys it held.
            let watch = Watch { what: "MultiLock", name: name.clone(), at_least: group.keys.len() as i64, by };
            if let Err(e) = group.route.fire(&Call::Script(&RELEASE, &all, &[token, group.modes.as_bytes()]), Some(watch)) {
                for (claim, hold) in self.claims.iter_mut().zip(holds) {
                    claim.put_back(hold);
                }
                return Err(e);
            }
        }
        for (claim, keys) in self.each_key() {
            claim.released(true, keys, token);
        }
        crate::stats::note(crate::stats::Counter::Released);
        Ok(())
    }

    /// Releases `token` after work that did not return normally, errors ignored: this
    /// object's hold without waiting for the answers.
    pub fn release_unseen(&mut self, token: &[u8]) {
        if self.claims[0].own_for(token).is_some() && !self.lease_only() {
            let _ = self.release_unawaited(token);
        } else {
            let _ = self.release(Some(token));
        }
    }
}

impl Drop for MultiLock {
    /// Keys still held when the object goes away are released (with `auto_release`),
    /// one script per group, unless this is a forked child's copy.
    fn drop(&mut self) {
        let auto = self.terms.auto_release;
        let ended: Vec<Hold> = self.claims.iter_mut().filter_map(|c| c.end(auto)).collect();
        if let Some(first) = ended.first() {
            for group in &self.groups {
                let all = group.all_keys();
                let _ = group.route.fire(&Call::Script(&RELEASE, &all, &[&first.token, group.modes.as_bytes()]), None);
            }
        }
    }
}

/// One wait of a `MultiLock` for one group, as `waiting` sees it. The fencing tokens
/// of a try that took every key of the group are kept in `fences`: `Try` carries one
/// number.
struct GroupWait<'a> {
    multi: &'a MultiLock,
    group: &'a Group,
    token: &'a [u8],
    fence: bool,
    fences: &'a RefCell<Option<Vec<i64>>>,
}

impl GroupWait<'_> {
    /// `{1, f1..fn}`: taken, with the numbers kept; anything else as a `Lock`'s reply.
    fn read(&self, reply: &Value) -> std::result::Result<Try, RedisError> {
        if let Value::Array(items) = reply {
            if resp::int(items.first().unwrap_or(&Value::Nil)) == Some(1) && items.len() == self.group.keys.len() + 1 {
                let numbers = items[1..].iter().map(resp::int).collect::<Option<Vec<i64>>>().ok_or_else(|| unexpected("acquire", reply))?;
                *self.fences.borrow_mut() = self.fence.then_some(numbers);
                return Ok(Try::Acquired(None));
            }
        }
        match waiting::reply_parts(reply) {
            Some((0 | 2 | 3, pttl, queued, clock)) => Ok(Try::busy(pttl, queued, clock)),
            Some((4, _, _, _)) => Ok(Try::Unsure),
            _ => Err(unexpected("acquire", reply)),
        }
    }
}

impl Waiter for GroupWait<'_> {
    fn route(&self) -> &Route {
        &self.group.route
    }

    fn token(&self) -> &[u8] {
        self.token
    }

    /// `<lease>:m<f><key list length>:<channel length>:<channel><key list><token>`.
    fn entry(&self, channel: &str) -> Vec<u8> {
        let f = if self.fence { '1' } else { '0' };
        let g = self.group;
        let mut entry = format!("{}:m{f}{}:{}:{channel}", self.multi.terms.ttl_arg, g.blob.len(), channel.len()).into_bytes();
        entry.extend_from_slice(&g.blob);
        entry.extend_from_slice(self.token);
        entry
    }

    fn attempt(&self, entry: &[u8], again: bool, deadline: Instant) -> Result<Try> {
        let m = self.multi;
        let life = (deadline.saturating_duration_since(Instant::now()) + QUEUE_SLACK).as_millis().to_string();
        let flag = |on: bool| -> &[u8] { if on { b"1" } else { b"0" } };
        let all = self.group.all_keys();
        self.group.route.run(Retry::ToSettle, |conn, settling| {
            let args: [&[u8]; 10] = [
                self.token,
                m.terms.ttl_arg.as_bytes(),
                entry,
                life.as_bytes(),
                flag(m.terms.fair),
                flag(again || settling),
                flag(self.fence),
                &m.record,
                self.group.modes.as_bytes(),
                flag(m.caller_token),
            ];
            let reply = ACQUIRE.run(conn, &all, &args)?;
            self.read(&reply)
        })
    }

    fn cancel(&self, entry: &[u8]) -> Result<Option<Option<i64>>> {
        let g = self.group;
        let all = g.all_keys();
        let chosen: &[u8] = if self.multi.caller_token { b"1" } else { b"0" };
        let reply = g.route.run(Retry::IfStale, |conn, _| {
            CANCEL.run(conn, &all, &[self.token, entry, self.multi.terms.ttl_arg.as_bytes(), g.modes.as_bytes(), chosen])
        })?;
        match &reply {
            Value::Array(items) if items.len() == g.keys.len() + 1 && resp::int(&items[0]) == Some(1) => {
                let numbers = items[1..].iter().map(resp::int).collect::<Option<Vec<i64>>>();
                *self.fences.borrow_mut() = numbers.filter(|_| self.fence);
                Ok(Some(None))
            }
            Value::Array(items) if items.len() == 1 => Ok(None),
            _ => Err(bad_reply(&g.route, "cancel", &reply)),
        }
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(self.multi.terms.retry_delay, self.multi.terms.retry_delay_max)
    }

    fn lease(&self) -> Option<Duration> {
        self.multi.terms.lease
    }

    fn abandon(&self) {
        let all = self.group.all_keys();
        let _ = self.group.route.fire(&Call::Script(&RELEASE, &all, &[self.token, self.group.modes.as_bytes()]), None);
    }

    /// One try that queues nothing: on a Redlock quorum, `TAKE` on every node, held
    /// when a majority took every key within the lease's validity (otherwise undone
    /// everywhere); elsewhere a try of the acquire script without an entry.
    fn poll(&self, deadline: Instant) -> Result<Try> {
        let g = self.group;
        let (locks, all) = (g.locks(), g.all_keys());
        let undo = Call::Script(&RELEASE, &all, &[self.token, g.modes.as_bytes()]);
        let take = Call::Script(&TAKE, &locks, &[self.token, self.multi.terms.ttl_arg.as_bytes()]);
        match g.route.take_on_quorum(&take, &Value::Int(1), locks[0], self.token, self.multi.terms.lease, &undo)? {
            Some(true) => Ok(Try::Acquired(None)),
            Some(false) => Ok(Try::busy_unqueued()),
            None => self.attempt(&[], true, deadline),
        }
    }
}

/// A reply of a shape the script never gives, as an error naming the server.
fn bad_reply(route: &Route, script: &str, reply: &Value) -> LockError {
    LockError::Server { addr: route.node().addr().to_string(), cause: format!("unexpected reply to the multi {script} script: {reply:?}") }
}

/// A reply of a shape the script never gives: the server is not what it seems.
fn unexpected(script: &str, reply: &Value) -> RedisError {
    RedisError::from((ErrorKind::UnexpectedReturnType, "unexpected reply", format!("multi {script} script: {reply:?}")))
}
