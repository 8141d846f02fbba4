//! The PHP `LockWait` class: an acquisition an event loop drives (`kinds::Driven`),
//! started by `Lock::addLockAsync()`, `Lock::addReadLockAsync()`,
//! `Semaphore::acquireAsync()` and `MultiLock::addLockAsync()`.
//!
//! The acquisition lives in its object (so that the object's end cancels it); the
//! handle keeps the object alive, shows the fd as a PHP stream, and keeps the end.

use crate::kinds::Driven;
use crate::ready::Ready;
use crate::token::Token;
use ext_php_rs::class::RegisteredClass;
use ext_php_rs::exception::PhpException;
use ext_php_rs::flags::ClassFlags;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendClassObject, ZendObject, Zval};
use ext_php_rs::zend::{ce, ClassEntry};
use std::cell::RefCell;
use std::sync::Arc;

/// How a handle reaches its object's core: each class gives its own (`Lock::reach`…),
/// which runs the function on the core of an object of that class.
pub(super) type Reach = fn(&ZendObject, &mut dyn FnMut(&mut dyn Driven)) -> PhpResult<()>;

/// `obj` as an object of class `T` (for a class's `Reach`).
pub(super) fn object<T: RegisteredClass>(obj: &ZendObject) -> PhpResult<&ZendClassObject<T>> {
    ZendClassObject::<T>::from_zend_obj(obj)
        .ok_or_else(|| PhpException::from_message("redis-lock: LockWait lost its object".into()))
}

enum State {
    Pending,
    /// Acquired (the token), or not by the deadline (`None`).
    Done(Option<Token>),
    /// Redis trouble (or a refusal): the exception, thrown by each `result()`.
    Failed(String, &'static ClassEntry),
    Cancelled,
}

/// An acquisition in progress that PHP's own event loop waits on, instead of the
/// process blocking: `Lock::addLockAsync()`, `Lock::addReadLockAsync()`,
/// `Semaphore::acquireAsync()` and `MultiLock::addLockAsync()` return one. Its
/// `stream()` turns readable when there is something to do; `poll()` does it, without
/// waiting for the lock, and says whether the acquisition has ended; `result()` is
/// then what the blocking call would have returned (the token, or false at the
/// deadline), or throws what it would have thrown. `cancel()`, the handle's end, its
/// object's end and request end each leave nothing queued and nothing held.
///
/// Waiting is the same as a blocking wait's: fair hand-over, fencing, the watchdog,
/// durable grants and every topology. Each poll() sends at most a few commands, one
/// round trip each; it never sleeps.
#[php_class]
#[php(flags = ClassFlags::Final)]
pub struct LockWait {
    /// The object, kept alive while the handle lives.
    owner: Zval,
    reach: Reach,
    state: RefCell<State>,
    /// The stream PHP's loop watches (made on the first `stream()`).
    stream: RefCell<Option<Zval>>,
    /// The fd the stream shows (`None`: the wait ended at once).
    ready: Option<Arc<Ready>>,
}

/// What starting an acquisition for an event loop came to.
pub(super) fn started(
    owner: &mut ZendObject,
    reach: Reach,
    outcome: crate::error::Result<Option<Token>>,
    ready: Option<Arc<Ready>>,
) -> PhpResult<LockWait> {
    let token = outcome?;
    let mut zv = Zval::new();
    zv.set_object(owner);
    let state = if ready.is_some() { State::Pending } else { State::Done(token) };
    Ok(LockWait { owner: zv, reach, state: RefCell::new(state), stream: RefCell::new(None), ready })
}

impl LockWait {
    /// Runs `f` on the object's core; `None` when the object is gone (request end).
    fn with_owner<R>(&self, f: impl FnOnce(&mut dyn Driven) -> R) -> PhpResult<Option<R>> {
        let Some(obj) = self.owner.object() else { return Ok(None) };
        // At request end PHP frees objects in any order: one it has freed already
        // (IS_OBJ_FREE_CALLED) cancelled its own acquisition.
        // SAFETY: type_info is the u32 view of the header's flags, always set.
        if unsafe { obj.gc.u.type_info } & (1 << 9) != 0 {
            return Ok(None);
        }
        let mut f = Some(f);
        let mut out = None;
        (self.reach)(obj, &mut |d| out = f.take().map(|f| f(d)))?;
        Ok(out)
    }

    fn finish(&self, done: crate::error::Result<Option<Token>>) {
        let state = match done {
            Ok(token) => State::Done(token),
            Err(e) => {
                let (message, class) = super::exceptions::parts(e);
                State::Failed(message, class)
            }
        };
        *self.state.borrow_mut() = state;
    }
}

#[php_impl]
impl LockWait {
    /// Made only by the objects' async methods.
    pub fn __construct() -> PhpResult<Self> {
        Err(PhpException::new(
            "LockWait cannot be made with new: use Lock::addLockAsync() and the like".into(),
            0,
            ce::error(),
        ))
    }

