//! One command as a value: a plain command or a script call, which a topology can
//! run on the key's one server or write to every node of a quorum. The kinds build
//! their calls (their scripts, their keys); the topology decides where they go.

use crate::net::fast::{self, Fast};
use crate::net::resp;
use crate::net::script::Args;
use crate::net::wire::{self, Connection, Watch};
use redis::{ErrorKind, RedisResult, Value};

/// One command for one server or for every node of a quorum.
#[derive(Clone, Copy)]
pub enum Call<'a> {
    /// A plain command, its name first.
    Command(&'a [&'a [u8]]),
    /// A script, with its named slots: by `EVALSHA`, with `EVAL` for a server that
    /// answers NOSCRIPT.
    Script(&'a dyn Args),
    /// A lock's write that the server may do by its own command (`fast`): on one
    /// connection, that command where it does what the script would, else the
    /// script; written for several at once, or unawaited, the script (a first try,
    /// its plain `SET NX`).
    Fast(Fast<'a>),
}

impl Call<'_> {
    /// Runs the call on `conn` and returns its reply; an error reply is an `Err`.
    pub fn run(&self, conn: &mut Connection) -> RedisResult<Value> {
        match self {
            Call::Command(parts) => wire::request(conn, parts),
            Call::Script(args) => args.script().run(conn, *args),
            Call::Fast(fast) => fast.run(conn),
        }
    }

    /// Sends the call without waiting for its reply (a script by its text: see
    /// `Script::fire`); the reply is read and put aside at the connection's next use,
    /// and checked against `watch` then.
    pub fn fire(&self, conn: &mut Connection, watch: Option<Watch>) -> RedisResult<()> {
        match self {
            Call::Command(parts) => wire::with_buffer(|buf| {
                resp::encode(buf, parts.len(), parts.iter().copied());
                conn.send_unawaited(buf, watch)
            }),
            Call::Script(args) => args.script().fire(conn, *args, watch),
            Call::Fast(fast) => match (fast.script(), fast) {
                (Some(args), _) => args.script().fire(conn, args, watch),
                (None, Fast::Take { key, token, ms, .. }) => {
                    Call::Command(&Fast::plain(key, token, *ms)).fire(conn, watch)
                }
                (None, _) => Ok(()),
            },
        }
    }

    /// The script it runs, or falls back on (for a quorum, where it always runs).
    pub fn args(&self) -> Option<&dyn Args> {
        match self {
            Call::Script(args) => Some(*args),
            Call::Fast(fast) => fast.script(),
            Call::Command(_) => None,
        }
    }

    /// Builds the call's script now, if it is one (it is built once per process, on
    /// first use): a thread about to hand the call to another builds it first.
    pub fn prepare(&self) {
        if let Some(args) = self.args() {
            let _ = args.script().sha();
        }
    }

    /// Appends the call, encoded (a script by `EVALSHA`), to a pipeline.
    pub fn push(&self, pipe: &mut Vec<u8>) {
        match self {
            Call::Command(parts) => {
                resp::push_command(pipe, parts.len());
                parts.iter().for_each(|part| resp::push_bulk(pipe, part));
            }
            Call::Script(args) => args.script().push_evalsha(pipe, *args),
            Call::Fast(fast) => match (fast.script(), fast) {
                (Some(args), _) => args.script().push_evalsha(pipe, args),
                (None, Fast::Take { key, token, ms, .. }) => {
                    Call::Command(&Fast::plain(key, token, *ms)).push(pipe)
                }
                (None, _) => {}
            },
        }
    }

    /// Appends the call to a pipeline on `conn`: as `push`, but a renewal the server
    /// may do by its own command goes as that command where `conn`'s server has it
    /// (`Fast::push_for`). Returns whether it did.
    pub fn push_for(&self, conn: &Connection, pipe: &mut Vec<u8>) -> bool {
        match self {
            Call::Fast(fast) => fast.push_for(conn.cad(), pipe),
            _ => {
                self.push(pipe);
                false
            }
        }
    }

    /// The call encoded (a script by `EVALSHA`), for a caller that writes to several
    /// connections before it reads any reply.
    pub fn packed(&self) -> Vec<u8> {
        match self {
            Call::Command(parts) => {
                let mut buf = Vec::new();
                resp::encode(&mut buf, parts.len(), parts.iter().copied());
                buf
            }
            Call::Script(args) => args.script().packed_evalsha(*args),
            Call::Fast(fast) => match (fast.script(), fast) {
                (Some(args), _) => args.script().packed_evalsha(args),
                (None, Fast::Take { key, token, ms, .. }) => {
                    Call::Command(&Fast::plain(key, token, *ms)).packed()
                }
                (None, _) => Vec::new(),
            },
        }
    }
}

