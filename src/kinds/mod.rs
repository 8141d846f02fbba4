//! The kinds of hold, each beside its own Lua scripts: the mutex (`lock`, with the
//! scripts in `scripts`; every script's Lua is in `lua/`, one file each), its shared (read) mode (`shared`), and the semaphore
//! (`semaphore`); several keys at once (`multi`); `retake`, what this process remembers of the locks it used lately
//! (shared by the mutex and the semaphore); and `catalog`, what the masters hold
//! under a prefix. A kind
//! decides what to send and what the replies mean; where it runs is `topology`'s,
//! how it waits is `wait`'s, and keeping it held is `hold`'s.

pub mod catalog;
pub mod lua;
pub(crate) mod retake;
pub mod lock;
pub mod multi;
pub mod scripts;
pub mod semaphore;
pub mod shared;

