//! Shared (read) holds of a `Lock`: many readers at once, no writer meanwhile.
//!
//! In read mode the lock key holds the empty string (no token is empty), so a
//! writer's `SET NX` fails as it does against any holder, and the common writer
//! path pays nothing for readers. The readers are a sorted set beside the key
//! (`LockKeys::readers`), each token scored with the Redis time, in ms, when its
//! lease ends: expiry is judged on Redis's clock, never a client's, and a crashed
//! reader's share is gone when its lease ends. The key lives as long as the longest
//! lease, so when every reader has crashed the lock frees itself.
//!
//! Nobody starves: a reader joins only when no one waits ahead of it, so once a
//! writer queues, new readers queue behind it. A release that frees the key hands
//! it to the head of the queue: one writer, or every reader up to the first writer,
//! each woken on its own channel (`hand_over` in `scripts`). A reader that asks for
//! the write lock (an upgrade) queues first in line, and gets it when it is the only
//! reader left; a writer that asks for a read share (a downgrade) gets it in the
//! same step as it gives up the write lock, so no writer can enter in between.
//!
//! The scripts take the keys in `LockKeys::all()` order: lock, queue, patience,
//! fence, readers.

use crate::net::script::Script;
use std::sync::LazyLock;

/// Takes a read share of KEYS[1] for the token ARGV[1] with a lease of ARGV[2] ms
/// (0: none), or queues for it with the entry ARGV[3] ("": one try, no queueing).
/// ARGV[4] is the queue's lifetime in ms, ARGV[5] "1" on any try after the first
/// (the share may have been handed over already), ARGV[6] the patience in ms of a
/// waiter that arrives at the head of an empty queue, ARGV[7] the record of who
/// takes it (`owner::record`, kept in KEYS[6]) or "".
///
/// Returns `{1, 0}` when the token holds a share (one found held already gets its
/// lease again, from now), `{0, pttl}` when not and not queued, `{2, pttl, entry as
/// queued}` when queued, `{3, pttl}` when the entry, sent as queued, has left the queue
/// (see `lua_stamp`); pttl is the key's remaining lease in ms.
pub static READ_ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_readers!(),
        lua_own!(),
        lua_stamp!(),
        r"local lock, queue, readers = KEYS[1], KEYS[2], KEYS[5]
local token, lease, entry, info = ARGV[1], ARGV[2], ARGV[3], ARGV[7]
local again = ARGV[5] == '1'
if entry ~= '' then entry = stamp(queue, entry, again) end
local now = now_ms()
local holder = redis.call('get', lock)
local queued = again and entry ~= '' and redis.call('lpos', queue, entry)
if holder == '' then
    redis.call('zremrangebyscore', readers, '-inf', now)
    -- Handed over while queued (the grant took the entry out), or a retried try: the
    -- lease starts again now, as the caller counts it from this try.
    if again and not queued and redis.call('zscore', readers, token) then
        add_reader(readers, token, lease, now)
        read_mode(lock, readers, now)
        return {1, 0}
    end
end
if not holder or holder == '' then
    local head = redis.call('lindex', queue, 0)
    if not head or head == entry then
        if queued then redis.call('lrem', queue, 0, entry) end
        add_reader(readers, token, lease, now)
        read_mode(lock, readers, now)
        own(KEYS[6], token, info, lease)
        return {1, 0}
    end
end
local push, life, patience = 'rpush', ARGV[4], ARGV[6]
",
        lua_enqueue!()
    ))
});

/// Releases the read share of the token ARGV[1]. Returns 1 when it was released
/// with its lease still running, 0 when the token held no share (or its lease had
/// run out). The last reader out hands the lock over (see the module comment); when
/// one reader is left and it waits first in line to upgrade, it gets the write lock
/// (ARGV[2]: the patience, in ms, of the next waiter).
pub static READ_RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_grant!(),
        r"local lock, queue, readers, fence = KEYS[1], KEYS[2], KEYS[5], KEYS[4]
if redis.call('get', lock) ~= '' then return 0 end
local now = now_ms()
local score = redis.call('zscore', readers, ARGV[1])
if not score then return 0 end
redis.call('zrem', readers, ARGV[1])
redis.call('hdel', KEYS[6], ARGV[1])
local live = 0
if score == 'inf' or tonumber(score) > now then live = 1 end
redis.call('zremrangebyscore', readers, '-inf', now)
local left = redis.call('zcard', readers)
if left == 1 then
    local head = redis.call('lindex', queue, 0)
    local t, lease, f = nil, nil, nil
    if head then t, lease, f = parse(head) end
    if t and f ~= 'r' and redis.call('zscore', readers, t) then
        local answer = grant(lock, fence, head)
        if answer ~= 'denied' then redis.call('lpop', queue) end
        if answer == 'yes' then
            redis.call('del', readers)
            redis.call('set', KEYS[3], '1', 'px', ARGV[2])
            return live
        end
    end
end
if read_mode(lock, readers, now) then return live end
if hand_over(lock, queue, readers, fence, nil) then redis.call('set', KEYS[3], '1', 'px', ARGV[2]) end
return live"
    ))
});

/// Turns the write lock of the token ARGV[1] into a read share with a lease of
/// ARGV[2] ms (0: none), in one step, and lets in the readers waiting at the head of
/// the queue. Returns 1 when done, 0 when the token does not hold the write lock.
pub static DOWNGRADE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_tell!(),
        lua_readers!(),
        r"local lock, queue, readers = KEYS[1], KEYS[2], KEYS[5]
if redis.call('get', lock) ~= ARGV[1] then return 0 end
local now = now_ms()
add_reader(readers, ARGV[1], ARGV[2], now)
while true do
    local head = redis.call('lindex', queue, 0)
    if not head then break end
    local t, lease, f, ch = parse(head)
    if t and f ~= 'r' then break end
    local answer = 'no'
    if t then answer = tell(ch, string.format('g@%.0f:', clock) .. t) end
    if answer == 'denied' then break end
    redis.call('lpop', queue)
    if answer == 'yes' then add_reader(readers, t, lease, now) end
end
read_mode(lock, readers, now)
return 1"
    ))
});

/// Sets the lease of the read share of the token ARGV[1] to ARGV[2] ms (0: none),
/// if the share is still live, and keeps the record of who holds it as long.
/// Returns 1 when it did, 0 otherwise. KEYS: the lock, its readers and, when given,
/// the records.
pub static READ_RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_readers!(),
        r"if redis.call('get', KEYS[1]) ~= '' then return 0 end
local now = now_ms()
local score = redis.call('zscore', KEYS[2], ARGV[1])
if not score or (score ~= 'inf' and tonumber(score) <= now) then return 0 end
add_reader(KEYS[2], ARGV[1], ARGV[2], now)
read_mode(KEYS[1], KEYS[2], now)
if KEYS[3] then ",
        lua_keep_owner!("KEYS[3]", "ARGV[2]"),
        r"end
return 1"
    ))
});

/// Whether the token ARGV[1] holds the lock KEYS[1]: 1 for the write lock, 2 for a
/// live read share (KEYS[2]: the readers), 0 for neither.
pub static HOLDS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        lua_readers!(),
        r"local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] then return 1 end
if holder ~= '' then return 0 end
local score = redis.call('zscore', KEYS[2], ARGV[1])
if score and (score == 'inf' or tonumber(score) > now_ms()) then return 2 end
return 0"
    ))
});
