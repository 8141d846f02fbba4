//! The one error type of the core. The PHP binding maps each variant onto an
//! exception class (see `php::exceptions`), so the core never names PHP.

use thiserror::Error;

/// Everything that can go wrong in the core.
#[derive(Debug, Error)]
pub enum LockError {
    /// An argument or setting has a value outside its domain (PHP `ValueError`).
    #[error("{0}")]
    InvalidValue(String),

    /// An argument or setting has the wrong type (PHP `TypeError`).
    #[error("{0}")]
    InvalidType(String),

    /// Redis could not be reached, timed out, refused authentication or the TLS
    /// handshake, or broke the protocol. `addr` never carries credentials. `sent`:
    /// whether a command may have reached Redis before the failure (otherwise the
    /// failure came while connecting, and nothing was done).
    #[error("redis-lock: cannot talk to Redis at {addr}: {cause}")]
    Connection { addr: String, cause: String, sent: bool },

    /// Redis is in a passing state that refused the command (LOADING its data,
    /// MASTERDOWN, TRYAGAIN or CLUSTERDOWN on a cluster, READONLY on a replica mid-failover,
    /// BUSY with a long script), or a failover is in progress (a cluster slot whose
    /// master is gone and not replaced yet, sentinels that name a master gone or
    /// demoted): an acquisition with time to wait waits it out, and reports this when
    /// its deadline passes. `cause` names the state.
    #[error("redis-lock: Redis at {addr} is not serving for now: {cause}")]
    Passing { addr: String, cause: String, sent: bool },

    /// A durable grant (`durable`, `durable_aof`) was not acknowledged in time, and
    /// was undone: an acquisition with time to wait waits on, and reports this when
    /// its deadline passes. `cause` says what acknowledged it.
    #[error("redis-lock: Redis at {addr} could not make the {what} durable: {cause}")]
    NotDurable { addr: String, what: &'static str, cause: String },

    /// Redis answered, but with an error (OOM, NOPERM, ...).
    #[error("redis-lock: Redis at {addr} replied with an error: {cause}")]
    Server { addr: String, cause: String },

    /// The lock (or semaphore: `what`) could not be had within the wait
    /// (`synchronized()`); `key` is shown as given, lossily decoded.
    #[error("redis-lock: could not acquire the {what} \"{key}\" within {waited} s")]
    Timeout { what: &'static str, key: String, waited: f64 },

    /// A hold was found no longer held by the token that took it, when the work it
    /// protected finished (`synchronized()`); `seen` says when that was found.
    #[error("redis-lock: the {what} \"{key}\" was lost before the work finished (its lease ran out, or someone else took it; {seen}): part of the work ran unprotected")]
    Lost { what: &'static str, key: String, seen: String },

    /// A semaphore was used with another number of permits than its current holders
    /// agreed on: obeying either would break the other's limit.
    #[error("redis-lock: the semaphore \"{key}\" is held with {stored} permits, not {given}: every user of a semaphore must give the same number")]
    PermitsMismatch { key: String, stored: i64, given: u32 },

    /// A fencing token was asked of a lock that this object no longer holds, for an
    /// acquisition that issued none: a number taken now would not be its holder's.
    #[error("redis-lock: no fencing token for the lock \"{key}\": this object no longer holds it (its lease ran out, someone else took it, or it was released)")]
    Unfenced { key: String },

    /// The operating system could not produce random bytes for a token.
    #[error("redis-lock: the OS random generator failed: {0}")]
    Random(String),
}

/// Error replies that pass with time: a script still running, a server loading its
/// data or between masters, a cluster resharding, a master short of the replicas
/// its `min-replicas-to-write` asks for (refused whole: a script's first write).
const PASSING: [&str; 7] =
    ["BUSY", "LOADING", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN", "READONLY", "NOREPLICAS"];

impl LockError {
    /// Whether this is a passing state of the server (`PASSING`: loading its data,
    /// between masters, a cluster resharding): an acquisition with time to wait waits
    /// it out, even on its first try.
    pub(crate) fn is_passing(&self) -> bool {
        match self {
            LockError::Passing { .. } => true,
            LockError::Server { cause, .. } => passing_code(cause),
            _ => false,
        }
    }

    /// Whether waiting may get past this error: Redis trouble on the network, or an
    /// error reply of a passing kind (`PASSING`). Any other error reply (an ACL
    /// refusal, a wrong type) says the same again.
    pub(crate) fn may_pass(&self) -> bool {
        match self {
            LockError::Server { cause, .. } => passing_code(cause),
            _ => true,
        }
    }

    /// Whether a command may have reached Redis before this failure (`sent`).
    pub(crate) fn sent(&self) -> bool {
        matches!(
            self,
            LockError::Connection { sent: true, .. } | LockError::Passing { sent: true, .. }
        )
    }

    /// This error, ending an acquisition that waited `waited` for a passing state to
    /// pass: a passing state says for how long it lasted.
    pub(crate) fn after_waiting(self, waited: std::time::Duration) -> Self {
        match self {
            LockError::Passing { addr, cause, sent } => LockError::Passing {
                addr,
                cause: format!("{cause}; still so after {:.1} s", waited.as_secs_f64()),
                sent,
            },
            other => other,
        }
    }

    /// `Timeout` for the `what` ("lock", "semaphore") named `name`.
    pub(crate) fn timeout(what: &'static str, name: &[u8], waited: std::time::Duration) -> Self {
        LockError::Timeout {
            what,
            key: String::from_utf8_lossy(name).into_owned(),
            waited: waited.as_secs_f64(),
        }
    }

    /// `Lost` for the `what` named `name`, found by the watchdog `before` the work
    /// finished, or (`None`) by the release that ended it.
    pub(crate) fn lost(
        what: &'static str,
        name: &[u8],
        before: Option<std::time::Duration>,
    ) -> Self {
        let seen = match before {
            Some(d) => format!(
                "the watchdog found it gone {:.3} s before the work finished",
                d.as_secs_f64()
            ),
            None => "the release at the end of the work found it gone".to_string(),
        };
        LockError::Lost { what, key: String::from_utf8_lossy(name).into_owned(), seen }
    }
}

/// Whether an error reply's text starts with the code of a passing state.
pub(crate) fn passing_code(reply: &str) -> bool {
    PASSING.iter().any(|code| {
        reply.starts_with(code)
            && !reply[code.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
    })
}

/// Shorthand used across the core.
pub type Result<T> = std::result::Result<T, LockError>;
