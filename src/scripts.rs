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

    /// Adds a call by SHA1 to a pipeline; the caller loads the script first (`load`).
    pub fn add_to(&self, pipe: &mut redis::Pipeline, keys: &[&[u8]], args: &[&[u8]]) {
        pipe.add_command(self.command("EVALSHA", self.sha.as_bytes(), keys, args));
    }

    /// The `EVALSHA` call, encoded, for a caller that sends and reads separately.
    pub fn packed_evalsha(&self, keys: &[&[u8]], args: &[&[u8]]) -> Vec<u8> {
        self.command("EVALSHA", self.sha.as_bytes(), keys, args).get_packed_command()
    }

    /// Puts the script in the server's cache, so that pipelined calls by SHA1 find it.
    pub fn load(&self, conn: &mut Connection) -> RedisResult<()> {
        redis::cmd("SCRIPT").arg("LOAD").arg(self.source).exec(conn)
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

// The waiting queue (KEYS[2]) is a list of entries `<token>:<lease ms>:<f>:<channel>`,
// oldest first, where `f` is "1" when the waiter wants a fencing token. Each waiting
// process listens on its own channel; PUBLISH returns how many connections heard the
// grant, so 0 means the waiter is gone (its process died and Redis closed its
// connection) and the next entry is tried instead.
//
// Fencing: KEYS[4] is the lock's counter. Every acquisition that asks for a fencing
// token increments it in the same script that takes the key, so the holder of the key
// always has the counter's latest value. A grant that finds its waiter gone wastes a
// number; numbers only need to increase, not to be dense.

/// Lua helpers shared by the scripts:
/// - `grant(lock, fence, entry)` gives the lock to the waiter `entry` if it still
///   listens ('yes'), or says it is gone ('no'). The message is the token, followed by
///   `=<fencing token>` when the waiter asked for one. Publishing first is safe: the
///   waiter reads the message only after the script.
/// - `notify(entry, ms)` tells a waiter to look again in `ms` (the message is its
///   token, a colon and the delay), with the same answers.
///
/// Both answer 'denied' when this user may not publish (ACL): nothing is known of
/// the waiter then, so it stays queued and finds out by its own timer.
macro_rules! lua_helpers {
    () => {
        r"local function parse(entry)
    return string.match(entry, '^(%x+):(%d+):([01]):(.+)$')
end
local function tell(ch, msg)
    local heard = redis.pcall('publish', ch, msg)
    if type(heard) ~= 'number' then return 'denied' end
    if heard == 0 then return 'no' end
    return 'yes'
end
local function grant(lock, fence, entry)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    local msg = t
    if f == '1' then msg = t .. '=' .. redis.call('incr', fence) end
    local answer = tell(ch, msg)
    if answer == 'yes' then redis.call('set', lock, t, 'px', lease) end
    return answer
end
local function notify(entry, ms)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    return tell(ch, t .. ':' .. ms)
end
"
    };
}

/// Takes KEYS[1] for the token ARGV[1] with a lease of ARGV[2] ms, or queues for it
/// in the list KEYS[2]. KEYS[3] is the patience marker of the queue's first waiter,
/// KEYS[4] the fencing counter.
///
/// - ARGV[3]: this waiter's queue entry, or "" to take one try without queueing;
/// - ARGV[4]: the queue's lifetime in ms (the caller's remaining wait, plus slack);
/// - ARGV[5]: "1" in fair mode: a free lock goes to the waiters already queued;
/// - ARGV[6]: "1" when this waiter may already be queued (any try after the first);
/// - ARGV[7]: the patience, in ms, of a waiter that arrives at the head of the queue;
/// - ARGV[8]: "1" to issue a fencing token.
///
/// Returns `{1, fencing token}` when the token holds the lock (now, or handed over
/// earlier; the fencing token is 0 when none was asked for), `{0, pttl}` when busy and
/// not queued, `{2, pttl}` when busy and queued; pttl is the holder's remaining lease
/// in ms (negative: no expiry). Running it twice with the same arguments is harmless,
/// which is what settles a lost reply.
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_helpers!(),
        r"local lock, queue, fence = KEYS[1], KEYS[2], KEYS[4]
local token, entry = ARGV[1], ARGV[3]
local again = ARGV[6] == '1'
if ARGV[5] == '1' and redis.call('exists', lock) == 0 then
    -- Fair: hand a free lock to the first live waiter ahead of this one.
    while true do
        local head = redis.call('lindex', queue, 0)
        if not head or head == entry then break end
        local answer = grant(lock, fence, head)
        if answer == 'denied' then break end
        redis.call('lpop', queue)
        if answer == 'yes' then break end
    end
end
local holder = redis.call('set', lock, token, 'nx', 'px', ARGV[2], 'get')
if not holder or holder == token then
    if again and entry ~= '' then redis.call('lrem', queue, 0, entry) end
    if ARGV[8] ~= '1' then return {1, 0} end
    -- Taken now: a new number. Held already (handed over, or a retried call): the
    -- counter still has this holder's number, since no one else took the key since.
    if not holder then return {1, redis.call('incr', fence)} end
    return {1, tonumber(redis.call('get', fence)) or 0}
end
local pttl = redis.call('pttl', lock)
if entry == '' then return {0, pttl} end
if not again or not redis.call('lpos', queue, entry) then
    if redis.call('rpush', queue, entry) == 1 then
        redis.call('pexpire', queue, ARGV[4])
        redis.call('set', KEYS[3], '1', 'px', ARGV[7])
    else
        redis.call('pexpire', queue, ARGV[4], 'gt')
    end
end
return {2, pttl}"
    ))
});

