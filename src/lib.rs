//! redis-lock: a distributed lock for PHP on Redis.
//!
//! The core knows nothing of PHP. It is built in floors, each importing only the
//! floors below it (`tools/check/check-layers.php` keeps it so):
//!
//! - `php`: the thin binding, compiled with the default `php` feature;
//! - `kinds`: the hold core (with the one waiting mechanism every kind waits
//!   through), and over it the mutex (with its shared, read mode), the semaphore
//!   and the MultiLock, each with its scripts;
//! - `hold`: the table of holds, the watchdog, an object's claim on its hold;
//! - `topology`: where a key's commands run (one server, Sentinel, Cluster, Redlock);
//! - `net`: one connection stack: sockets and TLS, RESP, the connections and their
//!   registry, pub/sub, scripts on the wire, where a waiter listens;
//! - the ground floor, here: `clock` (the boot clock lease bounds are kept on), `config` (with `values`, `dsn` and `terms`), `keys`, `token`,
//!   `fork_wiped`, `error`, `owner` (who holds what), `stats` (the process's counters)
//!   and `trace` (a debug trace of durable checks, `REDIS_LOCK_TRACE`).
//!
//! `docs/architecture.md` walks through them.

pub mod clock;
pub mod config;
pub mod dsn;
pub mod error;
pub mod exposition;
pub mod fold;
pub mod fork_wiped;
pub mod journal;
pub mod keys;
pub mod meter;
pub mod metrics;
pub mod owner;
pub mod ready;
pub mod stats;
pub mod terms;
pub mod token;
pub mod trace;
pub mod values;

pub mod hold;
pub mod kinds;
pub mod net;
pub mod topology;

#[cfg(feature = "php")]
mod php;
