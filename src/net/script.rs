//! A Lua script on the wire: sent by SHA1 with `EVALSHA`, and by text only when the
//! server answers NOSCRIPT (after a restart or `SCRIPT FLUSH`). `EVAL` also caches
//! the script, so the next call is back on the short path. The scripts themselves
//! belong to the kinds of hold that run them (`kinds`).

use crate::net::resp;
use crate::net::wire::{self, Connection};
use redis::{ErrorKind, FromRedisValue, RedisResult, ServerErrorKind, Value};

/// A Lua script and its SHA1.
pub struct Script {
    source: &'static str,
    sha: String,
}

impl Script {
    /// A script of this text; its SHA1 is computed once, here.
    pub(crate) fn new(source: &'static str) -> Self {
        Script {
            source,
            sha: redis::Script::new(source).get_hash().to_string(),
        }
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
    }

    /// Runs the script and converts its reply.
    pub fn invoke<T: FromRedisValue>(&self, conn: &mut Connection, keys: &[&[u8]], args: &[&[u8]]) -> RedisResult<T> {
        Ok(redis::from_redis_value(self.run(conn, keys, args)?)?)
    }

    /// Sends the script by its text (`EVAL`) without waiting for its reply (see
    /// `Connection::send_unawaited`). By text, not by SHA1: a reply nobody reads could
    /// not tell that a flushed script cache refused it (NOSCRIPT).
    pub fn fire(&self, conn: &mut Connection, keys: &[&[u8]], args: &[&[u8]]) -> RedisResult<()> {
        wire::with_buffer(|buf| {
            self.encode(buf, b"EVAL", self.source.as_bytes(), keys, args);
            conn.send_unawaited(buf)
        })
    }

    /// Adds a call by SHA1 to a pipeline; the caller loads the script first (`load`).
    pub fn add_to(&self, pipe: &mut redis::Pipeline, keys: &[&[u8]], args: &[&[u8]]) {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.sha.as_bytes()).arg(keys.len());
        for part in keys.iter().chain(args) {
            cmd.arg(*part);
        }
        pipe.add_command(cmd);
    }

    /// The `EVALSHA` call, encoded, for a caller that sends and reads separately.
    pub fn packed_evalsha(&self, keys: &[&[u8]], args: &[&[u8]]) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf, b"EVALSHA", self.sha.as_bytes(), keys, args);
        buf
    }

    /// Puts the script in the server's cache, so that pipelined calls by SHA1 find it.
    pub fn load(&self, conn: &mut Connection) -> RedisResult<()> {
        wire::request(conn, &[b"SCRIPT", b"LOAD", self.source.as_bytes()]).map(drop)
    }

    fn encode(&self, buf: &mut Vec<u8>, verb: &[u8], body: &[u8], keys: &[&[u8]], args: &[&[u8]]) {
        resp::begin(buf, 3 + keys.len() + args.len());
        resp::push_bulk(buf, verb);
        resp::push_bulk(buf, body);
        resp::push_bulk_number(buf, keys.len());
        for part in keys.iter().chain(args) {
            resp::push_bulk(buf, part);
        }
    }
}
