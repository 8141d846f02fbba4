//! The mutex's Lua scripts (acquire, release, hand-over, cancel, renew, fencing) and
//! the Lua helpers that the shared mode and the semaphore build theirs from. Each
//! runs through `net::script::Script`.

use crate::net::script::Script;
use std::sync::LazyLock;
// The waiting queue (KEYS[2]) is a list of entries
// `<until>:<lease ms>:<f>:<channel length>:<channel><token>`, oldest first (`until`:
// when its waiter stops waiting, in ms on the server's clock, see `lua_stamp`), where `f` is "1"
// when the waiter wants a fencing token and a lease of 0 means none (no expiry). The
// token comes last, unescaped: a caller may choose any bytes for it. Each waiting
// process listens on its own channel; PUBLISH returns how many connections heard the
// grant, so 0 means the waiter is gone (its process died and Redis closed its
// connection) and the next entry is tried instead.
//
// Fencing: KEYS[4] is the lock's counter. A number is only ever taken from it by a
// script that holds the key for that holder at that moment: the acquisition itself
// (`TAKE`, `ACQUIRE`, a grant in `RELEASE`) or, later, the holder's own
// token-checked `FENCE`. Holds do not overlap, so the numbers increase from holder to
// holder. A grant that finds its waiter gone wastes a number; numbers only need to
// increase, not to be dense. Each number is at least the server's clock in µs
// (`lua_next_fence`), so that a counter lost with the data (a restart without
// persistence, a failover to a replica that missed it) starts again above every number
// issued before, as long as the servers' clocks do not go back.
//
// A script pays for every function it defines, on every call: the helpers below are
// defined only in the branches that use them, after the common path.

/// Lua: `tell(channel, message)` publishes and answers 'yes' (heard), 'no' (nobody
/// listens: the waiter is gone) or 'denied' (this user may not publish, an ACL:
/// nothing is known of the waiter then, so it stays queued and finds out by its own
/// timer). A sharded channel (`redis_lock:wake:{…`: its 17th byte is `{`) goes by
/// `SPUBLISH`, which stays in the slot's shard (see `net::wake`).
#[macro_export]
macro_rules! lua_publish {
    () => {
        r"local function tell(ch, msg)
    local verb = 'publish'
    if string.byte(ch, 17) == 123 then verb = 'spublish' end
    local heard = redis.pcall(verb, ch, msg)
    if type(heard) ~= 'number' then return 'denied' end
    if heard == 0 then return 'no' end
    return 'yes'
end
"
    };
}

/// Lua: `stamp(queue, entry, again)`. A waiter sends its entry as `+<ms>:<rest>`: how
/// long it still waits. Queued, the entry is `<until>:<rest>`, until when on this
/// server's clock, and releases pass over an entry whose time is up: its waiter may
/// be cut off from the server and unable to leave the queue (a partition), and must
/// not be handed a lock it will never use. Returns the entry as queued: `entry`
/// itself when it is so already; with `again`, the one in `queue` with the same rest
/// (an earlier try queued it and its reply was lost); otherwise a new one.
///
/// An entry sent as queued (no `+`) that is no longer in the queue has left it: it was
/// granted, or passed over. It is never queued again: a queue entry grants at most
/// once (`lua_enqueue` answers `{3, pttl}` then, and the waiter queues anew with `+`).
#[macro_export]
macro_rules! lua_stamp {
    () => {
        r"local function stamp(queue, entry, again)
    if string.byte(entry, 1) ~= 43 then return entry end
    local colon = string.find(entry, ':', 1, true)
    local rest = string.sub(entry, colon)
    if again then
        for _, e in ipairs(redis.call('lrange', queue, 0, -1)) do
            local c = string.find(e, ':', 1, true)
            if c and string.sub(e, c) == rest then return e end
        end
    end
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    return string.format('%d', now + tonumber(string.sub(entry, 2, colon - 1))) .. rest
end
"
    };
}