/// A call that owns its script's slots (their bytes stay borrowed from the hold): what
/// a hold's part hands out for its renewal and its release, so that whoever sends it
/// (the watchdog, a batch, request end) may keep several at once.
pub struct Owned<'a> {
    args: Box<dyn Args + 'a>,
    /// A writer's renewal the server may do by its own `SET … IFEQ` (`Fast::Renew`):
    /// its key, token and lease.
    by_server: Option<(&'a [u8], &'a [u8], &'a [u8])>,
}

impl<'a> Owned<'a> {
    /// A script call.
    pub fn script(args: impl Args + 'a) -> Self {
        Owned { args: Box::new(args), by_server: None }
    }

    /// A writer's renewal of `token` on `key` to `ms`: the server's own command where
    /// it has one, else `script` (`Fast::Renew`).
    pub fn renewal(key: &'a [u8], token: &'a [u8], ms: &'a [u8], script: impl Args + 'a) -> Self {
        Owned { args: Box::new(script), by_server: Some((key, token, ms)) }
    }

    /// The call, as sent.
    pub fn call(&self) -> Call<'_> {
        match self.by_server {
            Some((key, token, ms)) => {
                Call::Fast(Fast::Renew { key, token, ms, script: &*self.args })
            }
            None => Call::Script(&*self.args),
        }
    }
}

/// One reply per call, an error reply as that call's `Err`.
pub type Replies = Vec<RedisResult<Value>>;

/// Sends `calls`, then `tail` (plain commands: a durable wait, which counts this
/// connection's writes before it), in one write on `conn`, and reads every reply: the
/// calls' (an error reply is that call's `Err`), then the tail's. A renewal the server
/// may do by its own command goes as that command (`Call::push_for`); where it did not
/// renew, its script follows, alone. A script the server lacks (NOSCRIPT) follows by its
/// text (`Script::after`). Such a call comes after the tail, which then goes again, so
/// that it counts every write. `Err`: the connection failed, or the server is a replica
/// now (READONLY): the caller must find the master again.
pub fn pipeline(
    conn: &mut Connection,
    calls: &[Call<'_>],
    tail: &[Call<'_>],
) -> RedisResult<(Replies, Replies)> {
    let mut pipe = Vec::new();
    let by_server: Vec<bool> = calls.iter().map(|c| c.push_for(conn, &mut pipe)).collect();
    tail.iter().for_each(|c| c.push(&mut pipe));
    let mut replies = wire::pipeline(conn, &pipe, calls.len() + tail.len())?;
    let tail_replies = replies.split_off(calls.len());
    let mut tail_replies: Vec<RedisResult<Value>> =
        tail_replies.into_iter().map(Value::extract_error).collect();
    let replies: Vec<RedisResult<Value>> = replies.into_iter().map(Value::extract_error).collect();
    if let Some(Err(e)) =
        replies.iter().find(|r| matches!(r, Err(e) if e.code() == Some("READONLY")))
    {
        return Err(e.clone());
    }
    let mut alone = false;
    let mut out = Vec::with_capacity(calls.len());
    for ((call, reply), by_server) in calls.iter().zip(replies).zip(by_server) {
        let Some(args) = call.args() else {
            out.push(reply);
            continue;
        };
        let reply = if by_server {
            match reply {
                Ok(v) if Fast::renewed(&v) => Ok(Value::Int(1)),
                // An error reply the script would get too (a redirect, a passing state):
                // this call's, as a script's would be.
                Err(e) if !fast::refusal(&e) => Err(e),
                // Not renewed by the server's command (or the command refused: its
                // compare-and-delete off): the script decides, on its own.
                other => {
                    if let Err(e) = other {
                        fast::refused(conn, e)?;
                    }
                    alone = true;
                    args.script().run(conn, args)
                }
            }
        } else {
            let missing = args.script().lacked(&reply);
            alone |= missing;
            args.script().after(conn, args, reply)
        };
        match reply {
            Err(e) if !matches!(e.kind(), ErrorKind::Server(_)) => return Err(e),
            reply => out.push(reply),
        }
    }
    if alone && !tail.is_empty() {
        pipe.clear();
        tail.iter().for_each(|c| c.push(&mut pipe));
        tail_replies = wire::pipeline(conn, &pipe, tail.len())?
            .into_iter()
            .map(Value::extract_error)
            .collect();
    }
    Ok((out, tail_replies))
}
