//! Shared (read) holds of a `Lock`: many readers at once, no writer meanwhile.
//!
//! In read mode the lock key holds the empty string (no token is empty), so a
//! writer's `SET NX` fails as it does against any holder, and the common writer
//! path pays nothing for readers. The readers are a sorted set beside the key
//! (`LockKeys::readers`), each token scored with the Redis time, in ms, when its
//! lease ends: expiry is judged on Redis's clock, never a client's, and a crashed
//! reader's share is gone when its lease ends. The key lives as long as the longest
//! lease, so when every reader has crashed the lock frees itself.
//!
//! Nobody starves: a reader joins only when no one waits ahead of it, so once a
//! writer queues, new readers queue behind it. A release that frees the key hands
//! it to the head of the queue: one writer, or every reader up to the first writer,
//! each woken on its own channel (`hand_over` in `scripts`). A reader that asks for
//! the write lock (an upgrade) queues first in line, and gets it when it is the only
//! reader left; a writer that asks for a read share (a downgrade) gets it in the
//! same step as it gives up the write lock, so no writer can enter in between.
//!
//! The scripts, in `lua/shared/`, take the keys in `LockKeys::all()` order: lock,
//! queue, patience, fence, readers, records.

use super::lua;
use crate::net::script::Script;
use std::sync::LazyLock;

/// Takes a read share, or queues for it. See `lua/shared/read_acquire.lua`.
pub static READ_ACQUIRE: LazyLock<Script> = LazyLock::new(|| lua::script("shared/read_acquire"));

/// Gives up a read share; the last reader out hands the lock over. See `lua/shared/read_release.lua`.
pub static READ_RELEASE: LazyLock<Script> = LazyLock::new(|| lua::script("shared/read_release"));

/// Turns the write lock into a read share in one step. See `lua/shared/downgrade.lua`.
pub static DOWNGRADE: LazyLock<Script> = LazyLock::new(|| lua::script("shared/downgrade"));

/// Sets a live read share's lease. See `lua/shared/read_renew.lua`.
pub static READ_RENEW: LazyLock<Script> = LazyLock::new(|| lua::script("shared/read_renew"));

/// Whether a token holds the write lock, a live read share, or neither. See `lua/shared/holds.lua`.
pub static HOLDS: LazyLock<Script> = LazyLock::new(|| lua::script("shared/holds"));