/// Lua helpers: `parse(entry)` splits a queue entry into token, lease, f ("1": a
/// writer that wants a fencing token, "0": a writer, "r": a reader) and channel, or
/// gives nil for an entry whose waiter's time is up (see `lua_stamp`); and `tell`
/// (`lua_publish`).
#[macro_export]
macro_rules! lua_tell {
    () => {
        concat!(
            r"local clock = nil
local function parse(entry)
    local u, lease, f, n, rest = string.match(entry, '^(%d+):(%d+):([01r]):(%d+):(.*)$')
    if not rest then return nil end
    if not clock then
        local t = redis.call('time')
        clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
    if tonumber(u) < clock then return nil end
    n = tonumber(n)
    if #rest <= n then return nil end
    return string.sub(rest, n + 1), lease, f, string.sub(rest, 1, n)
end
",
            lua_publish!()
        )
    };
}

/// Lua helpers for shared (read) holds. In read mode the lock key holds the empty
/// string (no token can be empty) and lives as long as the longest reader's lease;
/// the readers are a sorted set (KEYS[5]) of tokens scored by the Redis time, in ms,
/// when their lease ends ("inf": never). Expiry is judged on Redis's clock only.
///
/// `now_ms()`; `add_reader(readers, token, lease, now)`; `read_mode(lock, readers,
/// now)` sets the lock key and the set's expiry from the longest lease left, or
/// deletes both when no reader is left, and answers whether any is.
#[macro_export]
macro_rules! lua_readers {
    () => {
        r"local function now_ms()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function add_reader(readers, t, lease, now)
    if lease == '0' then
        redis.call('zadd', readers, 'inf', t)
    else
        redis.call('zadd', readers, now + tonumber(lease), t)
    end
end
local function read_mode(lock, readers, now)
    redis.call('zremrangebyscore', readers, '-inf', now)
    local last = redis.call('zrange', readers, -1, -1, 'withscores')
    if not last[2] then
        redis.call('del', lock, readers)
        return false
    end
    if last[2] == 'inf' then
        redis.call('set', lock, '')
        redis.call('persist', readers)
    else
        local px = math.max(1, math.ceil(tonumber(last[2]) - now))
        redis.call('set', lock, '', 'px', px)
        redis.call('pexpire', readers, px)
    end
    return true
end
"
    };
}

/// The Lua statement that keeps the records hash `$key` at least `$ms` more ms ("0":
/// no expiry, `PERSIST`), never shortening it (`GT`). A text, not a function: the
/// scripts that renew or take pay nothing for a function they may not call.
#[macro_export]
macro_rules! lua_keep_owner {
    ($key:literal, $ms:literal) => {
        concat!("if ", $ms, " == '0' then redis.call('persist', ", $key, ") else redis.call('pexpire', ", $key, ", ", $ms, ", 'gt') end\n")
    };
}