    /// The stream to watch for readability (stream_select(), Amp\Loop::onReadable(),
    /// Revolt's EventLoop::onReadable(), ReactPHP's addReadStream(), Swoole's
    /// Coroutine\System::waitEvent()); when readable, call poll(). Never read from it.
    /// The same stream every call. Under stream_select() it must be below FD_SETSIZE
    /// (1024), as for any stream.
    ///
    /// @return resource
    pub fn stream(&self) -> PhpResult<Zval> {
        if let Some(s) = self.stream.borrow().as_ref() {
            return Ok(s.shallow_clone());
        }
        // SAFETY: plain syscalls on fds of our own; PHP gets a copy, which it closes.
        let fd = unsafe {
            match &self.ready {
                Some(ready) => libc::fcntl(ready.fd(), libc::F_DUPFD_CLOEXEC, 0),
                // Ended at once: a stream that is readable at once (an eventfd holding 1).
                None => libc::eventfd(1, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK),
            }
        };
        if fd < 0 {
            return Err(PhpException::from_message(format!(
                "redis-lock: cannot make a stream to watch: {}",
                std::io::Error::last_os_error()
            )));
        }
        let s = super::engine::stream_from_fd(fd).ok_or_else(|| {
            PhpException::from_message("redis-lock: PHP could not make a stream to watch".into())
        })?;
        let out = s.shallow_clone();
        *self.stream.borrow_mut() = Some(s);
        Ok(out)
    }

    /// Does what is due (a try, a grant read, a retry, the deadline) without waiting
    /// for the lock, and says whether the acquisition has ended (then see result()).
    pub fn poll(&self) -> PhpResult<bool> {
        if !matches!(*self.state.borrow(), State::Pending) {
            return Ok(true);
        }
        match self.with_owner(|o| (o.poll(), o.pending_ready().is_some()))? {
            Some((Some(done), _)) => self.finish(done),
            Some((None, true)) => return Ok(false),
            // Its object ended it (it went away, or a forked child's copy): cancelled.
            Some((None, false)) | None => *self.state.borrow_mut() = State::Cancelled,
        }
        Ok(true)
    }

    /// Whether the acquisition has ended (without doing anything: see poll()).
    pub fn is_done(&self) -> bool {
        !matches!(*self.state.borrow(), State::Pending)
    }

    /// What the blocking call would have returned: the token, or false when the
    /// deadline passed (or the wait was cancelled); or it throws what that call would
    /// have thrown (LockConnectionException…), at each call.
    ///
    /// @return string|false
    /// @throws Error while the acquisition goes on (poll() returned false)
    pub fn result(&self) -> PhpResult<Zval> {
        match &*self.state.borrow() {
            State::Pending => Err(PhpException::new(
                "LockWait::result(): the acquisition is still pending: poll() until it returns true".into(),
                0,
                ce::error(),
            )),
            State::Done(token) => Ok(super::args::token_zval(token.clone())),
            State::Failed(message, class) => Err(PhpException::new(message.clone(), 0, class)),
            State::Cancelled => Ok(super::args::token_zval(None)),
        }
    }

    /// Ends a pending acquisition: it leaves the queue, and a hold handed over
    /// meanwhile is released. result() is false after it, and the stream readable,
    /// so that a loop still watching it polls and finds it done. Does nothing once
    /// it ended.
    pub fn cancel(&self) -> PhpResult<()> {
        if matches!(*self.state.borrow(), State::Pending) {
            self.with_owner(|o| o.cancel())?;
            *self.state.borrow_mut() = State::Cancelled;
        }
        Ok(())
    }
}

impl Drop for LockWait {
    /// A handle dropped while pending cancels its acquisition.
    fn drop(&mut self) {
        if matches!(*self.state.borrow(), State::Pending) {
            let _ = super::late::outside(|| self.with_owner(|o| o.cancel()));
        }
    }
}

/// Starts an acquisition for an event loop on `obj` (`start` on its core) and wraps it.
pub(super) fn start<T: RegisteredClass>(
    obj: &mut ZendClassObject<T>,
    reach: Reach,
    start: impl FnOnce(&T) -> PhpResult<(crate::error::Result<Option<Token>>, Option<Arc<Ready>>)>,
) -> PhpResult<LockWait> {
    let (outcome, ready) = start(obj)?;
    started(obj.get_mut_zend_obj(), reach, outcome, ready)
}
