//! One command as a value: a plain command or a script call, which a topology can
//! run on the key's one server or write to every node of a quorum. The kinds build
//! their calls (their scripts, their keys); the topology decides where they go.

use crate::net::fast::Fast;
use crate::net::resp;
use crate::net::script::Args;
use crate::net::wire::{self, Connection, Watch};
use redis::{RedisResult, Value};

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
    Fast(&'a Fast<'a>),
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
