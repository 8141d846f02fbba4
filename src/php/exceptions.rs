//! The exception classes, and the one mapping from the core's error onto them.

use crate::error::LockError;
use ext_php_rs::exception::PhpException;
use ext_php_rs::ffi::zend_class_entry;
use ext_php_rs::prelude::*;
use ext_php_rs::zend::{ce, ClassEntry};

extern "C" {
    // Exported by PHP's SPL, which is always built in and starts before us.
    static spl_ce_RuntimeException: *mut zend_class_entry;
}

fn runtime_exception() -> &'static ClassEntry {
    // SAFETY: a pointer set once by SPL's startup and never freed before shutdown.
    unsafe { spl_ce_RuntimeException.as_ref() }.unwrap_or_else(ce::exception)
}

/// Base class of every error raised because Redis itself failed.
#[php_class]
#[php(extends(ce = runtime_exception, stub = "\\RuntimeException"))]
#[derive(Default)]
pub struct LockException;

/// Redis is unreachable, timed out, refused authentication or broke the protocol.
/// The message names the address and the cause, never a password.
#[php_class]
#[php(extends(LockException))]
#[derive(Default)]
pub struct LockConnectionException;

/// The lock could not be had in time, for the APIs that throw instead of returning false.
#[php_class]
#[php(extends(LockException))]
#[derive(Default)]
pub struct LockTimeoutException;

impl From<LockError> for PhpException {
    fn from(e: LockError) -> Self {
        let message = e.to_string();
        match e {
            LockError::InvalidValue(_) => PhpException::new(message, 0, ce::value_error()),
            LockError::InvalidType(_) => PhpException::new(message, 0, ce::type_error()),
            LockError::Connection { .. } => PhpException::from_class::<LockConnectionException>(message),
            LockError::Server { .. } | LockError::Random(_) => PhpException::from_class::<LockException>(message),
        }
    }
}
