//! A `Lock`'s key as a hold holds it (`As`: written, read, or written alone): where it
//! lives, and how the watchdog renews it and request end releases it.

use crate::hold::table::Part;
use crate::keys::LockKeys;
use crate::kinds::lock::scripts::{Kick, ReadRelease, ReadRenew, Release, Renew};
use crate::net::call::Owned;
use crate::topology::route::Route;

/// How long (ms, as the scripts take it) the first waiter lets short holds pass it
/// over before release must hand over (see the module comment of `lock`).
pub(crate) const PATIENCE_MS: &[u8] = b"5";

/// How a hold holds a lock's key: what its renewal and its release are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum As {
    /// A writer: renewed and released by the scripts.
    Write,
    /// A reader's share: renewed and released by the read scripts.
    Read,
    /// A writer's hold taken by a first try that found nobody queued (`net::fast`):
    /// the watchdog renews it with the server's own `SET … IFEQ` where it has one,
    /// falling back on the script. Request end releases it as any writer's hold, by
    /// the script sent unawaited, which hands over in the same step.
    Alone,
}

/// A lock's key on its route, and how a hold recorded with it holds the key. A `Lock`
/// object keeps one per way it holds (`LockKind`), each made once: a hold hands out a
/// clone of one of them.
#[derive(Debug)]
pub(crate) struct LockPart {
    pub keys: LockKeys,
    pub route: Route,
    pub held: As,
}

impl LockPart {
    /// The same key on the same route, held `held`.
    pub fn held_as(&self, held: As) -> LockPart {
        LockPart { keys: self.keys.clone(), route: self.route.clone(), held }
    }

    /// The release of a writer's `token` (`short`: a short hold, see `release.lua`;
    /// an empty token forces the lock free).
    pub fn release_call<'a>(&'a self, token: &'a [u8], short: bool) -> Release<'a> {
        let k = &self.keys;
        Release {
            lock: &k.lock,
            queue: &k.queue,
            patience: &k.patience,
            fence: &k.fence,
            readers: &k.readers,
            owner: &k.owner,
            token,
            wait: PATIENCE_MS,
            short,
        }
    }

    /// The release of a reader's share.
    pub fn read_release_call<'a>(&'a self, token: &'a [u8]) -> ReadRelease<'a> {
        let k = &self.keys;
        ReadRelease {
            lock: &k.lock,
            queue: &k.queue,
            fence: &k.fence,
            readers: &k.readers,
            owner: &k.owner,
            token,
        }
    }

    /// A writer's renewal (`owner`: its record kept as long).
    pub fn renew_call<'a>(&'a self, token: &'a [u8], lease: &'a [u8], owner: bool) -> Renew<'a> {
        Renew { lock: &self.keys.lock, owner: owner.then_some(&self.keys.owner[..]), token, lease }
    }

    /// Hands the free lock to the head of its queue (after a compare-and-delete that
    /// found someone queued, or a short hold's end).
    pub fn kick(&self) -> Kick<'_> {
        let k = &self.keys;
        Kick { lock: &k.lock, queue: &k.queue, fence: &k.fence, readers: &k.readers }
    }

    /// A reader's renewal.
    pub fn read_renew_call<'a>(&'a self, token: &'a [u8], lease: &'a [u8]) -> ReadRenew<'a> {
        let k = &self.keys;
        ReadRenew { lock: &k.lock, readers: &k.readers, owner: Some(&k.owner), token, lease }
    }
}

impl Part for LockPart {
    fn route(&self) -> &Route {
        &self.route
    }

    fn key(&self) -> &[u8] {
        &self.keys.lock
    }

    fn renew<'a>(&'a self, token: &'a [u8], lease_ms: &'a [u8]) -> Owned<'a> {
        match self.held {
            As::Write => Owned::script(self.renew_call(token, lease_ms, true)),
            As::Read => Owned::script(self.read_renew_call(token, lease_ms)),
            As::Alone => Owned::renewal(
                &self.keys.lock,
                token,
                lease_ms,
                self.renew_call(token, lease_ms, true),
            ),
        }
    }

    fn release<'a>(&'a self, token: &'a [u8]) -> Option<Owned<'a>> {
        if token.is_empty() {
            // No token is empty: an empty one would force the lock free.
            return None;
        }
        Some(match self.held {
            As::Read => Owned::script(self.read_release_call(token)),
            As::Write | As::Alone => Owned::script(self.release_call(token, false)),
        })
    }
}
