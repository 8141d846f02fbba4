//! redis-lock: a distributed lock for PHP on Redis.
//!
//! The core (`config`, `token`, `keys`, `scripts`, `pool`, `wake`, `wait`, `waiting`, `lock`, `shared`, `semaphore`,
//! `route`, `held`, `watchdog`, `redlock`, `sentinel`, `cluster`, `tls`, `error`, with `resp`,
//! `wire` and `fork_wiped` for the lean command path) knows nothing of
//! PHP; `php` is the thin binding over it, compiled with the default `php` feature.

pub mod cluster;
pub mod config;
pub mod error;
pub mod fork_wiped;
pub mod held;
pub mod keys;
pub mod lock;
pub mod pool;
pub mod redlock;
pub mod resp;
pub mod route;
#[macro_use]
pub mod scripts;
pub mod semaphore;
pub mod sentinel;
pub mod shared;
pub mod tls;
pub mod token;
pub mod wait;
pub mod waiting;
pub mod wake;
pub mod watchdog;
pub mod wire;

#[cfg(feature = "php")]
mod php;