/// Lua: `live_waiters(queue)`, how many entries of the queue `queue` are still
/// waited for (their time is not up, see `lua_stamp`) by a waiter still listening on
/// their channel (`PUBSUB NUMSUB`, `SHARDNUMSUB` for a sharded one; an entry whose
/// listeners cannot be counted counts). Both kinds' entries are
/// `<until>:<a>:<b>:<channel length>:<channel><token>`.
#[macro_export]
macro_rules! lua_live_waiters {
    () => {
        r"local function live_waiters(queue)
    local n = 0
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    for _, e in ipairs(redis.call('lrange', queue, 0, -1)) do
        local head, u, len = string.match(e, '^((%d+):[^:]+:[^:]+:(%d+):)')
        if head and tonumber(u) >= now then
            local ch = string.sub(e, #head + 1, #head + tonumber(len))
            local verb = 'numsub'
            if string.byte(ch, 17) == 123 then verb = 'shardnumsub' end
            local heard = redis.pcall('pubsub', verb, ch)
            if type(heard) ~= 'table' or heard[2] ~= 0 then n = n + 1 end
        end
    end
    return n
end
"
    };
}

/// Lua helpers for who holds what (`owner_info`): the hash KEYS[6] maps a holder's
/// (or a queued waiter's) token to its record. `own(owner, t, info, ms)` records
/// `info` ("": nothing to record) and keeps the hash at least `ms` more ms ("0": no
/// expiry); `keep_owner(owner, ms)` only keeps it. A grant records nothing: the
/// waiter recorded itself when it queued.
#[macro_export]
macro_rules! lua_own {
    () => {
        concat!(
            r"local function keep_owner(owner, ms)
    ",
            lua_keep_owner!("owner", "ms"),
            r"end
local function own(owner, t, info, ms)
    if info == '' then return end
    local fresh = redis.call('exists', owner) == 0
    redis.call('hset', owner, t, info)
    if fresh and ms ~= '0' then redis.call('pexpire', owner, ms) else keep_owner(owner, ms) end
end
"
        )
    };
}

/// Lua: `next_fence(counter)`, the next fencing token of the counter key `counter`:
/// one more than the last, and at least the server's clock in µs. A counter lost with
/// the data starts again above every number issued before it (see the header).
#[macro_export]
macro_rules! lua_next_fence {
    () => {
        r"local function next_fence(counter)
    local n = redis.call('incr', counter)
    local t = redis.call('time')
    local floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
    if n < floor then
        redis.call('set', counter, string.format('%.0f', floor))
        n = floor
    end
    return n
end
"
    };
}

/// `grant(lock, fence, entry)` gives the lock to the waiting writer `entry` if it
/// still listens, with the answers of `tell`. The message is `g@<ms>:<token>`, or
/// `g<fencing token>@<ms>:<token>` when the waiter asked for one, where `<ms>` is the
/// server's clock when the grant was made (`clock`, read before the lease is set): the
/// waiter bounds from it when its lease ends (`waiting::grant_bound`), so that a grant
/// read late (a paused process) is never taken for a live hold. Publishing first is
/// safe: the waiter reads the message only after the script.
///
/// `hand_over(lock, queue, readers, fence, mine)` gives the free lock to the head of
/// the queue, stopping at the entry `mine` (a waiter never hands the lock to itself):
/// to its first writer still listening, or to every reader up to the first writer,
/// each told on its own channel. Answers whether anyone got it.
#[macro_export]
macro_rules! lua_grant {
    () => {
        concat!(
            lua_tell!(),
            lua_readers!(),
            lua_next_fence!(),
            r"local function grant(lock, fence, entry)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    local msg = string.format('g@%.0f:', clock) .. t
    if f == '1' then msg = string.format('g%.0f@%.0f:', next_fence(fence), clock) .. t end
    local answer = tell(ch, msg)
    if answer == 'yes' then
        if lease == '0' then redis.call('set', lock, t) else redis.call('set', lock, t, 'px', lease) end
    end
    return answer
end
local function hand_over(lock, queue, readers, fence, mine)
    local now = nil
    while true do
        local head = redis.call('lindex', queue, 0)
        if not head or head == mine then break end
        local t, lease, f, ch = parse(head)
        local answer = 'no'
        if t and f == 'r' then
            answer = tell(ch, string.format('g@%.0f:', clock) .. t)
            if answer == 'yes' then
                now = now or now_ms()
                add_reader(readers, t, lease, now)
            end
        elseif t then
            -- Readers got it: the writer behind them waits for their release.
            if now then break end
            answer = grant(lock, fence, head)
        end
        if answer == 'denied' then break end
        redis.call('lpop', queue)
        if answer == 'yes' and f ~= 'r' then return true end
    end
    if now then return read_mode(lock, readers, now) end
    return false
end
"
        )
    };
}

/// The end of an acquire script that found the lock busy: returns `{0, pttl}` for
/// one try (`entry` is ""), or queues `entry` (unless `queued` already) with `push`,
/// keeps the queue `life` ms, starts the first waiter's `patience` (KEYS[3]),
/// records the waiter's `info` (KEYS[6], for its wait and its lease) and returns
/// `{2, pttl, entry}` (the entry as queued: `lua_stamp`), or `{3, pttl}` when the entry
/// ARGV[3] was sent as queued and has left the queue (see `lua_stamp`). Expects the
/// locals `lock`, `queue`, `entry`, `queued`, `again`, `push`, `life`, `patience`,
/// `token`, `lease` and `info`, and `lua_own`.
#[macro_export]
macro_rules! lua_enqueue {
    () => {
        r"local pttl = redis.call('pttl', lock)
if entry == '' then return {0, pttl} end
-- Sent as queued, and gone: granted or passed over. Never queued twice.
if not queued and again and string.byte(ARGV[3], 1) ~= 43 then return {3, pttl} end
if not queued then
    -- One command per line: an error names its line (see `Script::explain`).
    local n
    if push == 'lpush' then
        n = redis.call('lpush', queue, entry)
    else
        n = redis.call('rpush', queue, entry)
    end
    if n == 1 then
        redis.call('pexpire', queue, life)
        redis.call('set', KEYS[3], '1', 'px', patience)
    else
        redis.call('pexpire', queue, life, 'gt')
    end
    if info ~= '' then
        local ms = '0'
        if lease ~= '0' then ms = tostring(tonumber(life) + tonumber(lease)) end
        own(KEYS[6], token, info, ms)
    end
end
return {2, pttl, entry}"
    };
}

/// `notify(entry, ms)` tells a waiter to look again in `ms` (the message is
/// `n<ms>:<token>`), with the answers of `tell`.
#[macro_export]
macro_rules! lua_notify {
    () => {
        concat!(
            lua_tell!(),
            r"local function notify(entry, ms)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    return tell(ch, 'n' .. ms .. ':' .. t)
end
"
        )
    };
}

/// The first try when it must do more than `SET NX PX`: `SET NX PX` of the token
/// ARGV[1] on KEYS[1] with a lease of ARGV[2] ms (0: no expiry), then, when taken,
/// the record ARGV[5] of who took it in the hash KEYS[3] (none when absent) and,
/// unless ARGV[4] is "0", an `INCR` of the fencing counter KEYS[2]. Returns the
/// fencing token (1 without one), or 0 when the key is held.
///
/// With ARGV[3] = "1" it settles a lost reply of an earlier run: a key found held by
/// this token was taken by that run, and the counter is then still this holder's
/// number (no one else has held the key since), and its lease starts again, since the
/// caller counts it from this run. Otherwise a key that holds the same
/// token is busy like any other: taking a lock is never re-entry.
pub static TAKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_next_fence!(),
        r"local holder
if ARGV[2] == '0' then
    holder = redis.call('set', KEYS[1], ARGV[1], 'nx', 'get')
else
    holder = redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', ARGV[2], 'get')
end
if not holder then
    if ARGV[5] then
        local fresh = redis.call('exists', KEYS[3]) == 0
        redis.call('hset', KEYS[3], ARGV[1], ARGV[5])
        if fresh and ARGV[2] ~= '0' then redis.call('pexpire', KEYS[3], ARGV[2]) else ",
        lua_keep_owner!("KEYS[3]", "ARGV[2]"),
        r"        end
    end
    if ARGV[4] ~= '0' then return next_fence(KEYS[2]) end
    return 1
end
if holder == ARGV[1] and ARGV[3] == '1' then
    -- Found held: the lease starts again now, as the caller counts it from this try.
    if ARGV[2] ~= '0' then redis.call('pexpire', KEYS[1], ARGV[2]) end
    if ARGV[4] == '0' then return 1 end
    return tonumber(redis.call('get', KEYS[2])) or next_fence(KEYS[2])
end
return 0",
    ))
});

