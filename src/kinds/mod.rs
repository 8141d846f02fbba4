//! The kinds of hold, each beside its own Lua scripts: the mutex (`lock`, with the
//! scripts in `scripts`), its shared (read) mode (`shared`), and the semaphore
//! (`semaphore`); and `catalog`, what the masters hold under a prefix. A kind
//! decides what to send and what the replies mean; where it runs is `topology`'s,
//! how it waits is `wait`'s, and keeping it held is `hold`'s.

// First: the Lua helper macros are used by the modules after it.
#[macro_use]
pub mod scripts;
pub mod catalog;
pub mod lock;
pub mod semaphore;
pub mod shared;
