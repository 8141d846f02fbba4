//! A lock's writes that the server may do by its own command, where it has one
//! (`cad`): the first try's `SET NX` of a marked token, the release of a marked
//! token by compare-and-delete, its renewal by `SET … IFEQ`. Where the server has
//! none, or its command did nothing (the mark came off: someone queued; the token
//! no longer holds the key), the script runs instead, on the same connection, and
//! its reply is the call's: the caller reads one reply either way.

use crate::net::cad::Cad;
use crate::net::resp;
use crate::net::script::Args;
use crate::net::wire::{self, Connection};
use crate::stats::{self, Counter};
use crate::token;
use redis::{RedisError, RedisResult, Value};

/// One of a lock's writes, with its script.
#[derive(Clone, Copy)]
pub enum Fast<'a> {
    /// A lock's first try: `SET key token NX [PX ms]`. On a server with
    /// compare-and-delete, the token goes marked, with `EXISTS queue` in the same
    /// write; a queue found there takes the mark off at once. Replies `OK` when taken
    /// unmarked, `TAKEN_MARKED` when taken marked, nil when busy.
    Take { key: &'a [u8], token: &'a [u8], ms: Option<&'a [u8]>, queue: &'a [u8] },
    /// A writer's release of `token`: compare-and-delete of the marked token, which
    /// answers 1; else `script`, whose reply is the call's.
    Release { key: &'a [u8], token: &'a [u8], script: &'a dyn Args },
    /// A writer's renewal of `token` to `ms` ('0': no expiry): `SET IFEQ` of the
    /// marked token, which answers 1; else `script`, whose reply is the call's.
    Renew { key: &'a [u8], token: &'a [u8], ms: &'a [u8], script: &'a dyn Args },
}

/// The reply of a `Take` that wrote the token marked.
pub const TAKEN_MARKED: &str = "MARKED";

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

    /// Appends a renewal to a pipeline for a connection whose server has `cad`, as the
    /// server's `SET … IFEQ` where it may be (its reply `OK` when renewed: `renewed`;
    /// otherwise the caller runs the script), or as its script by `EVALSHA`. Returns
    /// whether it went as the server's command.
    pub fn push_for(&self, cad: Cad, pipe: &mut Vec<u8>) -> bool {
        match *self {
            Fast::Renew { key, token, ms, .. } if cad != Cad::None && token::markable(token) => {
                let marked = token::mark(token);
                let command: Vec<&[u8]> = if ms == b"0" {
                    vec![b"SET", key, &marked, b"IFEQ", &marked]
                } else {
                    vec![b"SET", key, &marked, b"IFEQ", &marked, b"PX", ms]
                };
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
            Fast::Release { key, token, script } => {
                if cad != Cad::None && token::markable(token) {
                    let marked = token::mark(token);
                    let command: &[&[u8]] = match cad {
                        Cad::DelIfEq => &[b"DELIFEQ", key, &marked],
                        _ => &[b"DELEX", key, b"IFEQ", &marked],
                    };
                    if done(conn, command, |v| matches!(v, Value::Int(1)))? {
                        stats::note(Counter::FastReleases);
                        return Ok(Value::Int(1));
                    }
                }
                script.script().run(conn, script)
            }
            Fast::Renew { key, token, ms, script } => {
                if cad != Cad::None && token::markable(token) {
                    let marked = token::mark(token);
                    let command: Vec<&[u8]> = if ms == b"0" {
                        vec![b"SET", key, &marked, b"IFEQ", &marked]
                    } else {
                        vec![b"SET", key, &marked, b"IFEQ", &marked, b"PX", ms]
                    };
                    if done(conn, &command, |v| matches!(v, Value::Okay))? {
                        stats::note(Counter::FastRenewals);
                        return Ok(Value::Int(1));
                    }
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
fn done(conn: &mut Connection, command: &[&[u8]], ok: impl Fn(&Value) -> bool) -> RedisResult<bool> {
    match wire::request(conn, command) {
        Ok(v) => Ok(ok(&v)),
        Err(e) if refused(&e) => {
            conn.cad = Cad::None;
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// An error reply that the script would not get: the command itself refused.
fn refused(e: &RedisError) -> bool {
    matches!(e.code(), Some("ERR" | "NOPERM" | "WRONGTYPE"))
}

fn take(conn: &mut Connection, cad: Cad, key: &[u8], token: &[u8], ms: Option<&[u8]>, queue: &[u8]) -> RedisResult<Value> {
    if cad == Cad::None || !token::markable(token) {
        return wire::request(conn, &Fast::plain(key, token, ms));
    }
    let marked = token::mark(token);
    let replies = wire::with_buffer(|buf| {
        buf.clear();
        let set = Fast::plain(key, &marked, ms);
        resp::push_command(buf, set.len());
        set.iter().for_each(|p| resp::push_bulk(buf, p));
        resp::push_command(buf, 2);
        resp::push_bulk(buf, b"EXISTS");
        resp::push_bulk(buf, queue);
        wire::pipeline(conn, buf, 2)
    })?;
    let mut replies = replies.into_iter();
    let set = replies.next().unwrap_or(Value::Nil).extract_error()?;
    if set != Value::Okay {
        return Ok(set);
    }
    if matches!(replies.next(), Some(Value::Int(0))) {
        return Ok(Value::SimpleString(TAKEN_MARKED.to_string()));
    }
    // Someone is queued (or the question went unanswered): the mark comes off, so
    // that the release hands over. A value that is no longer the marked token was
    // unmarked already by a waiter.
    // An error reply leaves the mark where it may be: the hold is released by its
    // script all the same, which takes a marked value for its token.
    match wire::request(conn, &[b"SET", key, token, b"IFEQ", &marked, b"KEEPTTL"]) {
        Err(e) if e.code().is_none() => Err(e),
        _ => Ok(Value::Okay),
    }
}
