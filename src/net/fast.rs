//! A lock's writes that the server may do by its own command, where it has one
//! (`cad`): the first try's `SET NX` with a look at the queue, the release by
//! compare-and-delete, the renewal by `SET … IFEQ`. The value stays the token, byte
//! for byte, on every server: the commands compare it as the scripts do. Where the
//! server has none, or its command did nothing (the token no longer holds the key, or
//! readers do), the script runs instead, on the same connection, and its reply is
//! the call's: the caller reads one reply either way.

use crate::net::cad::Cad;
use crate::net::resp;
use crate::net::script::Args;
use crate::net::wire::{self, Connection};
use crate::stats::{self, Counter};
use redis::{RedisError, RedisResult, Value};

/// One of a lock's writes, with its script.
#[derive(Clone, Copy)]
pub enum Fast<'a> {
    /// A lock's first try: `SET key token NX [PX ms]`. On a server with
    /// compare-and-delete, `EXISTS queue` goes in the same write. Replies `OK` when
    /// taken with a queue there (or on a server without the commands),
    /// `TAKEN_ALONE` when taken with none, nil when busy.
    Take { key: &'a [u8], token: &'a [u8], ms: Option<&'a [u8]>, queue: &'a [u8] },
    /// A writer's release of `token`: compare-and-delete, with `EXISTS queue` in the
    /// same write; a waiter that queued meanwhile is handed the free lock by `kick`,
    /// sent at once without waiting for its answer. The call answers 1 then. When the
    /// command deleted nothing (or the server has none), `script`, whose reply is the
    /// call's.
    Release {
        key: &'a [u8],
        token: &'a [u8],
        queue: &'a [u8],
        script: &'a dyn Args,
        kick: &'a dyn Args,
    },
    /// A writer's renewal of `token` to `ms` ('0': no expiry): `SET key token IFEQ
    /// token`, which answers 1; else `script`, whose reply is the call's.
    Renew { key: &'a [u8], token: &'a [u8], ms: &'a [u8], script: &'a dyn Args },
}

/// The reply of a `Take` that found no queue: the hold may be released by the
/// server's own command.
pub const TAKEN_ALONE: &str = "ALONE";

impl Fast<'_> {
    /// The script it falls back on, if it has one.
    pub fn script(&self) -> Option<&dyn Args> {
        match self {
            Fast::Take { .. } => None,
            Fast::Release { script, .. } | Fast::Renew { script, .. } => Some(*script),
        }
    }

    /// The plain `SET NX` of a `Take`, for where it is written as is (a pipeline, a
    /// quorum).
    pub fn plain<'b>(key: &'b [u8], token: &'b [u8], ms: Option<&'b [u8]>) -> Vec<&'b [u8]> {
        match ms {
            Some(ms) => vec![b"SET", key, token, b"NX", b"PX", ms],
            None => vec![b"SET", key, token, b"NX"],
        }
    }

    /// A renewal's `SET … IFEQ`.
    fn set_ifeq<'b>(key: &'b [u8], token: &'b [u8], ms: &'b [u8]) -> Vec<&'b [u8]> {
        if ms == b"0" {
            vec![b"SET", key, token, b"IFEQ", token]
        } else {
            vec![b"SET", key, token, b"IFEQ", token, b"PX", ms]
        }
    }

    /// Appends a renewal to a pipeline for a connection whose server has `cad`, as the
    /// server's `SET … IFEQ` where it may be (its reply `OK` when renewed: `renewed`;
    /// otherwise the caller runs the script), or as its script by `EVALSHA`. Returns
    /// whether it went as the server's command.
    pub fn push_for(&self, cad: Cad, pipe: &mut Vec<u8>) -> bool {
        match *self {
            Fast::Renew { key, token, ms, .. } if cad != Cad::None => {
                let command = Fast::set_ifeq(key, token, ms);
                resp::push_command(pipe, command.len());
                command.iter().for_each(|p| resp::push_bulk(pipe, p));
                true
            }
            _ => {
                if let Some(args) = self.script() {
                    args.script().push_evalsha(pipe, args);
                }
                false
            }
        }
    }

    /// Whether the reply to a renewal sent as the server's command (`push_for`) says
    /// renewed (then counted).
    pub fn renewed(reply: &Value) -> bool {
        let yes = matches!(reply, Value::Okay);
        if yes {
            stats::note(Counter::FastRenewals);
        }
        yes
    }

    /// Runs it on `conn` (see the variants).
    pub fn run(&self, conn: &mut Connection) -> RedisResult<Value> {
        let cad = conn.cad;
        match *self {
            Fast::Take { key, token, ms, queue } => take(conn, cad, key, token, ms, queue),
            Fast::Release { key, token, queue, script, kick } => {
                if cad != Cad::None {
                    let command: &[&[u8]] = match cad {
                        Cad::DelIfEq => &[b"DELIFEQ", key, token],
                        _ => &[b"DELEX", key, b"IFEQ", token],
                    };
                    if let Some(queued) = deleted(conn, command, queue)? {
                        stats::note(Counter::FastReleases);
                        if queued {
                            // Someone queued during the hold: the free lock goes to the
                            // head of the queue, as the script would have handed it.
                            // Unawaited (by its text, as every unawaited script): the
                            // release is done, and the next command on this connection
                            // runs after it.
                            // A write that fails leaves the connection to be replaced at
                            // its next use; the waiters then look again by their timers.
                            stats::note(Counter::FastKicks);
                            let _ = kick.script().fire(conn, kick, None);
                        }
                        return Ok(Value::Int(1));
                    }
                }
                script.script().run(conn, script)
            }
            Fast::Renew { key, token, ms, script } => {
                if cad != Cad::None
                    && done(conn, &Fast::set_ifeq(key, token, ms), |v| matches!(v, Value::Okay))?
                {
                    stats::note(Counter::FastRenewals);
                    return Ok(Value::Int(1));
                }
                script.script().run(conn, script)
            }
        }
    }
}

