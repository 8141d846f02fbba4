//! The process id, read from the OS once per call into the core rather than at
//! every step of it: `getpid()` is a system call, and a lock cycle took six.
//!
//! Each entry point of the core (`Lock`'s public methods, its `Drop`, request and
//! module shutdown) calls `refresh()` first; everything below it reads `current()`.
//! A forked child therefore sees its own pid from its first call on, and nothing
//! carries a pid across PHP code that may fork (the callable of `synchronized()`).

use std::sync::atomic::{AtomicU32, Ordering};

static PID: AtomicU32 = AtomicU32::new(0);

/// Reads the pid from the OS and remembers it for `current()`.
pub fn refresh() -> u32 {
    let pid = std::process::id();
    PID.store(pid, Ordering::Relaxed);
    pid
}

/// The pid as of the last `refresh()` (read from the OS if there was none).
pub fn current() -> u32 {
    match PID.load(Ordering::Relaxed) {
        0 => refresh(),
        pid => pid,
    }
}
