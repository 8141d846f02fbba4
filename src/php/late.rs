//! What the core learns after the fact, told to PHP: a release sent unawaited at the
//! end of `synchronized()` whose reply, read at the connection's next use, says the
//! hold was gone before it (`metrics::lost_late`), and a server found able to evict lock
//! keys when a connection to it was made (`stats::evicting`). Each is counted whenever
//! it is found; it becomes an `E_WARNING` (the first) or a line of PHP's error log as a
//! warning (the second, `log`) only when it is found during a call of one
//! of the extension's methods or functions on this thread (`Core`, `InCall`), never
//! from request end, an object's destructor, a thread's end or the watchdog's thread,
//! where the engine may not take one.

use ext_php_rs::error::php_error;
use ext_php_rs::flags::ErrorType;
use std::cell::{Cell, RefMut};
use std::ops::{Deref, DerefMut};

thread_local! {
    /// How many of the extension's method calls are running on this thread (more than
    /// one when `synchronized()`'s callable calls another).
    static IN_CALL: Cell<u32> = const { Cell::new(0) };
    /// Set while an object's end runs the core through a method's path (`outside`).
    static OUTSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the core may warn now: inside a method call, and not in an object's end.
fn may_warn() -> bool {
    IN_CALL.try_with(Cell::get).unwrap_or(0) > 0 && !OUTSIDE.try_with(Cell::get).unwrap_or(true)
}

/// Runs `f` as an object's end (a `LockWait` dropped cancels its wait through its
/// object's core): no warning is raised while it runs, as none is from any object's end.
pub(super) fn outside<R>(f: impl FnOnce() -> R) -> R {
    let was = OUTSIDE.try_with(|o| o.replace(true)).unwrap_or(false);
    let out = f();
    let _ = OUTSIDE.try_with(|o| o.set(was));
    out
}

/// The core's warning: raised only inside a method call (see the module comment);
/// whether it was.
pub(super) fn warn(message: &str) -> bool {
    let inside = may_warn();
    if inside {
        php_error(&ErrorType::Warning, message);
    }
    inside
}

/// The core's log line (a deployment finding, not an error of the call: a framework
/// that turns warnings into exceptions must not fail the lock call for it), written to
/// PHP's error log as a warning; only inside a method call, as `warn`. Whether it was.
pub(super) fn log(message: &str) -> bool {
    let inside = may_warn();
    if inside {
        let Ok(text) = std::ffi::CString::new(message.replace('\0', " ")) else { return false };
        return super::engine::log_warning(&text);
    }
    inside
}

/// A call of one of the extension's methods (inside `Core`) or functions
/// (`redis_lock_scan()`, which connects without any object's core): warnings may be
/// raised while it lives.
pub(super) struct InCall(());

impl InCall {
    pub(super) fn new() -> Self {
        IN_CALL.with(|n| n.set(n.get() + 1));
        InCall(())
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        IN_CALL.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// A method call of the extension, for as long as it holds its object's core.
pub(super) struct Core<'a, T> {
    inner: RefMut<'a, T>,
    _call: InCall,
}

impl<'a, T> Core<'a, T> {
    pub(super) fn new(inner: RefMut<'a, T>) -> Self {
        Core { inner, _call: InCall::new() }
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
