//! The semaphore's Lua scripts. Every one first reclaims the holds whose lease
//! has ended (on Redis's clock), then takes, frees, renews or reports permits, and
//! hands freed permits to the queued waiters that now fit (see the parent module).

use crate::net::script::Script;
use std::sync::LazyLock;

/// Lua helpers of every semaphore script. KEYS[1] is the hash (`permits`, `used`,
/// `fair`, `w:<token>`: each holder's weight, `o:<token>`: who holds or waits, with
/// `owner_info`), KEYS[2] the queue,
/// KEYS[3] the first waiter's patience (`<deadline ms>:<entry>`), KEYS[4] the holders.
/// A queue entry is `<until>:<lease ms>:<weight>:<channel length>:<channel><token>`
/// (`until`: see `lua_stamp`); `parse` gives nil for one whose time is up.
macro_rules! lua_permits {
    () => {
        r"local sem, queue, patience, holders = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local t0 = redis.call('time')
local now = tonumber(t0[1]) * 1000 + math.floor(tonumber(t0[2]) / 1000)
local function drop(t)
    local w = tonumber(redis.call('hget', sem, 'w:' .. t)) or 0
    redis.call('hdel', sem, 'w:' .. t, 'o:' .. t)
    redis.call('hincrby', sem, 'used', -w)
    redis.call('zrem', holders, t)
end
for _, t in ipairs(redis.call('zrangebyscore', holders, '-inf', now)) do drop(t) end
local function used()
    return tonumber(redis.call('hget', sem, 'used')) or 0
end
local function add(t, w, lease, permits, fair)
    if lease == '0' then redis.call('zadd', holders, 'inf', t) else redis.call('zadd', holders, now + tonumber(lease), t) end
    redis.call('hset', sem, 'permits', permits, 'fair', fair, 'w:' .. t, w)
    redis.call('hincrby', sem, 'used', w)
end
local function keep()
    local last = redis.call('zrange', holders, -1, -1, 'withscores')
    if not last[2] then
        redis.call('del', sem, holders)
    elseif last[2] == 'inf' then
        redis.call('persist', sem)
        redis.call('persist', holders)
    else
        local px = math.max(1, math.ceil(tonumber(last[2]) - now))
        redis.call('pexpire', sem, px)
        redis.call('pexpire', holders, px)
    end
end
local function parse(e)
    local u, lease, w, n, rest = string.match(e, '^(%d+):(%d+):(%d+):(%d+):(.*)$')
    if not rest or tonumber(u) < now then return nil end
    n = tonumber(n)
    return string.sub(rest, n + 1), lease, tonumber(w), string.sub(rest, 1, n)
end
local function patient(head, ms)
    if not head then return true end
    local v = redis.call('get', patience)
    local until_ms, who = nil, nil
    if v then until_ms, who = string.match(v, '^(%d+):(.*)$') end
    if who ~= head then
        local life = redis.call('pttl', queue)
        if life < 1 then life = 60000 end
        redis.call('set', patience, (now + tonumber(ms)) .. ':' .. head, 'px', life)
        return true
    end
    return now < tonumber(until_ms)
end
"
    };
}

/// `hand_out(permits, fair, ms)` gives free permits to the queued waiters that fit,
/// in queue order (the first 64), past a first waiter that does not fit only when
/// not `fair` and while its patience (`ms`) lasts. Answers whether anyone got some.
macro_rules! lua_hand_out {
    () => {
        concat!(
            lua_publish!(),
            r"local function hand_out(permits, fair, ms)
    local free = permits - used()
    local given = false
    for i, e in ipairs(redis.call('lrange', queue, 0, 63)) do
        if free <= 0 then break end
        local t, lease, w, ch = parse(e)
        if not t then
            redis.call('lrem', queue, 1, e)
        elseif w <= free then
            local answer = tell(ch, string.format('g@%.0f:', now) .. t)
            if answer == 'denied' then break end
            redis.call('lrem', queue, 1, e)
            if answer == 'yes' then
                add(t, w, lease, permits, fair and '1' or '0')
                free = free - w
                given = true
            end
        elseif fair or not patient(e, ms) then
            break
        end
    end
    return given
end
"
        )
    };
}

/// Takes `ARGV[7]` permits of `ARGV[6]` for the token ARGV[1] with a lease of ARGV[2]
/// ms (0: none), or queues with the entry ARGV[3] ("": one try). ARGV[4]: the queue's
/// lifetime in ms; ARGV[5] "1" on any try after the first; ARGV[8] "1" in fair mode;
/// ARGV[9] the first waiter's patience in ms; ARGV[10] the record of who takes them
/// (`owner::record`; "": none), kept as `o:<token>` while it holds or waits.
///
/// Returns `{1, 0}` when the token holds its permits (found held already: with its
/// lease again from now), `{0, ms}` busy and not queued, `{3, ms}` busy and the entry,
/// sent as queued, gone from the queue (see `lua_stamp`),
/// `{2, ms, entry as queued}` queued (ms: until the earliest lease ends, -1 if none does), `{-1,
/// stored}` when the holders agreed on another number of permits.
pub static ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_permits!(),
        lua_stamp!(),
        r"local token, lease, entry = ARGV[1], ARGV[2], ARGV[3]
if entry ~= '' then entry = stamp(queue, entry, ARGV[5] == '1') end
local permits, weight = tonumber(ARGV[6]), tonumber(ARGV[7])
local stored = redis.call('hget', sem, 'permits')
if stored and tonumber(stored) ~= permits and redis.call('zcard', holders) > 0 then return {-1, tonumber(stored)} end
local queued = ARGV[5] == '1' and entry ~= '' and redis.call('lpos', queue, entry)
-- Handed over while queued (the grant took the entry out), or a retried try: the
-- lease starts again now, as the caller counts it from this try.
if ARGV[5] == '1' and not queued and redis.call('zscore', holders, token) then
    if lease == '0' then redis.call('zadd', holders, 'inf', token) else redis.call('zadd', holders, now + tonumber(lease), token) end
    keep()
    return {1, 0}
