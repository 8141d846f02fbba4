//! The Lua scripts, sent by SHA1 with `EVALSHA` and by text only when the
//! server answers NOSCRIPT (after a restart or `SCRIPT FLUSH`). `EVAL` also
//! caches the script, so the next call is back on the short path.

use redis::{Connection, ErrorKind, FromRedisValue, RedisResult, ServerErrorKind};
use std::sync::LazyLock;

/// A Lua script and its SHA1.
pub struct Script {
    source: &'static str,
    sha: String,
}

impl Script {
    fn new(source: &'static str) -> Self {
        Script {
            source,
            sha: redis::Script::new(source).get_hash().to_string(),
        }
    }

    /// The script's SHA1, as `EVALSHA` wants it.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    /// Runs the script: one round trip when the server has it cached, two when not.
    pub fn invoke<T: FromRedisValue>(
        &self,
        conn: &mut Connection,
        keys: &[&[u8]],
        args: &[&[u8]],
    ) -> RedisResult<T> {
        match self.command("EVALSHA", self.sha.as_bytes(), keys, args).query(conn) {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => self
                .command("EVAL", self.source.as_bytes(), keys, args)
                .query(conn),
            other => other,
        }
    }

    fn command(&self, verb: &str, body: &[u8], keys: &[&[u8]], args: &[&[u8]]) -> redis::Cmd {
        let mut cmd = redis::cmd(verb);
        cmd.arg(body).arg(keys.len());
        for k in keys {
            cmd.arg(*k);
        }
        for a in args {
            cmd.arg(*a);
        }
        cmd
    }
}

/// Compare-and-delete: deletes KEYS[1] only while it still holds the token ARGV[1].
/// Returns 1 when it deleted, 0 otherwise.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0",
    )
});

/// Settles an acquire whose reply was lost: if KEYS[1] already holds our token
/// ARGV[1] the earlier SET landed; if it is free, take it now with TTL ARGV[2] ms.
/// Returns 1 when we hold the lock, 0 when someone else does.
pub static ACQUIRE_OR_CONFIRM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"local v = redis.call('get', KEYS[1])
if v == ARGV[1] then
    return 1
end
if v then
    return 0
end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1",
    )
});
