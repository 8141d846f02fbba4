//! The way out: the release script where the key lives (`Route::ask`), and request
//! end's release of whatever the process still holds.
//!
//! The releases nobody waits on (an object's end, request end, and `synchronized()`'s
//! end while the lease surely lasts) are sent unawaited (`Route::fire`): one round
//! trip fewer, their answers read at the connection's next use. Commands sent later
//! on the same connection run after them. A connection lost before the answer
//! came means what a crash means: the lease ends the hold.

use super::*;

/// Releases every lock the calling thread's request still holds (request end). Errors
/// are ignored: a lock that cannot be released now runs out with its lease.
pub fn release_all_held() {
    for hold in table::take_auto_released() {
        release_hold(&hold);
    }
}

/// The end of a handled request under a worker SAPI (see `table::end_handled_request`):
/// releases what was taken during it, as request end would.
pub fn release_handled_request_held() {
    for hold in table::end_handled_request() {
        release_hold(&hold);
    }
}

/// Releases a hold left at its object's end or the request's, whatever its kind.
/// Errors are ignored: a hold that cannot be released now runs out with its lease.
pub(super) fn release_hold(hold: &Hold) {
    if hold.lost.is_some() {
        return;
    }
    let _ = fire_release(&hold.route, &hold.keys, hold.kind, &hold.token, false, None);
}

/// Sends the release of the hold `token` of `kind` without waiting for its answer
/// (see the module comment); `short` as in `Release::Token`; its reply is checked
/// against `watch` when it is read.
pub(super) fn fire_release(route: &Route, keys: &LockKeys, kind: Kind, token: &[u8], short: bool, watch: Option<Watch>) -> Result<()> {
    if token.is_empty() {
        return Ok(());
    }
    let all = keys.all();
    let short: &[u8] = if short { b"1" } else { b"0" };
    match kind {
        // 1 released, 2 freed for a re-take; 0 (not held) and -1 (read mode) mean gone.
        Kind::Write => route.fire(&Call::Script(&RELEASE, &all, &[token, short, PATIENCE_MS.as_bytes()]), watch)?,
        Kind::Read => route.fire(&Call::Script(&READ_RELEASE, &all, &[token, PATIENCE_MS.as_bytes()]), watch)?,
        Kind::Permits => return semaphore::fire_release(route, keys, token, watch),
    }
    crate::stats::note(crate::stats::Counter::Released);
    Ok(())
}

/// What a release removes.
pub(super) enum Release<'a> {
    /// The hold of this token (a reader's too); `true`: a short hold (see the module
    /// comment).
    Token(&'a [u8], bool),
    /// The read share of this token.
    Read(&'a [u8]),
    /// Whatever holds the key (`forceReleaseLock()`).
    Any,
}


/// What a release did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Released {
    /// The token did not hold the key.
    No,
    /// Deleted, or handed to a waiter.
    Yes,
    /// Only freed, for the releaser's re-take, while waiters are queued.
    LeftFree,
}

/// Runs the release script where the key lives (on a Redlock quorum, what a
/// majority answered counts).
pub(super) fn release_token(route: &Route, keys: &LockKeys, what: Release) -> Result<Released> {
    let released = release_once(route, keys, what)?;
    if released != Released::No {
        crate::stats::note(crate::stats::Counter::Released);
    }
    Ok(released)
}

fn release_once(route: &Route, keys: &LockKeys, what: Release) -> Result<Released> {
    let (token, short) = match what {
        // No token is empty: the empty one is the script's sign of a forced release.
        Release::Token(t, _) | Release::Read(t) if t.is_empty() => return Ok(Released::No),
        Release::Token(t, short) => (t, short),
        Release::Read(t) => (t, false),
        Release::Any => (&b""[..], false),
    };
    let all = keys.all();
    let read_release = || -> Result<Released> {
        let released = route.ask(&Call::Script(&READ_RELEASE, &all, &[token, PATIENCE_MS.as_bytes()]))?;
        Ok(if resp::int(&released) == Some(1) { Released::Yes } else { Released::No })
    };
    if matches!(what, Release::Read(_)) {
        return read_release();
    }
    let short: &[u8] = if short { b"1" } else { b"0" };
    // A forced release sends the empty token (`Release::Any`).
    let released = route.ask(&Call::Script(&RELEASE, &all, &[token, short, PATIENCE_MS.as_bytes()]))?;
    match resp::int(&released) {
        Some(1) => Ok(Released::Yes),
        Some(2) => Ok(Released::LeftFree),
        // Held by readers: the token may be one of them.
        Some(-1) => read_release(),
        _ => Ok(Released::No),
    }
}