/// The fencing token of a hold taken without one: `INCR` of the counter KEYS[2] if
/// KEYS[1] still holds the token ARGV[1], which makes the number part of this
/// holder's tenure. Returns the number, or 0 when the token no longer holds the key.
pub static FENCE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_next_fence!(),
        r"if redis.call('get', KEYS[1]) == ARGV[1] then return next_fence(KEYS[2]) end
return 0",
    ))
});

/// Takes KEYS[1] for the token ARGV[1] with a lease of ARGV[2] ms (0: no expiry), or queues for it
/// in the list KEYS[2]. KEYS[3] is the patience marker of the queue's first waiter,
/// KEYS[4] the fencing counter, KEYS[5] the readers of a shared hold.
///
/// - ARGV[3]: this waiter's queue entry (`+<ms>:…` until queued, see `lua_stamp`),
///   or "" to take one try without queueing;
/// - ARGV[4]: the queue's lifetime in ms (the caller's remaining wait, plus slack);
/// - ARGV[5]: "1" in fair mode: a free lock goes to the waiters already queued;
/// - ARGV[6]: "1" on any try after the first, and on a settle: this waiter may be
///   queued already, or hold the lock (handed over, or taken by a try whose reply was
///   lost). A key found holding this token counts as this waiter's only then, and only
///   once its entry has left the queue: a caller's token may be another holder's too,
///   and taking a lock is never re-entry;
/// - ARGV[7]: the patience, in ms, of a waiter that arrives at the head of the queue;
/// - ARGV[8]: "1" to issue a fencing token;
/// - ARGV[9]: "1" when this token holds a read share (KEYS[5]) that it upgrades: the
///   lock is taken once no other reader is left, and meanwhile the waiter queues
///   first in line;
/// - ARGV[10]: who takes it (`owner::record`, in KEYS[6]), or "" to record nothing.
///
/// Returns `{1, fencing token}` when the token holds the lock (now, or handed over
/// earlier; the fencing token is 0 when none was asked for), `{0, pttl}` when busy and
/// not queued, `{2, pttl, entry as queued}` when busy and queued, `{3, pttl}` when busy
/// and the entry, sent as queued, has left the queue (granted or passed over: it is
/// not queued again); pttl is the holder's remaining lease
/// in ms (negative: no expiry). A hold found held already gets its lease again, from now. Running it twice with the same arguments is harmless,
/// which is what settles a lost reply: the caller asks for a fencing token only when
/// every earlier run for this token asked for one too (the counter then still holds
/// this holder's number).
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_stamp!(),
        lua_next_fence!(),
        r"local lock, queue, fence = KEYS[1], KEYS[2], KEYS[4]
