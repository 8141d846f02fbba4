//! What this process holds, and keeping it held.
//!
//! `table` is the per-process, fork-aware table of holds, each naming the thread
//! whose request took it (request end releases what that thread's script forgot;
//! the watchdog renews from it); `watchdog` is the one renewal
//! thread per process, which renews each hold with what its kind handed over (a
//! script and its keys) and knows no kind; `claim` is an object's claim on its last
//! hold, which records holds and starts the watchdog.

pub mod claim;
pub mod table;
pub mod watchdog;
