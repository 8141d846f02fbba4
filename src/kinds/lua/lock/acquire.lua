-- acquire: takes a Lock for a writer, or queues for it.
--
-- KEYS[1] the lock   KEYS[2] the queue   KEYS[3] the first waiter's patience
-- KEYS[4] the fencing counter   KEYS[5] the readers   KEYS[6] who holds and waits
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': no expiry)
-- ARGV[3] this waiter's queue entry ("+<ms>:..." until queued, see stamp), or ''
--         for one try without queueing
-- ARGV[4] the queue's lifetime in ms (the caller's remaining wait, plus slack)
-- ARGV[5] '1' in fair mode: a free lock goes to the waiters already queued
-- ARGV[6] '1' on any try after the first, and on a settle: this waiter may be
--         queued already, or hold the lock (handed over, or taken by a try whose
--         reply was lost). A key found holding this token counts as this waiter's
--         only then, and only once its entry has left the queue: a caller's token
--         may be another holder's too, and taking a lock is never re-entry
-- ARGV[7] '1' when the token is the caller's choice: another holder may use it too,
--         so a key found holding it counts as this waiter's only when the entry it
--         sent as queued (no '+') has left the queue, which a grant to it does;
--         otherwise (a settle after a lost reply, a fresh entry) it answers {4, pttl}
-- ARGV[8] '1' to issue a fencing token
-- ARGV[9] '1' when this token holds a read share that it upgrades: the lock is
--         taken once no other reader is left, and meanwhile the waiter queues first
-- ARGV[10] the record of who takes it (owner::record), or '' for none
--
-- Returns {1, fencing token} when the token holds the lock (now, or handed over
-- earlier; 0 when none was asked for), {0, pttl} busy and not queued,
-- {2, pttl, entry as queued, clock} busy and queued, {3, pttl} busy and the entry, sent as
-- queued, has left the queue (granted or passed over: it is not queued again), {4,
-- pttl} held by this token, a caller's, with nothing to show it is this waiter's.
-- pttl is the holder's remaining lease in ms (negative: no expiry); clock is the
-- server's clock in ms when the entry was stamped (absent for an entry sent as
-- queued: see stamp). A hold found
-- held already gets its lease again, from now. Running it twice with the same
-- arguments is harmless, which is what settles a lost reply: the caller asks for a
-- fencing token only when every earlier run for this token asked for one too (the
-- counter then still holds this holder's number).
--
-- Each helper is included in the branch that uses it: the common cases (taken at
-- once, or busy and queued) define only stamp.
--@include stamp
local lock, queue, fence = KEYS[1], KEYS[2], KEYS[4]
local token, lease, entry, info = ARGV[1], ARGV[2], ARGV[3], ARGV[10]
local again = ARGV[6] == '1'
local stamped = nil
if entry ~= '' then entry, stamped = stamp(queue, entry, again) end
if ARGV[5] == '1' and redis.call('exists', lock) == 0 and redis.call('lindex', queue, 0) ~= entry then
    -- Fair: hand a free lock to the first live waiter ahead of this one.
    --@include grant
    hand_over(lock, queue, KEYS[5], fence, entry, nil)
end
local holder
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
if not taken and holder == token and again and not queued and ARGV[7] == '1'
        and (entry == '' or string.byte(ARGV[3], 1) == 43) then
    -- A caller's token, and no entry of this waiter's that a grant took out: the hold
    -- may be another's with the same token. Never re-entry: not this waiter's.
    return {4, redis.call('pttl', lock)}
end
if taken or (holder == token and again and not queued) then
    if queued then redis.call('lrem', queue, 0, entry) end
    if taken and info ~= '' then
        --@include own
        own(KEYS[6], token, info, lease)
    end
    -- Held already (handed over, or a retried call): the lease starts again now, as
    -- the caller counts it from this try (a grant read late must not outlive it).
    if not taken and lease ~= '0' then redis.call('pexpire', lock, lease) end
    if ARGV[8] ~= '1' then return {1, 0} end
    -- Taken now: a new number. Held already: the counter still has this holder's
    -- number, since no one else took the key since.
    if taken then
        --@include next_fence
        return {1, next_fence(fence)}
    end
    return {1, tonumber(redis.call('get', fence)) or 0}
end
-- An upgrading reader goes first: readers that come after it queue behind it, and
-- the last other reader's release hands it the lock.
local push, life = 'rpush', ARGV[4]
if upgrading then push = 'lpush' end
--@include enqueue
