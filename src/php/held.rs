//! `synchronized()` for every class: the callable runs while the hold is held, and the
//! hold is released whatever happens.

use crate::token::Token;
use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendCallable, Zval};
use ext_php_rs::zend::{bailout, try_catch, CatchError};
use std::cell::RefCell;
use std::panic::AssertUnwindSafe;

/// What `synchronized()` needs of a core object once its callable has run.
pub(super) trait Synchronizable {
    /// Releases after a normal return: an error when the hold was lost meanwhile.
    fn finish(&mut self, token: &[u8]) -> crate::error::Result<()>;
    /// Releases after anything else, without waiting for the answer, ignoring errors
    /// (the lease ends it then).
    fn release_unseen(&mut self, token: &[u8]);
}

/// Runs `callable` while the hold `token` of `core` is held, then releases it
/// whatever happens, so that the callable's own exception, `exit()` or fatal error
/// is what the caller sees; after a normal return, a hold lost meanwhile is an error.
pub(super) fn run_held<H: Synchronizable>(
    callable: ZendCallable,
    token: Token,
    core: &RefCell<H>,
) -> PhpResult<Zval> {
    let busy = || PhpException::from_message("redis-lock: the object is busy".to_string());
    let finish = |token: &[u8]| -> PhpResult<()> {
        Ok(core.try_borrow_mut().map_err(|_| busy())?.finish(token)?)
    };
    let release_unseen = |token: &[u8]| {
        if let Ok(mut core) = core.try_borrow_mut() {
            core.release_unseen(token);
        }
    };
    let ran = try_catch(AssertUnwindSafe(|| callable.try_call(vec![])));
    let release_unseen = || release_unseen(&token);
    match ran {
        Ok(Ok(value)) => {
            finish(&token)?;
            Ok(value)
        }
        // It threw (or called exit()): its exception stays pending.
        Ok(Err(ext_php_rs::error::Error::ExceptionPending { .. })) => {
            release_unseen();
            Ok(Zval::new())
        }
        Err(CatchError::Bailout) => {
            release_unseen();
            drop(token);
            // A fatal error: the engine goes on unwinding to its own handler.
            // SAFETY: nothing owned by this frame is left to drop (the caller's frame
            // owns nothing either: the token was moved here).
            unsafe { bailout() }
        }
        // The call itself failed, with no exception of its own to show for it.
        Ok(Err(e)) => {
            release_unseen();
            Err(PhpException::from_message(format!(
                "redis-lock: synchronized() could not call $fn: {e}"
            )))
        }
        Err(e) => {
            release_unseen();
            Err(PhpException::from_message(format!(
                "redis-lock: synchronized() could not call $fn: {e:?}"
            )))
        }
    }
}