local token, lease, entry, info = ARGV[1], ARGV[2], ARGV[3], ARGV[10]
local again = ARGV[6] == '1'
if entry ~= '' then entry = stamp(queue, entry, again) end
if ARGV[5] == '1' and redis.call('exists', lock) == 0 then
    -- Fair: hand a free lock to the first live waiter ahead of this one.
",
        lua_grant!(),
        r"    hand_over(lock, queue, KEYS[5], fence, entry)
end
",
        lua_own!(),
        r"local holder
if lease == '0' then
    holder = redis.call('set', lock, token, 'nx', 'get')
else
    holder = redis.call('set', lock, token, 'nx', 'px', lease, 'get')
end
local taken = not holder
local upgrading = ARGV[9] == '1' and holder == ''
if upgrading then
    -- This token holds a read share: the lock is its once it is the only reader.
    local t = redis.call('time')
    redis.call('zremrangebyscore', KEYS[5], '-inf', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
    local share = redis.call('zscore', KEYS[5], token)
    upgrading = share ~= false
    if share and redis.call('zcard', KEYS[5]) == 1 then
        redis.call('del', KEYS[5])
        if lease == '0' then redis.call('set', lock, token) else redis.call('set', lock, token, 'px', lease) end
        taken = true
    end
end
local queued = again and entry ~= '' and redis.call('lpos', queue, entry)
if taken or (holder == token and again and not queued) then
    if queued then redis.call('lrem', queue, 0, entry) end
    if taken then own(KEYS[6], token, info, lease) end
    -- Held already (handed over, or a retried call): the lease starts again now, as
    -- the caller counts it from this try (a grant read late must not outlive it).
    if not taken and lease ~= '0' then redis.call('pexpire', lock, lease) end
    if ARGV[8] ~= '1' then return {1, 0} end
    -- Taken now: a new number. Held already: the counter still has this holder's
    -- number, since no one else took the key since.
    if taken then return {1, next_fence(fence)} end
    return {1, tonumber(redis.call('get', fence)) or 0}
end
-- An upgrading reader goes first: readers that come after it queue behind it, and
-- the last other reader's release hands it the lock.
local push, life, patience = 'rpush', ARGV[4], ARGV[7]
if upgrading then push = 'lpush' end
",
        lua_enqueue!()
    ))
});

