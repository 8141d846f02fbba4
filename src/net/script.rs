//! A Lua script on the wire: sent by SHA1 with `EVALSHA`, and by text only when the
//! server answers NOSCRIPT (after a restart or `SCRIPT FLUSH`). `EVAL` also caches
//! the script, so the next call is back on the short path. The scripts themselves
//! belong to the kinds of hold that run them (`kinds`).

use crate::net::resp;
use crate::net::wire::{self, Connection};
use redis::{ErrorKind, FromRedisValue, RedisError, RedisResult, ServerErrorKind, Value};

/// A Lua script and its SHA1.
pub struct Script {
    source: String,
    sha: String,
}

impl Script {
    /// A script of this text; its SHA1 is computed once, here.
    pub(crate) fn new(source: String) -> Self {
        let sha = redis::Script::new(&source).get_hash().to_string();
        Script { source, sha }
    }

    /// The script's text, as `EVAL` sends it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The script's SHA1, as `EVALSHA` wants it.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    /// Runs the script and returns its reply as it came: one round trip when the
    /// server has the script cached, two when not.
    pub fn run(&self, conn: &mut Connection, keys: &[&[u8]], args: &[&[u8]]) -> RedisResult<Value> {
        wire::with_buffer(|buf| {
            self.encode(buf, b"EVALSHA", self.sha.as_bytes(), keys, args);
            match wire::send(conn, buf) {
                Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    self.encode(buf, b"EVAL", self.source.as_bytes(), keys, args);
                    wire::send(conn, buf)
                }
                other => other,
            }
        })
        .map_err(|e| self.explain(e))
    }

    /// An error raised inside the script that names only its line (Redis 7.0's ACL
    /// refusal: "…can't run this command or subcommand script: <sha>, on
    /// @user_script:12."), with the command that line calls added, so that a user
    /// missing a permission learns which.
    #[cold]
    #[inline(never)]
    fn explain(&self, e: RedisError) -> RedisError {
        let text = e.to_string();
        let Some(at) = text.find("@user_script:") else { return e };
        let digits: String = text[at + 13..].chars().take_while(char::is_ascii_digit).collect();
        let line = digits.parse::<usize>().ok().and_then(|n| self.source.lines().nth(n.checked_sub(1)?));
        let Some(line) = line else { return e };
        let mut names: Vec<&str> = Vec::new();
        for part in line.split("redis.").skip(1) {
            let Some(rest) = part.strip_prefix("call('").or_else(|| part.strip_prefix("pcall('")) else { continue };
            if let Some(name) = rest.split('\'').next().filter(|n| !names.contains(n)) {
                names.push(name);
            }
        }
        if names.is_empty() || names.iter().any(|n| text.contains(&format!("'{n}'"))) {
            return e;
        }
        let names = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" or ");
        RedisError::from((e.kind(), "script error", format!("{} (that line runs the {names} command)", text.trim_end_matches('.'))))
    }

    /// Runs the script and converts its reply.
    pub fn invoke<T: FromRedisValue>(&self, conn: &mut Connection, keys: &[&[u8]], args: &[&[u8]]) -> RedisResult<T> {
        Ok(redis::from_redis_value(self.run(conn, keys, args)?)?)
    }

    /// Sends the script by its text (`EVAL`) without waiting for its reply (see
    /// `Connection::send_unawaited`). By text, not by SHA1: a reply nobody reads could
    /// not tell that a flushed script cache refused it (NOSCRIPT).
    pub fn fire(&self, conn: &mut Connection, keys: &[&[u8]], args: &[&[u8]], watch: Option<wire::Watch>) -> RedisResult<()> {
        wire::with_buffer(|buf| {
            self.encode(buf, b"EVAL", self.source.as_bytes(), keys, args);
            conn.send_unawaited(buf, watch)
        })
    }

    /// Appends a call by SHA1 to `buf`, a pipeline's commands (`wire::pipeline`).
    pub fn push_evalsha(&self, buf: &mut Vec<u8>, keys: &[&[u8]], args: &[&[u8]]) {
        self.push_call(buf, b"EVALSHA", self.sha.as_bytes(), keys, args);
    }

    /// The `EVALSHA` call, encoded, for a caller that sends and reads separately.
    pub fn packed_evalsha(&self, keys: &[&[u8]], args: &[&[u8]]) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf, b"EVALSHA", self.sha.as_bytes(), keys, args);
        buf
    }

    /// The `EVAL` call (the script's text), encoded: what a caller that read
    /// NOSCRIPT for `packed_evalsha` sends instead.
    pub fn packed_eval(&self, keys: &[&[u8]], args: &[&[u8]]) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf, b"EVAL", self.source.as_bytes(), keys, args);
        buf
    }

    /// Puts the script in the server's cache, so that pipelined calls by SHA1 find it.
    pub fn load(&self, conn: &mut Connection) -> RedisResult<()> {
        wire::request(conn, &[b"SCRIPT", b"LOAD", self.source.as_bytes()]).map(drop)
    }

    /// Replaces `buf`'s content with the call.
    fn encode(&self, buf: &mut Vec<u8>, verb: &[u8], body: &[u8], keys: &[&[u8]], args: &[&[u8]]) {
        buf.clear();
        self.push_call(buf, verb, body, keys, args);
    }

    /// Appends the call `verb` (`EVAL`, `EVALSHA`) of `body` (the text, the SHA1).
    fn push_call(&self, buf: &mut Vec<u8>, verb: &[u8], body: &[u8], keys: &[&[u8]], args: &[&[u8]]) {
        resp::push_command(buf, 3 + keys.len() + args.len());
        resp::push_bulk(buf, verb);
        resp::push_bulk(buf, body);
        resp::push_bulk_number(buf, keys.len());
        for part in keys.iter().chain(args) {
            resp::push_bulk(buf, part);
        }
    }
}