/// Releases KEYS[1] if it holds the token ARGV[1]. Returns 1 when released, 0 otherwise.
///
/// Normally the lock goes straight to the first waiter of KEYS[2] that still listens
/// (with a fencing token from KEYS[4] if it asked for one), and the next waiter's
/// patience (KEYS[3], ARGV[3] ms) starts. With ARGV[2] = "1" (a short hold, not in
/// fair mode) the lock is only freed, so that the releaser or a newcomer may take it
/// again at once, but only while the first waiter's patience lasts; that waiter is
/// told once when to look again, and no release after that passes it over.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_helpers!(),
        r"local lock, queue, patience, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if redis.call('get', lock) ~= ARGV[1] then return 0 end
if redis.call('exists', queue) == 0 then
    redis.call('del', lock)
    return 1
end
if ARGV[2] == '1' then
    local p = redis.call('get', patience)
    if p then
        redis.call('del', lock)
        if p == '1' then
            local left = redis.call('pttl', patience)
            while true do
                local head = redis.call('lindex', queue, 0)
                if not head then break end
                local answer = notify(head, left)
                if answer ~= 'no' then break end
                redis.call('lpop', queue)
            end
            redis.call('set', patience, '2', 'keepttl')
        end
        return 1
    end
end
while true do
    local head = redis.call('lindex', queue, 0)
    if not head then break end
    local answer = grant(lock, fence, head)
    if answer == 'denied' then break end
    redis.call('lpop', queue)
    if answer == 'yes' then
        redis.call('set', patience, '1', 'px', ARGV[3])
        return 1
    end
end
redis.call('del', lock)
return 1"
    ))
});

/// Leaves the queue KEYS[2] (entry ARGV[2]) when a wait gives up. Returns
/// `{1, fencing counter}` if the lock KEYS[1] was handed to this waiter's token
/// ARGV[1] in the meantime (the counter KEYS[3] then holds its number), `{0, 0}`
/// otherwise.
pub static CANCEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"redis.call('lrem', KEYS[2], 0, ARGV[2])
if redis.call('get', KEYS[1]) == ARGV[1] then
    return {1, tonumber(redis.call('get', KEYS[3])) or 0}
end
return {0, 0}",
    )
});

/// Sets the lease of KEYS[1] to ARGV[2] ms if the key still holds the token ARGV[1].
/// Returns 1 when it did, 0 when the token no longer holds the key. Used by
/// `extendLock()` and by the watchdog.
pub static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0",
    )
});
