//! A MultiLock: several keys held at once under one token, all of them or none; a
//! `Holder` (the core) of one part per slot group.
//!
//! On one server, a Sentinel master, or one Cluster slot, one script takes every key
//! or none (`acquire.lua`): no other client ever sees some of them taken and not the
//! others. Each key is an ordinary lock key, holding the token, with the same queue
//! and fencing counter as a `Lock` of that name: a `Lock` holding a key keeps a
//! MultiLock that wants it waiting, and the other way round.
//!
//! A waiter queues one entry ("m", naming every key with its mode, queue, counter
//! and readers) in the queue of the first key, in its order, that is busy. The
//! release of that key (a `Lock`'s or a MultiLock's, through `grant_multi`) takes
//! every key for it when the others are free too, or moves the entry to the front of
//! the queue of the next busy one. Its place is kept in each queue in turn, and it is
//! woken by those releases only: no polling, and no herd. Every MultiLock orders its
//! keys the same way (by name), so two never wait on each other in a circle.
//!
//! On a Cluster, keys in several slots are taken slot group by slot group, in one
//! order (slot, then name), one script per group: the core's rounds (a group found
//! busy ends the round, and the groups taken in it are given back before the wait
//! for it starts). Another client may see some groups held then, for the round's few
//! round trips; within a group, never a subset.
//!
//! On a Redlock quorum (`servers`) each node runs `take.lua`, every key or none, with
//! no queue: held when a majority took every key within the lease's validity, undone
//! everywhere otherwise, and waiters poll with back-off, as a `Lock`'s do there.
//!
//! Keys named in the `read` option are taken as read shares, as `Lock`'s readers
//! are: beside other readers, behind any waiter queued for the key. A MultiLock's
//! release lets every key go before it hands any over, so that a MultiLock waiting for
//! the same keys finds them all free at its turn.
//!
//! Once held, each group is a hold in the process's table (`hold::table`): the
//! watchdog renews it (`renew.lua`, every key of the group or none), the object's end
//! and request end release it, and a key found taken marks the whole MultiLock lost.

mod group;
pub mod scripts;

use crate::config::{Settings, Topology};
use crate::error::{LockError, Result};
use crate::keys::{self, LockKeys};
use crate::kinds::core::entry;
use crate::kinds::core::waiting::Numbers;
use crate::kinds::core::{Common, Drive, Holder};
use crate::net::call::Call;
use crate::net::resp;
use crate::terms::{self, Terms};
use crate::token::{self, Token};
use crate::topology::route::Route;
use crate::topology::rules::{self, Need};
use group::{Group, GroupsKind};
use redis::Value;
use scripts::{Fence, State};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Set once this process has asked a MultiLock for its fencing tokens: from then on
/// its acquisitions issue them in the same step (as `Lock` does).
static EAGER_FENCING: AtomicBool = AtomicBool::new(false);

/// Several keys, held all at once under one token.
pub struct MultiLock {
    pub(super) h: Holder<GroupsKind>,
    /// The keys as given, deduplicated, in the order they are taken: by name, and on
    /// a Cluster by slot, then name.
    names: Vec<Vec<u8>>,
}

impl MultiLock {
    /// Validates everything up front, so that a bad argument never reaches Redis.
    /// `names` are the keys as given (without the prefix); `read` those of them taken
    /// as read shares.
    pub fn new(
        names: Vec<Vec<u8>>,
        read: Vec<Vec<u8>>,
        time_out: f64,
        lock_out: f64,
        settings: &Settings,
    ) -> Result<Self> {
        if names.is_empty() {
            return Err(LockError::InvalidValue(
                "MultiLock::__construct(): Argument #1 ($keys) must not be empty".to_string(),
            ));
        }
        if names.iter().any(Vec::is_empty) {
            return Err(LockError::InvalidValue(
                "MultiLock::__construct(): Argument #1 ($keys) must not contain an empty key"
                    .to_string(),
            ));
        }
        let wait = terms::time_out(time_out)?;
        let ttl_ms = terms::lock_out_ms(lock_out)?;
        let topology = settings.check()?;
        rules::check(
            &topology,
            settings,
            &[Need::Expiry("MultiLock::__construct(): Argument #3 ($lockOut)", ttl_ms), Need::Fair],
        )?;
        if let Some(stray) = read.iter().find(|r| !names.contains(r)) {
            return Err(LockError::InvalidValue(format!(
                "MultiLock::__construct(): option \"read\" must name keys of Argument #1 ($keys); {:?} is not one",
                String::from_utf8_lossy(stray)
            )));
        }
        if !read.is_empty() {
            let readers = Need::Readers("MultiLock::__construct(): option \"read\"");
            rules::check(&topology, settings, &[readers])?;
        }
        let cluster = matches!(topology, Topology::Cluster(_));
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
        let mut reads = Vec::with_capacity(order.len());
        for (i, (slot, key, name)) in order.iter().enumerate() {
            let lock_keys = Arc::new(LockKeys::new(key.clone()));
            if i == 0 || order[i - 1].0 != *slot {
                groups.push(Group {
                    route: Route::for_key(&topology, settings, key)?,
                    keys: Vec::new(),
                    modes: String::new(),
                    list: Vec::new(),
                });
            }
            let Some(group) = groups.last_mut() else { continue };
            let is_read = read.contains(name);
            reads.push(is_read);
            group.modes.push(if is_read { 'r' } else { 'w' });
            entry::group_key(
                &mut group.list,
                is_read,
                [&lock_keys.lock, &lock_keys.queue, &lock_keys.fence, &lock_keys.readers],
            );
            group.keys.push(lock_keys);
        }
        let names: Vec<Vec<u8>> = order.into_iter().map(|(_, _, n)| n).collect();
        let shown = names
            .iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect::<Vec<_>>()
            .join(", ");
        let c = Common::new(
            "MultiLock",
            shown.into_bytes(),
            Terms::new(settings, wait, ttl_ms),
            settings,
            &topology,
        );
        let parts = groups.into_iter().map(Arc::new).collect();
        Ok(MultiLock { h: Holder::new(c, parts, GroupsKind { fence: false, reads }), names })
    }