/// Sends `command` and says whether its reply shows it done. An error reply that
/// says the command is not for this user or server (unknown, refused by an ACL, a
/// syntax it lacks) turns the connection's compare-and-delete off, and counts as
/// not done, as does a reply of any other shape (a hostile server's: the script
/// decides); an error of the connection, or a redirect, is the caller's.
fn done(
    conn: &mut Connection,
    command: &[&[u8]],
    ok: impl Fn(&Value) -> bool,
) -> RedisResult<bool> {
    match wire::request(conn, command) {
        Ok(v) => Ok(ok(&v)),
        Err(e) => refused(conn, e).map(|()| false),
    }
}

/// Sends the compare-and-delete `command` with `EXISTS queue` in the same write:
/// `Some(whether the queue was there)` when it deleted the key, `None` when it did
/// not (or was refused: as `done`).
fn deleted(conn: &mut Connection, command: &[&[u8]], queue: &[u8]) -> RedisResult<Option<bool>> {
    let (del, exists) = with_exists(conn, command, queue)?;
    let (del, exists) = (del.extract_error(), exists.extract_error());
    match del {
        // A queue that could not be asked about (an ACL that refuses EXISTS on it)
        // counts as there: a kick that finds nobody does nothing.
        Ok(Value::Int(1)) => Ok(Some(!matches!(exists, Ok(Value::Int(0))))),
        Ok(_) => Ok(None),
        Err(e) => refused(conn, e).map(|()| None),
    }
}

/// Sends `command` and `EXISTS queue` in one write: their two replies.
fn with_exists(
    conn: &mut Connection,
    command: &[&[u8]],
    queue: &[u8],
) -> RedisResult<(Value, Value)> {
    let replies = wire::with_buffer(|buf| {
        buf.clear();
        resp::push_command(buf, command.len());
        command.iter().for_each(|p| resp::push_bulk(buf, p));
        resp::push_command(buf, 2);
        resp::push_bulk(buf, b"EXISTS");
        resp::push_bulk(buf, queue);
        wire::pipeline(conn, buf, 2)
    })?;
    let mut replies = replies.into_iter();
    Ok((replies.next().unwrap_or(Value::Nil), replies.next().unwrap_or(Value::Nil)))
}

/// Whether an error reply refuses the server's own command itself (unknown, refused by
/// an ACL, a syntax it lacks), which the script would not get.
pub(crate) fn refusal(e: &RedisError) -> bool {
    matches!(e.code(), Some("ERR" | "NOPERM" | "WRONGTYPE"))
}

/// An error reply to one of the server's own commands: one that the script would
/// not get (the command itself refused: unknown, refused by an ACL, a syntax it
/// lacks) turns the connection's compare-and-delete off; any other (of the
/// connection, a redirect, a passing state) is the caller's.
pub(crate) fn refused(conn: &mut Connection, e: RedisError) -> RedisResult<()> {
    if refusal(&e) {
        conn.cad = Cad::None;
        return Ok(());
    }
    Err(e)
}

fn take(
    conn: &mut Connection,
    cad: Cad,
    key: &[u8],
    token: &[u8],
    ms: Option<&[u8]>,
    queue: &[u8],
) -> RedisResult<Value> {
    if cad == Cad::None {
        return wire::request(conn, &Fast::plain(key, token, ms));
    }
    let (set, exists) = with_exists(conn, &Fast::plain(key, token, ms), queue)?;
    let set = set.extract_error()?;
    if set == Value::Okay && exists == Value::Int(0) {
        return Ok(Value::SimpleString(TAKEN_ALONE.to_string()));
    }
    // Busy, or taken with someone queued (or the question unanswered): the release
    // is the script's, which hands over in the same step.
    Ok(set)
}
