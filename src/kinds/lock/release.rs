//! The way out: the release script on the key's server, or on every node of a
//! Redlock, and request end's release of whatever the process still holds.

use super::*;

/// Releases every lock this process still holds (request end). Errors are ignored:
/// a lock that cannot be released now runs out with its lease.
pub fn release_all_held() {
    for hold in table::take_auto_released() {
        release_hold(&hold);
    }
}

/// Releases a hold left at its object's end or the request's, whatever its kind.
/// Errors are ignored: a hold that cannot be released now runs out with its lease.
pub(super) fn release_hold(hold: &Hold) {
    if hold.lost {
        return;
    }
    let _ = match hold.kind {
        Kind::Write => release_token(&hold.route, hold.quorum.as_deref(), &hold.keys, Release::Token(&hold.token, false)).map(drop),
        Kind::Read => release_token(&hold.route, None, &hold.keys, Release::Read(&hold.token)).map(drop),
        Kind::Permits => semaphore::release(&hold.route, &hold.keys, &hold.token).map(drop),
    };
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

/// Runs the release script: on every node of a Redlock, on the key's server otherwise.
pub(super) fn release_token(route: &Route, quorum: Option<&Quorum>, keys: &LockKeys, what: Release) -> Result<Released> {
    let yes = |done: bool| if done { Released::Yes } else { Released::No };
    let (token, short, force): (&[u8], bool, &[u8]) = match what {
        Release::Token(t, short) => (t, short, b"0"),
        Release::Read(t) => (t, false, b"0"),
        Release::Any => (b"", false, b"1"),
    };
    if let Some(q) = quorum {
        return q.release(&Call::Script(&RELEASE, &keys.all(), &[token, b"0", PATIENCE_MS.as_bytes(), force])).map(yes);
    }
    let read_release = || -> Result<Released> {
        let released = route.run(Retry::IfStale, |conn, _| READ_RELEASE.run(conn, &keys.all(), &[token, PATIENCE_MS.as_bytes()]))?;
        Ok(yes(resp::int(&released) == Some(1)))
    };
    if matches!(what, Release::Read(_)) {
        return read_release();
    }
    let released = route.run(Retry::IfStale, |conn, _| {
        let short: &[u8] = if short { b"1" } else { b"0" };
        RELEASE.run(conn, &keys.all(), &[token, short, PATIENCE_MS.as_bytes(), force])
    })?;
    match resp::int(&released) {
        Some(1) => Ok(Released::Yes),
        Some(2) => Ok(Released::LeftFree),
        // Held by readers: the token may be one of them.
        Some(-1) => read_release(),
        _ => Ok(Released::No),
    }
}