end
if not redis.call('zscore', holders, token) and permits - used() >= weight then
    local head = redis.call('lindex', queue, 0)
    if not head or head == entry or (ARGV[8] ~= '1' and patient(head, ARGV[9])) then
        if queued then redis.call('lrem', queue, 0, entry) end
        add(token, weight, lease, permits, ARGV[8])
        if ARGV[10] ~= '' then redis.call('hset', sem, 'o:' .. token, ARGV[10]) end
        keep()
        return {1, 0}
    end
end
local first = redis.call('zrange', holders, 0, 0, 'withscores')
local ms = -1
if first[2] and first[2] ~= 'inf' then ms = math.max(0, math.ceil(tonumber(first[2]) - now)) end
if entry == '' then return {0, ms} end
-- Sent as queued, and gone: granted or passed over. Never queued twice.
if not queued and ARGV[5] == '1' and string.byte(ARGV[3], 1) ~= 43 then return {3, ms} end
if not queued then
    if ARGV[10] ~= '' and redis.call('exists', sem) == 1 then redis.call('hset', sem, 'o:' .. token, ARGV[10]) end
    redis.call('rpush', queue, entry)
    redis.call('pexpire', queue, ARGV[4], 'gt')
    if redis.call('pttl', queue) < 0 then redis.call('pexpire', queue, ARGV[4]) end
end
return {2, ms, entry}"
    ))
});

/// Releases the hold of the token ARGV[1] and hands the freed permits out, fairly if
/// the holders were taken in fair mode (ARGV[2]: the patience in ms). Returns 1 when the hold was released with its
/// lease still running, 0 when the token held nothing (or its lease had ended).
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_permits!(),
        lua_hand_out!(),
        r"local live = 0
if redis.call('zscore', holders, ARGV[1]) then
    live = 1
    drop(ARGV[1])
end
local permits = tonumber(redis.call('hget', sem, 'permits'))
if permits then hand_out(permits, redis.call('hget', sem, 'fair') == '1', ARGV[2]) end
keep()
return live"
    ))
});

/// Sets the lease of the hold of the token ARGV[1] to ARGV[2] ms (0: none) if it is
/// still live. Returns 1 when it did, 0 otherwise.
pub static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_permits!(),
        r"if not redis.call('zscore', holders, ARGV[1]) then return 0 end
if ARGV[2] == '0' then
    redis.call('zadd', holders, 'inf', ARGV[1])
else
    redis.call('zadd', holders, now + tonumber(ARGV[2]), ARGV[1])
end
keep()
return 1"
    ))
});

/// Leaves the queue (entry ARGV[2]) when a wait gives up. Returns 1 if permits were
/// handed to the token ARGV[1] meanwhile (their lease, ARGV[3] ms, 0: none, starting
/// again from now, as the waiter counts it), 0 otherwise.
pub static CANCEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_permits!(),
        lua_stamp!(),
        r"if redis.call('lrem', queue, 0, stamp(queue, ARGV[2], true)) ~= 0 then
    redis.call('hdel', sem, 'o:' .. ARGV[1])
    return 0
end
if redis.call('zscore', holders, ARGV[1]) then
    -- Handed over meanwhile: its lease starts again now, as the waiter counts it.
    if ARGV[3] == '0' then redis.call('zadd', holders, 'inf', ARGV[1]) else redis.call('zadd', holders, now + tonumber(ARGV[3]), ARGV[1]) end
    keep()
    return 1
end
return 0"
    ))
});

/// The permits free now out of ARGV[1], and whether the token ARGV[2] holds some:
/// `{free, held}`, or `{-1, stored}` when the holders agreed on another number.
pub static STATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_permits!(),
        r"local stored = redis.call('hget', sem, 'permits')
if stored and tonumber(stored) ~= tonumber(ARGV[1]) and redis.call('zcard', holders) > 0 then return {-1, tonumber(stored)} end
local held = 0
if ARGV[2] ~= '' and redis.call('zscore', holders, ARGV[2]) then held = 1 end
return {tonumber(ARGV[1]) - used(), held}"
    ))
});

/// What `Semaphore::inspect()` shows, read in one step and changing nothing (holds
/// whose lease has ended are left out, not reclaimed). Returns `{permits, used,
/// waiters, holders}`: the number the live holders agreed on (-1 when none holds),
/// the permits they hold, the queue entries whose waiter still listens, and one
/// `{weight, ms left (-1: no expiry), record ("": none kept)}` per live holder.
pub static INSPECT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_live_waiters!(),
        r"local sem, queue, holders = KEYS[1], KEYS[2], KEYS[4]
local t0 = redis.call('time')
local now = tonumber(t0[1]) * 1000 + math.floor(tonumber(t0[2]) / 1000)
local list, used = {}, 0
local live = redis.call('zrangebyscore', holders, '(' .. now, '+inf', 'withscores')
for i = 1, #live, 2 do
    local t, score = live[i], live[i + 1]
    local w = tonumber(redis.call('hget', sem, 'w:' .. t)) or 0
    used = used + w
    local ms = -1
    if score ~= 'inf' then ms = math.max(0, math.ceil(tonumber(score) - now)) end
    list[#list + 1] = {w, ms, redis.call('hget', sem, 'o:' .. t) or ''}
end
local stored = -1
if #list > 0 then stored = tonumber(redis.call('hget', sem, 'permits')) or -1 end
return {stored, used, live_waiters(queue), list}",
    ))
});
