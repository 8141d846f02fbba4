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

/// An object whose acquisition an event loop drives (`core::pending`): each kind's
/// `start` begins it; these step it, show its fd, and end it early.
pub trait Driven {
    /// Steps the pending acquisition without waiting: `Some` of its end, `None`
    /// while it goes on (or when none is pending).
    fn poll(&mut self) -> Option<crate::error::Result<Option<crate::token::Token>>>;
    /// What an event loop watches, while one is pending.
    fn pending_ready(&self) -> Option<std::sync::Arc<crate::ready::Ready>>;
    /// Ends the pending acquisition, leaving nothing queued or held.
    fn cancel(&mut self);
}

macro_rules! driven {
    ($t:ty) => {
        impl Driven for $t {
            fn poll(&mut self) -> Option<crate::error::Result<Option<crate::token::Token>>> {
                self.h.poll_pending()
            }
            fn pending_ready(&self) -> Option<std::sync::Arc<crate::ready::Ready>> {
                self.h.pending_ready()
            }
            fn cancel(&mut self) {
                self.h.cancel_pending()
            }
        }
    };
}

driven!(lock::Lock);
driven!(semaphore::Semaphore);
driven!(multi::MultiLock);
