//! The semaphore's Lua scripts, in `lua/semaphore/` (see `kinds::lua`). Every one
//! first reclaims the holds whose lease has ended (on Redis's clock), then takes,
//! frees, renews or reports permits, and hands freed permits to the queued waiters
//! that now fit (see the parent module).

use crate::kinds::lua;
use crate::net::script::Script;
use std::sync::LazyLock;

/// Takes permits, or queues for them. See `lua/semaphore/acquire.lua`.
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| lua::script("semaphore/acquire"));

/// Gives up a hold's permits and hands the freed ones out. See `lua/semaphore/release.lua`.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| lua::script("semaphore/release"));

/// Sets a live hold's lease. See `lua/semaphore/renew.lua`.
pub static RENEW: LazyLock<Script> = LazyLock::new(|| lua::script("semaphore/renew"));

/// Leaves the queue when a wait gives up. See `lua/semaphore/cancel.lua`.
pub static CANCEL: LazyLock<Script> = LazyLock::new(|| lua::script("semaphore/cancel"));

/// The permits free now, and whether a token holds some. See `lua/semaphore/state.lua`.
pub static STATE: LazyLock<Script> = LazyLock::new(|| lua::script("semaphore/state"));

/// What `Semaphore::inspect()` shows, read in one step and changing nothing. See `lua/semaphore/inspect.lua`.
pub static INSPECT: LazyLock<Script> = LazyLock::new(|| lua::script("semaphore/inspect"));
