//! An acquisition an event loop drives (`Pending`): the same rounds as a blocking
//! one (`acquire::Rounds`), stepped by `Holder::poll_pending` whenever the fd it
//! shows (`crate::ready::Ready`) turns readable, instead of a thread sleeping between
//! the steps. A step sends commands and reads their replies, as a blocking wait's
//! does; it never waits for the lock, a grant, or a pause. What it waits for next is
//! the fd's: its timer at the step's instant (a retry, the holder's expiry, the
//! deadline), and the socket its grant may come on. Grants for the waits of one
//! thread may be read by any of them: each goes to its wait's box (`mailbox`).
//!
//! It lives in its object's `Holder` (`Holder::pending`), so that an object that goes
//! away cancels it (`Holder::end`): nothing is left queued, nothing held.

use crate::error::{LockError, Result};
use crate::fork_wiped;
use crate::kinds::core::acquire::{RoundStep, Rounds};
use crate::kinds::core::waiting::{self, Woken};
use crate::kinds::core::{mailbox, Holder, Kind};
use crate::ready::Ready;
use crate::token::Token;
use std::sync::Arc;
use std::time::Instant;

/// An acquisition an event loop drives (see the module comment).
pub(crate) struct Pending {
    rounds: Rounds,
    /// Its token, for its box.
    token: Token,
    at: At,
    /// Its fd, shared with the PHP handle: readable for good once the wait ends.
    ready: Arc<Ready>,
    /// The process it started in: a forked child's copy never cancels it.
    pid: u32,
}

/// What a pending acquisition waits for.
#[derive(Clone, Copy)]
enum At {
    /// The next step is due at this instant.
    Pause(Instant),
    /// A message on its subscriber, until `until` (see `RoundStep::Listen`).
    Listen { until: Instant, exact: bool },
}

impl<K: Kind> Holder<K> {
    /// Starts an acquisition (`acquire` for the arguments) that an event loop drives:
    /// its first steps run now; if they did not end it, it is kept pending
    /// (`self.pending`, `Ok(None)` here) and goes on with `poll_pending`.
    pub(crate) fn start_pending(
        &mut self,
        start: Instant,
        token: Token,
        chosen: bool,
        wait: bool,
    ) -> Result<Option<Token>> {
        let ready = Arc::new(Ready::new().map_err(|e| {
            LockError::InvalidValue(format!(
                "redis-lock: cannot make a file descriptor for an event loop to watch: {e}"
            ))
        })?);
        if !mailbox::open(&token, ready.timer_fd()) {
            return Err(token_waited());
        }
        let mut rounds = self.begin(start, token.clone(), chosen, wait);
        let step = self.advance(&mut rounds);
        let p =
            Pending { rounds, token, at: At::Pause(Instant::now()), ready, pid: fork_wiped::pid() };
        match self.settle(Box::new(p), step) {
            Some(done) => done,
            // Armed for what it waits for, unless that came already.
            None => self.poll_pending().unwrap_or(Ok(None)),
        }
    }

    /// What an event loop watches for the pending acquisition, while there is one.
    pub(crate) fn pending_ready(&self) -> Option<Arc<Ready>> {
        self.pending.as_ref().map(|p| p.ready.clone())
    }

    /// Steps the pending acquisition as far as it goes without waiting: `Some` of its
    /// end (the token; `None`: busy at its deadline), `None` while it goes on (and
    /// when there is none).
    pub(crate) fn poll_pending(&mut self) -> Option<Result<Option<Token>>> {
        let mut p = self.pending.take()?;
        loop {
            let step = match p.at {
                At::Pause(at) if Instant::now() < at => {
                    p.ready.at(at);
                    self.pending = Some(p);
                    return None;
                }
                At::Pause(_) => self.advance(&mut p.rounds),
                At::Listen { mut until, exact } => {
                    let token = p.token.clone();
                    let heard = match p.rounds.ear() {
                        Some(ear) => waiting::hear_now(ear, &token, &mut until),
                        None => Some(Woken::Broken),
                    };
                    match heard {
                        Some(woken) => self.heard(&mut p.rounds, woken, exact),
                        None => {
                            p.at = At::Listen { until, exact };
                            p.ready.at(until);
                            self.pending = Some(p);
                            return None;
                        }
                    }
                }
            };
            match self.settle(p, step) {
                Some(done) => return Some(done),
                None => p = self.pending.take()?,
            }
        }
    }

    /// Ends the pending acquisition, if any, before it is done: nothing of it is left
    /// queued or held (see `Holder::cancel_rounds`). A forked child's copy only forgets it.
    pub(crate) fn cancel_pending(&mut self) {
        let Some(mut p) = self.pending.take() else { return };
        if p.pid != fork_wiped::pid() {
            // The parent's: its listener and queue entry are the parent's to end.
            std::mem::forget(p);
            return;
        }
        self.cancel_rounds(&mut p.rounds);
        mailbox::close(&p.token);
        p.ready.watch(None);
        p.ready.now();
    }

    /// Refuses an acquisition (blocking or not) on an object whose acquisition is
    /// pending, or with a chosen `token` a wait of this thread's has its box open for.
    pub(crate) fn refuse_pending(&self, token: &[u8], chosen: bool) -> Result<()> {
        if self.pending.is_some() {
            return Err(self.busy_pending());
        }
        if chosen && mailbox::is_open(token) {
            return Err(token_waited());
        }
        Ok(())
    }

    /// What an acquisition on an object whose acquisition is pending says.
    fn busy_pending(&self) -> LockError {
        LockError::InvalidValue(format!(
            "redis-lock: an acquisition of this {} is pending (a wait an event loop drives): cancel it, or let it end, first",
            self.c.what
        ))
    }

    /// Takes `step` of `p`: its end, or `p` kept pending (`self.pending`) with its fd
    /// set to what it waits for.
    fn settle(&mut self, mut p: Box<Pending>, step: RoundStep) -> Option<Result<Option<Token>>> {
        match step {
            RoundStep::Done(done) => {
                mailbox::close(&p.token);
                // Readable for good: a loop still watching it polls, and finds it done.
                p.ready.watch(None);
                p.ready.now();
                Some(done)
            }
            RoundStep::Pause(at) => {
                p.at = At::Pause(at);
                p.ready.watch(None);
                self.pending = Some(p);
                None
            }
            RoundStep::Listen { until, exact } => {
                p.at = At::Listen { until, exact };
                let (socket, buffered) = match p.rounds.ear().and_then(|e| e.get()) {
                    Some(sub) => (sub.socket(), sub.buffered()),
                    None => (None, true),
                };
                p.ready.watch(socket);
                if buffered {
                    p.ready.now();
                }
                self.pending = Some(p);
                None
            }
        }
    }
}

/// What a second wait of one token in a thread says (see `mailbox`).
fn token_waited() -> LockError {
    LockError::InvalidValue(
        "redis-lock: this token is already being waited for in this thread (a wait an event loop drives): two waits of one token could not tell their grants apart".to_string(),
    )
}
