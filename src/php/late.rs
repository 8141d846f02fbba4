//! What the core learns after the fact, told to PHP: a release sent unawaited at the
//! end of `synchronized()` whose reply, read at the connection's next use, says the
//! hold was gone before it (`stats::lost_late`). It is counted in `lost` whenever it
//! is read; it becomes an `E_WARNING` only when it is read during a call of one of
//! the extension's methods on this thread (`InCall`), never from request end, an
//! object's destructor or a thread's end, where the engine may not take one.

use ext_php_rs::error::php_error;
use ext_php_rs::flags::ErrorType;
use std::cell::{Cell, RefMut};
use std::ops::{Deref, DerefMut};

thread_local! {
    /// How many of the extension's method calls are running on this thread (more than
    /// one when `synchronized()`'s callable calls another).
    static IN_CALL: Cell<u32> = const { Cell::new(0) };
}

/// The core's warning: raised only inside a method call (see the module comment).
pub(super) fn warn(message: &str) {
    if IN_CALL.with(Cell::get) > 0 {
        php_error(&ErrorType::Warning, message);
    }
}

/// A method call of the extension, for as long as it holds its object's core.
pub(super) struct Core<'a, T> {
    inner: RefMut<'a, T>,
}

impl<'a, T> Core<'a, T> {
    pub(super) fn new(inner: RefMut<'a, T>) -> Self {
        IN_CALL.with(|n| n.set(n.get() + 1));
        Core { inner }
    }
}

impl<T> Drop for Core<'_, T> {
    fn drop(&mut self) {
        IN_CALL.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

impl<T> Deref for Core<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for Core<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}