/// Releases KEYS[1] if it holds the token ARGV[1], or whoever holds it when ARGV[1]
/// is "" (a forced release, readers included: no token is empty), and removes the
/// holder's record from KEYS[6]. Returns 1 when released, 2 when released
/// but only freed while waiters are queued (the short-hold case below), 0 otherwise,
/// -1 when the lock is held by readers (a reader's share is released by
/// `shared::READ_RELEASE`).
///
/// Normally the lock goes straight to the head of KEYS[2] (`hand_over`: its first
/// writer that still listens, or the run of readers before the first writer)
/// (with a fencing token from KEYS[4] if it asked for one), and the next waiter's
/// patience (KEYS[3], ARGV[3] ms) starts. With ARGV[2] = "1" (a short hold, not in
/// fair mode) the lock is only freed, so that the releaser or a newcomer may take it
/// again at once, but only while the first waiter's patience lasts; that waiter is
/// told once when to look again, and no release after that passes it over.
///
/// The common case, nobody waiting, comes first and defines nothing.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        r"local holder = redis.call('get', KEYS[1])
if not holder then return 0 end
if holder ~= ARGV[1] and ARGV[1] ~= '' then
    -- In read mode the token may be a reader's: the caller asks `READ_RELEASE` then.
    if holder == '' then return -1 end
    return 0
end
-- Forced, in read mode: every reader's share goes with it.
if holder == '' then redis.call('del', KEYS[5]) end
if redis.call('exists', KEYS[2]) == 0 then
    -- Nobody waits: no one else's record is left in KEYS[6] either.
    redis.call('del', KEYS[1], KEYS[6])
    return 1
end
local lock, queue, patience, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
redis.call('hdel', KEYS[6], holder)
if ARGV[2] == '1' then
    local p = redis.call('get', patience)
    if p then
        redis.call('del', lock)
        if p == '1' then
",
        lua_notify!(),
        r"            local left = redis.call('pttl', patience)
            while true do
                local head = redis.call('lindex', queue, 0)
                if not head then break end
                local answer = notify(head, left)
                if answer ~= 'no' then break end
                redis.call('lpop', queue)
            end
            redis.call('set', patience, '2', 'keepttl')
        end
        return 2
    end
end
",
        lua_grant!(),
        r"if hand_over(lock, queue, KEYS[5], fence, nil) then
    redis.call('set', patience, '1', 'px', ARGV[3])
    return 1
end
redis.call('del', lock)
return 1"
    ))
});

/// Hands the lock KEYS[1], if it is free, to the head of its queue KEYS[2] as a
/// release does, and starts the next waiter's patience (KEYS[3], ARGV[1] ms); KEYS[4]
/// and KEYS[5] as in `RELEASE`. Run by a process that freed the lock for its own
/// re-take (a short hold) and will not take it again after all, so that the waiters
/// need not wait for their timers. Returns 1 when someone got the lock, 0 otherwise.
pub static KICK: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        r"if redis.call('exists', KEYS[2]) == 0 or redis.call('exists', KEYS[1]) == 1 then return 0 end
",
        lua_grant!(),
        r"if hand_over(KEYS[1], KEYS[2], KEYS[5], KEYS[4], nil) then
    redis.call('set', KEYS[3], '1', 'px', ARGV[1])
    return 1
