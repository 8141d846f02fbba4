//! The mutex's Lua scripts (acquire, release, hand-over, cancel, renew, fencing),
//! each in its own file under `lua/lock/` (see `lua`), and the model they share with
//! the shared mode and the semaphore. Each runs through `net::script::Script`.

use super::lua;
use crate::net::script::Script;
use std::sync::LazyLock;
// The waiting queue (KEYS[2]) is a list of entries
// `<until>:<lease ms>:<f>:<channel length>:<channel><token>`, oldest first (`until`:
// when its waiter stops waiting, in ms on the server's clock, see `lua/lib/stamp.lua`), where `f` is "1"
// when the waiter wants a fencing token and a lease of 0 means none (no expiry). The
// token comes last, unescaped: a caller may choose any bytes for it. Each waiting
// process listens on its own channel; PUBLISH returns how many connections heard the
// grant, so 0 means the waiter is gone (its process died and Redis closed its
// connection) and the next entry is tried instead.
//
// Fencing: KEYS[4] is the lock's counter. A number is only ever taken from it by a
// script that holds the key for that holder at that moment: the acquisition itself
// (`TAKE`, `ACQUIRE`, a grant in `RELEASE`) or, later, the holder's own
// token-checked `FENCE`. Holds do not overlap, so the numbers increase from holder to
// holder. A grant that finds its waiter gone wastes a number; numbers only need to
// increase, not to be dense. Each number is at least the server's clock in µs
// (`lua/lib/next_fence.lua`), so that a counter lost with the data (a restart without
// persistence, a failover to a replica that missed it) starts again above every number
// issued before, as long as the servers' clocks do not go back.
//
// A script pays for every function it defines, on every call: the helpers
// (`lua/lib/`) are included only in the branches that use them, after the common path.

/// The first try when it must do more than `SET NX PX`: with a fencing token, or a
/// record of who takes it. See `lua/lock/take.lua`.
pub static TAKE: LazyLock<Script> = LazyLock::new(|| lua::script("lock/take"));

/// The fencing token of a hold taken without one. See `lua/lock/fence.lua`.
pub static FENCE: LazyLock<Script> = LazyLock::new(|| lua::script("lock/fence"));

/// Takes the lock for a writer (a reader that upgrades too), or queues for it. See `lua/lock/acquire.lua`.
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| lua::script("lock/acquire"));

/// Gives up a write hold and hands the lock to the head of the queue (a forced
/// release too). See `lua/lock/release.lua`.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| lua::script("lock/release"));

/// Hands a lock left free for a re-take that did not come to the head of its queue. See `lua/lock/kick.lua`.
pub static KICK: LazyLock<Script> = LazyLock::new(|| lua::script("lock/kick"));

/// Leaves the queue when a wait gives up. See `lua/lock/cancel.lua`.
pub static CANCEL: LazyLock<Script> = LazyLock::new(|| lua::script("lock/cancel"));

/// Sets a write hold's lease: `extendLock()` and the watchdog. See `lua/lock/renew.lua`.
pub static RENEW: LazyLock<Script> = LazyLock::new(|| lua::script("lock/renew"));

/// What `Lock::inspect()` shows, read in one step and changing nothing. See `lua/lock/inspect.lua`.
pub static INSPECT: LazyLock<Script> = LazyLock::new(|| lua::script("lock/inspect"));
