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

// The waiting queue (KEYS[2]) is a list of entries `<token>:<lease ms>:<channel>`,
// oldest first. Each waiting process listens on its own channel; PUBLISH returns how
// many connections heard the grant, so 0 means the waiter is gone (its process died
// and Redis closed its connection) and the next entry is tried instead.

/// Lua helpers shared by the scripts:
/// - `grant(lock, entry)` gives the lock to the waiter `entry` if it still listens
///   ('yes'), or says it is gone ('no'). Publishing first is safe: the waiter reads
///   the message only after the script.
/// - `notify(entry, ms)` tells a waiter to look again in `ms` (the message is its
///   token, a colon and the delay), with the same answers.
///
/// Both answer 'denied' when this user may not publish (ACL): nothing is known of
/// the waiter then, so it stays queued and finds out by its own timer.
macro_rules! lua_helpers {
    () => {
        r"local function parse(entry)
    return string.match(entry, '^(%x+):(%d+):(.+)$')
end
local function tell(entry, suffix)
    local t, lease, ch = parse(entry)
    if not t then return 'no' end
    local heard = redis.pcall('publish', ch, t .. suffix)
    if type(heard) ~= 'number' then return 'denied' end
    if heard == 0 then return 'no' end
    return 'yes', t, lease
end
local function grant(lock, entry)
    local answer, t, lease = tell(entry, '')
    if answer == 'yes' then redis.call('set', lock, t, 'px', lease) end
    return answer
end
local function notify(entry, ms)
    return (tell(entry, ':' .. ms))
end
"
    };
}

/// Takes KEYS[1] for the token ARGV[1] with a lease of ARGV[2] ms, or queues for it
/// in the list KEYS[2]. KEYS[3] is the patience marker of the queue's first waiter.
///
/// - ARGV[3]: this waiter's queue entry, or "" to take one try without queueing;
/// - ARGV[4]: the queue's lifetime in ms (the caller's remaining wait, plus slack);
/// - ARGV[5]: "1" in fair mode: a free lock goes to the waiters already queued;
/// - ARGV[6]: "1" when this waiter may already be queued (any try after the first);
/// - ARGV[7]: the patience, in ms, of a waiter that arrives at the head of the queue.
///
/// Returns `{1, 0}` when the token holds the lock (now, or handed over earlier),
/// `{0, pttl}` when busy and not queued, `{2, pttl}` when busy and queued; pttl is
/// the holder's remaining lease in ms (negative: no expiry). Running it twice with
/// the same arguments is harmless, which is what settles a lost reply.
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_helpers!(),
        r"local lock, queue = KEYS[1], KEYS[2]
local token, entry = ARGV[1], ARGV[3]
local again = ARGV[6] == '1'
if ARGV[5] == '1' and redis.call('exists', lock) == 0 then
    -- Fair: hand a free lock to the first live waiter ahead of this one.
    while true do
        local head = redis.call('lindex', queue, 0)
        if not head or head == entry then break end
        local answer = grant(lock, head)
        if answer == 'denied' then break end
        redis.call('lpop', queue)
        if answer == 'yes' then break end
    end
end
local holder = redis.call('set', lock, token, 'nx', 'px', ARGV[2], 'get')
if not holder or holder == token then
    if again and entry ~= '' then redis.call('lrem', queue, 0, entry) end
    return {1, 0}
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
/// Normally the lock goes straight to the first waiter of KEYS[2] that still listens,
/// and the next waiter's patience (KEYS[3], ARGV[3] ms) starts. With ARGV[2] = "1"
/// (a short hold, not in fair mode) the lock is only freed, so that the releaser or a
/// newcomer may take it again at once, but only while the first waiter's patience
/// lasts; that waiter is told once when to look again, and no release after that
/// passes it over.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_helpers!(),
        r"local lock, queue, patience = KEYS[1], KEYS[2], KEYS[3]
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
    local answer = grant(lock, head)
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

/// Leaves the queue KEYS[2] (entry ARGV[2]) when a wait gives up. Returns 1 if the lock
/// KEYS[1] was handed to this waiter's token ARGV[1] in the meantime, 0 otherwise.
pub static CANCEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"redis.call('lrem', KEYS[2], 0, ARGV[2])
if redis.call('get', KEYS[1]) == ARGV[1] then return 1 end
return 0",
    )
});
