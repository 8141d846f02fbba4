//! The kinds of hold, over one core. `core` is what every hold does (the way in:
//! tries, the wait, recording; the way out: releases awaited or not, request end;
//! extensions); each kind brings only its scripts, in its folder beside its Lua, and
//! what their replies mean: `lock` (the mutex and its shared, read mode),
//! `semaphore` (permits), `multi` (several keys at once). `lib/` holds the Lua helpers
//! the scripts include, `scripts` the list of every script (generated at build time
//! from the folders, `build/lua.rs`), `retake` what this process remembers of the
//! locks it used lately, and `catalog` what the masters hold under a prefix. Where a
//! kind's commands run is `topology`'s, how it waits the core's (`core::waiting`), and
//! keeping it held is `hold`'s.

pub mod catalog;
pub mod core;
pub mod lock;
pub mod multi;
pub(crate) mod retake;
pub mod scripts;
pub mod semaphore;
