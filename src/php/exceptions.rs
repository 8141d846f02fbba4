//! The exception classes, and the one mapping from the core's error onto them.
//!
//! They are plain PHP classes built with `ClassBuilder`, not `#[php_class]`
//! structs: they carry no Rust state and keep `RuntimeException`'s constructor,
//! so applications can create and rethrow them like any other exception.

use super::engine;
use crate::error::LockError;
use ext_php_rs::builders::ClassBuilder;
use ext_php_rs::exception::PhpException;
use ext_php_rs::zend::{ce, ClassEntry};
use std::sync::atomic::{AtomicPtr, Ordering};

static LOCK_EXCEPTION: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static CONNECTION_EXCEPTION: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static TIMEOUT_EXCEPTION: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());
static LOST_EXCEPTION: AtomicPtr<ClassEntry> = AtomicPtr::new(std::ptr::null_mut());

fn runtime_exception() -> &'static ClassEntry {
    engine::runtime_exception().unwrap_or_else(ce::exception)
}

fn loaded(slot: &AtomicPtr<ClassEntry>) -> &'static ClassEntry {
    // SAFETY: set once at module startup to an entry the engine keeps until shutdown.
    unsafe { slot.load(Ordering::Acquire).as_ref() }.unwrap_or_else(runtime_exception)
}

/// `LockException extends RuntimeException`: Redis itself failed.
pub fn lock_exception() -> &'static ClassEntry {
    loaded(&LOCK_EXCEPTION)
}

/// `LockConnectionException extends LockException`: unreachable, timed out,
/// refused authentication, protocol error, a server not serving for now (LOADING, a failover).
pub fn connection_exception() -> &'static ClassEntry {
    loaded(&CONNECTION_EXCEPTION)
}

/// `LockTimeoutException extends LockException`: `synchronized()` could not have the
/// lock within `$timeOut` (the APIs that return false instead do not throw it).
pub fn timeout_exception() -> &'static ClassEntry {
    loaded(&TIMEOUT_EXCEPTION)
}

/// `LockLostException extends LockException`: `synchronized()`'s callable returned,
/// but the hold had not lasted to the release (the watchdog or the release found its
/// token gone): the work ran without exclusivity, and its result is not returned.
pub fn lost_exception() -> &'static ClassEntry {
    loaded(&LOST_EXCEPTION)
}

type Parent = (fn() -> &'static ClassEntry, &'static str);
type Keep = fn(&'static mut ClassEntry, Box<[Box<[ext_php_rs::ffi::zend_internal_arg_info]>]>);

fn register(name: &str, parent: Parent, keep: Keep) -> bool {
    ClassBuilder::new(name).extends(parent).registration(keep).register().is_ok()
}

/// Registers the four classes; module startup only.
pub fn register_all() -> bool {
    register("LockException", (runtime_exception, "RuntimeException"), |ce, _| {
        LOCK_EXCEPTION.store(ce, Ordering::Release)
    }) && register("LockConnectionException", (lock_exception, "LockException"), |ce, _| {
        CONNECTION_EXCEPTION.store(ce, Ordering::Release)
    }) && register("LockTimeoutException", (lock_exception, "LockException"), |ce, _| {
        TIMEOUT_EXCEPTION.store(ce, Ordering::Release)
    }) && register("LockLostException", (lock_exception, "LockException"), |ce, _| {
        LOST_EXCEPTION.store(ce, Ordering::Release)
    })
}

impl From<LockError> for PhpException {
    fn from(e: LockError) -> Self {
        let (message, class) = parts(e);
        PhpException::new(message, 0, class)
    }
}

/// The message and class of the exception `e` becomes, counted among
/// `redis_lock_stats()`'s errors when it is Redis trouble (not a bad argument).
pub(super) fn parts(e: LockError) -> (String, &'static ext_php_rs::zend::ClassEntry) {
    let message = e.to_string();
    if !matches!(e, LockError::InvalidValue(_) | LockError::InvalidType(_)) {
        crate::stats::note(crate::stats::Counter::Errors);
    }
    let class = match e {
        LockError::InvalidValue(_) => ce::value_error(),
        LockError::InvalidType(_) => ce::type_error(),
        LockError::Connection { .. } | LockError::Passing { .. } | LockError::NotDurable { .. } => {
            connection_exception()
        }
        LockError::Timeout { .. } => timeout_exception(),
        LockError::Lost { .. } => lost_exception(),
        LockError::Server { .. }
        | LockError::Unfenced { .. }
        | LockError::PermitsMismatch { .. }
        | LockError::Random(_) => lock_exception(),
    };
    (message, class)
}