end
return 0"
    ))
});

/// Leaves the queue KEYS[2] (entry ARGV[2], as queued or as sent: `lua_stamp`) when
/// a wait gives up. Returns
/// `{1, fencing counter}` if the lock KEYS[1] was handed to this waiter's token
/// ARGV[1] in the meantime (the counter KEYS[3] then holds its number), `{0, 0}`
/// otherwise, `{2, 0}` if a read share was handed to it (KEYS[4]: the readers;
/// KEYS[5]: who holds and waits, where the waiter's record is removed). A hold
/// handed over gets its lease (ARGV[3] ms, 0: none) again from now, since the waiter
/// counts it from the cancel. A
/// grant takes the entry out of the queue: a key that holds the token while the
/// entry is still queued is another holder's with the same chosen token.
pub static CANCEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_stamp!(),
        r"if redis.call('lrem', KEYS[2], 0, stamp(KEYS[2], ARGV[2], true)) ~= 0 then
    redis.call('hdel', KEYS[5], ARGV[1])
    return {0, 0}
end
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] then
    -- Handed over meanwhile: its lease starts again now, as the waiter counts it.
    if ARGV[3] ~= '0' then redis.call('pexpire', KEYS[1], ARGV[3]) end
    return {1, tonumber(redis.call('get', KEYS[3])) or 0}
end
if holder == '' and redis.call('zscore', KEYS[4], ARGV[1]) then
",
        lua_readers!(),
        r"    local now = now_ms()
    add_reader(KEYS[4], ARGV[1], ARGV[3], now)
    read_mode(KEYS[1], KEYS[4], now)
    return {2, 0}
end
return {0, 0}",
    ))
});

/// Sets the lease of KEYS[1] to ARGV[2] ms (0: no expiry) if the key still holds the
/// token ARGV[1], and keeps the record of who holds it (KEYS[2], when given) as long.
/// Returns 1 when it did, 0 when the token no longer holds the key. Used by
/// `extendLock()` and by the watchdog.
pub static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        r"if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
if KEYS[2] then ",
        lua_keep_owner!("KEYS[2]", "ARGV[2]"),
        r"end
if ARGV[2] == '0' then
    redis.call('persist', KEYS[1])
    return 1
end
return redis.call('pexpire', KEYS[1], ARGV[2])",
    ))
});

/// What `Lock::inspect()` shows, read in one step and changing nothing. KEYS as
/// `LockKeys::all()`; ARGV[1] the inspecting object's token, or "".
///
/// Returns `{state, pttl, readers, waiters, fence, mine, records}`: state "free",
/// "write" or "read"; pttl in ms (-2: free, -1: no expiry); the live readers; the
/// queue entries whose waiter still listens (`PUBSUB NUMSUB` of its channel; an entry
/// whose listeners cannot be counted counts); the fencing counter ("" if none); 1
/// when ARGV[1] holds it; one record per holder ("" where none was kept).
pub static INSPECT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_live_waiters!(),
        r"local lock, queue, readers, owner = KEYS[1], KEYS[2], KEYS[5], KEYS[6]
local t0 = redis.call('time')
local now = tonumber(t0[1]) * 1000 + math.floor(tonumber(t0[2]) / 1000)
local holder = redis.call('get', lock)
local state, pttl, count, mine, records = 'free', -2, 0, 0, {}
if holder then
    pttl = redis.call('pttl', lock)
    local holders = {holder}
    state = 'write'
    if holder == '' then
        state = 'read'
        holders = redis.call('zrangebyscore', readers, '(' .. now, '+inf')
        count = #holders
    end
    for _, t in ipairs(holders) do
        if ARGV[1] ~= '' and t == ARGV[1] then mine = 1 end
        records[#records + 1] = redis.call('hget', owner, t) or ''
    end
end
return {state, pttl, count, live_waiters(queue), redis.call('get', KEYS[4]) or '', mine, records}"
    ))
});