    /// The keys as given (without the prefix), deduplicated, in the order they are taken.
    pub fn names(&self) -> &[Vec<u8>] {
        &self.names
    }

    /// The token this object last acquired, while it believes it holds it.
    pub fn token(&self) -> Option<&[u8]> {
        self.h.token()
    }

    /// One try: `Some(token)` when every key was taken, `None` when any is held.
    pub fn try_acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        self.acquire_with(chosen, false, Drive::Block)
    }

    /// Waits up to `$timeOut` for every key (see the module comment).
    pub fn acquire(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        let wait = !self.h.c.terms.wait.is_zero();
        self.acquire_with(chosen, wait, Drive::Block)
    }

    /// Starts `acquire` for an event loop to drive (see `Lock::start`).
    pub fn start(&mut self, chosen: Option<Token>) -> Result<Option<Token>> {
        let wait = !self.h.c.terms.wait.is_zero();
        self.acquire_with(chosen, wait, Drive::Loop)
    }

    fn acquire_with(
        &mut self,
        chosen: Option<Token>,
        wait: bool,
        drive: Drive,
    ) -> Result<Option<Token>> {
        self.h.kind.fence = self.h.c.fencing && EAGER_FENCING.load(Ordering::Relaxed);
        let chosen_token = chosen.is_some();
        let token = match chosen {
            Some(t) => t,
            None => token::generate()?,
        };
        self.h.take(drive, std::time::Instant::now(), token, chosen_token, wait)
    }

    /// Acquires like `acquire()`, a timeout being `LockError::Timeout` (`synchronized()`).
    pub fn acquire_or_fail(&mut self) -> Result<Token> {
        let token = self.acquire(None)?.ok_or_else(|| self.h.c.timeout())?;
        self.h.note_serials();
        Ok(token)
    }

    /// Releases every key `token` (default: this object's) holds, each handed to its
    /// first waiter, one script per group. True only when the token held every key;
    /// keys it still held are released either way.
    pub fn release(&mut self, token: Option<&[u8]>) -> Result<bool> {
        self.h.release(token)
    }

    /// How long this object's hold of every key surely lasts from now: the shortest
    /// of its groups' (`Claim::remaining`), `None` when no lease ends.
    pub fn remaining(&self) -> Option<Duration> {
        self.h.remaining()
    }

    /// Sets every key's lease to `lock_out` seconds (default: the object's `$lockOut`)
    /// if `token` (default: this object's) still holds them all (per group: a group
    /// whose keys it no longer holds is left as it is).
    pub fn extend(&mut self, token: Option<&[u8]>, lock_out: Option<f64>) -> Result<bool> {
        let ms = terms::extension_ms(
            "MultiLock::extendLock(): Argument #2 ($lockOut)",
            lock_out,
            self.h.c.terms.lease,
        )?;
        self.h.extend(token, ms)
    }

    /// Every key's remaining lease (PTTL: -2 free, -1 no expiry), and whether `token`
    /// holds them all.
    fn state(&self, token: &[u8]) -> Result<(bool, Vec<i64>)> {
        let mut mine = true;
        let mut pttls = Vec::with_capacity(self.names.len());
        for group in &self.h.parts {
            let (route, modes) = (&group.route, group.modes.as_bytes());
            if route.lease_only() {
                // The nodes' leases differ, and a quorum's answer is the one a majority
                // gave: whether the token holds every key, alone; each lease by `Route::pttl`.
                let reply = route.ask(&Call::Script(&State {
                    keys: &group.keys,
                    token,
                    modes,
                    alone: true,
                }))?;
                mine &= matches!(&reply, Value::Array(items) if items.len() == 1 && resp::int(&items[0]) == Some(1));
                for k in &group.keys {
                    pttls.push(match route.pttl(&k.lock)? {
                        None => -2,
                        Some(None) => -1,
                        Some(Some(ms)) => ms as i64,
                    });
                }
                continue;
            }
            let reply = route.ask(&Call::Script(&State {
                keys: &group.keys,
                token,
                modes,
                alone: false,
            }))?;
            let parts = match &reply {
                Value::Array(items) if items.len() == group.keys.len() + 1 => {
                    items.iter().map(resp::int).collect::<Option<Vec<i64>>>()
                }
                _ => None,
            };
            let parts = parts.ok_or_else(|| route.unexpected("multi/state", &reply))?;
            mine &= parts[0] == 1;
            pttls.extend_from_slice(&parts[1..]);
        }
        Ok((mine, pttls))
    }

    /// What Redis holds for each key now, as `Lock::inspect()` shows it (one read-only
    /// script per key), in the keys' order; `mine` of each is whether this object's
    /// token holds that key.
    pub fn inspect(&self) -> Result<Vec<crate::kinds::lock::Inspection>> {
        let token = self.token().unwrap_or_default();
        let mut out = Vec::with_capacity(self.names.len());
        for group in &self.h.parts {
            for keys in &group.keys {
                out.push(crate::kinds::lock::inspect_key(&group.route, keys, token)?);
            }
        }
        Ok(out)
    }

    /// Whether `token` (default: this object's) holds every key right now.
    pub fn is_owned(&self, token: Option<&[u8]>) -> Result<bool> {
        let Some(token) = self.h.live(token) else { return Ok(false) };
        Ok(self.state(&token)?.0)
    }

    /// The shortest remaining lease of the keys, in seconds: `None` when any key is
    /// free, infinite when none has an expiry.
    pub fn ttl(&self) -> Result<Option<f64>> {
        let (_, pttls) = self.state(b"")?;
        if pttls.contains(&-2) {
            return Ok(None);
        }
        Ok(Some(
            pttls
                .iter()
                .filter(|&&ms| ms >= 0)
                .min()
                .map_or(f64::INFINITY, |&ms| ms as f64 / 1000.0),
        ))
    }

    /// The fencing tokens of this object's last acquisition, one per key in the
    /// order of `names()`: `None` before the first, or with `fencing` off (and on
    /// Redlock). Taken when first asked for, token-checked on every key of a group,
    /// like `Lock`'s.
    pub fn fencing_tokens(&mut self) -> Result<Option<Vec<i64>>> {
        if !self.h.c.fencing {
            return Ok(None);
        }
        EAGER_FENCING.store(true, Ordering::Relaxed);
        if self.h.c.fences.is_some() || !self.h.c.ever_held {
            return Ok(self.h.c.fences.as_ref().map(|f| f.as_slice().to_vec()));
        }
        let lost =
            || LockError::Unfenced { key: String::from_utf8_lossy(&self.h.c.name).into_owned() };
        let Some(token) = self.token().map(<[u8]>::to_vec) else { return Err(lost()) };
        if self.h.lost(&token) {
            return Err(lost());
        }
        let mut all = Vec::with_capacity(self.names.len());
        for group in &self.h.parts {
            // Read shares have no number: 0 in their place.
            let writers: Vec<Arc<LockKeys>> = group
                .keys
                .iter()
                .enumerate()
                .filter(|&(i, _)| !group.is_read(i))
                .map(|(_, k)| k.clone())
                .collect();
            if writers.is_empty() {
                all.extend(std::iter::repeat_n(0, group.keys.len()));
                continue;
            }
            let reply = group.route.ask(&Call::Script(&Fence { keys: &writers, token: &token }))?;
            let numbers = match &reply {
                Value::Array(items) if items.is_empty() => return Err(lost()),
                Value::Array(items) if items.len() == writers.len() => {
                    items.iter().map(resp::int).collect::<Option<Vec<i64>>>()
                }
                _ => None,
            };
            let mut numbers =
                numbers.ok_or_else(|| group.route.unexpected("multi/fence", &reply))?.into_iter();
            all.extend((0..group.keys.len()).map(|i| {
                if group.is_read(i) {
                    0
                } else {
                    numbers.next().unwrap_or(0)
                }
            }));
        }
        self.h.c.fences = Some(Numbers::of(all.clone()));
        Ok(Some(all))
    }

    /// Releases `token` after `synchronized()`'s work: an error when it was this
    /// object's and some key no longer held it (the work outlived the hold).
    pub fn finish(&mut self, token: &[u8]) -> Result<()> {
        self.h.finish(token)
    }

    /// Releases `token` after work that did not return normally, errors ignored.
    pub fn release_unseen(&mut self, token: &[u8]) {
        self.h.release_unseen(token);
    }
}

impl Drop for MultiLock {
    /// Keys still held when the object goes away are released (with `auto_release`),
    /// one script per group, unless this is a forked child's copy.
    fn drop(&mut self) {
        self.h.end();
    }
}
