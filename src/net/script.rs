//! A Lua script on the wire: sent by SHA1 with `EVALSHA`, and by text only when the
//! server answers NOSCRIPT (after a restart or `SCRIPT FLUSH`). `EVAL` also caches
//! the script, so the next call is back on the short path. The scripts themselves
//! belong to the kinds of hold that run them (`kinds`), each a struct of its named
//! slots (`Args`), generated from the script's header at build time.

use crate::net::resp;
use crate::net::wire::{self, Connection};
use redis::{ErrorKind, RedisError, RedisResult, ServerErrorKind, Value};

/// A Lua script and its SHA1.
pub struct Script {
    /// Its path under `src/kinds/` ("lock/acquire"), for messages.
    name: &'static str,
    source: &'static str,
    sha: String,
}

/// Whether a reply read as it came (a quorum's fan-out) says the server lacks the
/// script it answers (`Script::lacked`, for a reply already turned into a result).
pub fn lacking(reply: &Value) -> bool {
    matches!(reply, Value::ServerError(e) if e.kind() == Some(ServerErrorKind::NoScript))
}

/// One call of a script: the script and its slots, named (a struct that build.rs
/// generates from the script's header), written on the wire in the header's order.
pub trait Args {
    /// The script this call runs.
    fn script(&self) -> &'static Script;
    /// How many KEYS and how many ARGV it sends.
    fn counts(&self) -> (usize, usize);
    /// Appends each key, then each argument, as parts of a command.
    fn write(&self, buf: &mut Vec<u8>);
    /// Hands `f` each key (`true`), then each argument (`false`), in order.
    fn each(&self, f: &mut dyn FnMut(&[u8], bool));
}

impl Script {
    /// A script of this text; its SHA1 is computed once, here.
    pub(crate) fn new(name: &'static str, source: &'static str) -> Self {
        let sha = redis::Script::new(source).get_hash().to_string();
        Script { name, source, sha }
    }

    /// Its path under `src/kinds/`, without `.lua`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The script's text, as `EVAL` sends it.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The script's SHA1, as `EVALSHA` wants it.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    /// Runs the call `args` of this script and returns its reply as it came: one
    /// round trip when the server has the script cached, two when not.
    pub fn run(&self, conn: &mut Connection, args: &dyn Args) -> RedisResult<Value> {
        let reply = wire::with_buffer(|buf| {
            self.encode(buf, b"EVALSHA", self.sha.as_bytes(), args);
            wire::send(conn, buf)
        });
        self.after(conn, args, reply)
    }

    /// Whether `reply`, to a call of this script by SHA1, says the server lacks it
    /// (after a restart or `SCRIPT FLUSH`).
    pub fn lacked(&self, reply: &RedisResult<Value>) -> bool {
        matches!(reply, Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript))
    }

    /// The one answer to NOSCRIPT, for a call `args` of this script sent by SHA1 that
    /// got `reply`: when the server lacks the script, the call again by its text
    /// (`EVAL`), which caches it (no `SCRIPT LOAD`, which an ACL may forbid), so that
    /// the next call is back on the short path; else `reply`. A quorum's fan-out, whose
    /// replies come late, sends the text as this does (`packed_eval`).
    pub fn after(
        &self,
        conn: &mut Connection,
        args: &dyn Args,
        reply: RedisResult<Value>,
    ) -> RedisResult<Value> {
        if self.lacked(&reply) {
            return wire::with_buffer(|buf| {
                self.encode(buf, b"EVAL", self.source.as_bytes(), args);
                wire::send(conn, buf)
            })
            .map_err(|e| self.explain(e));
        }
        reply.map_err(|e| self.explain(e))
    }

    /// An error raised inside the script that names only its line (Redis 7.0's ACL
    /// refusal: "…can't run this command or subcommand script: <sha>, on
    /// @user_script:12."), with the command that line calls added, so that a user
    /// missing a permission learns which.
    #[cold]
    #[inline(never)]
    fn explain(&self, e: RedisError) -> RedisError {
        // A passing state (NOREPLICAS) keeps its code: waits ride it out.
        if e.code().is_some_and(crate::error::passing_code) {
            return e;
        }
        let text = e.to_string();
        let Some(at) = text.find("@user_script:") else { return e };
        let digits: String = text[at + 13..].chars().take_while(char::is_ascii_digit).collect();
        let line =
            digits.parse::<usize>().ok().and_then(|n| self.source.lines().nth(n.checked_sub(1)?));
        let Some(line) = line else { return e };
        let mut names: Vec<&str> = Vec::new();
        for part in line.split("redis.").skip(1) {
            let Some(rest) = part.strip_prefix("call('").or_else(|| part.strip_prefix("pcall('"))
            else {
                continue;
            };
            if let Some(name) = rest.split('\'').next().filter(|n| !names.contains(n)) {
                names.push(name);
            }
        }
        if names.is_empty() || names.iter().any(|n| text.contains(&format!("'{n}'"))) {
            return e;
        }
        let names = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" or ");
        RedisError::from((
            e.kind(),
            "script error",
            format!("{} (that line runs the {names} command)", text.trim_end_matches('.')),
        ))
    }

    /// Sends the call `args` by the script's text (`EVAL`) without waiting for its
    /// reply (see `Connection::send_unawaited`). By text, not by SHA1: a reply nobody
    /// reads could not tell that a flushed script cache refused it (NOSCRIPT).
    pub fn fire(
        &self,
        conn: &mut Connection,
        args: &dyn Args,
        watch: Option<wire::Watch>,
    ) -> RedisResult<()> {
        wire::with_buffer(|buf| {
            self.encode(buf, b"EVAL", self.source.as_bytes(), args);
            conn.send_unawaited(buf, watch)
        })
    }

    /// Appends the call `args` by SHA1 to `buf`, a pipeline's commands
    /// (`wire::pipeline`).
    pub fn push_evalsha(&self, buf: &mut Vec<u8>, args: &dyn Args) {
        self.push_call(buf, b"EVALSHA", self.sha.as_bytes(), args);
    }

    /// The call `args` by `EVALSHA`, encoded, for a caller that sends and reads
    /// separately.
    pub fn packed_evalsha(&self, args: &dyn Args) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf, b"EVALSHA", self.sha.as_bytes(), args);
        buf
    }

    /// The call `args` by `EVAL` (the script's text), encoded: what a caller that
    /// read NOSCRIPT for `packed_evalsha` sends instead.
    pub fn packed_eval(&self, args: &dyn Args) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf, b"EVAL", self.source.as_bytes(), args);
        buf
    }

    /// Puts the script in the server's cache, so that pipelined calls by SHA1 find it.
    pub fn load(&self, conn: &mut Connection) -> RedisResult<()> {
        wire::request(conn, &[b"SCRIPT", b"LOAD", self.source.as_bytes()]).map(drop)
    }

    /// Replaces `buf`'s content with the call.
    fn encode(&self, buf: &mut Vec<u8>, verb: &[u8], body: &[u8], args: &dyn Args) {
        buf.clear();
        self.push_call(buf, verb, body, args);
    }

    /// Appends the call `args` by `verb` (`EVAL`, `EVALSHA`) of `body` (the text, the
    /// SHA1).
    fn push_call(&self, buf: &mut Vec<u8>, verb: &[u8], body: &[u8], args: &dyn Args) {
        let (keys, argv) = args.counts();
        resp::push_command(buf, 3 + keys + argv);
        resp::push_bulk(buf, verb);
        resp::push_bulk(buf, body);
        resp::push_bulk_number(buf, keys);
        args.write(buf);
    }
}
