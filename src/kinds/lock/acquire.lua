-- acquire: takes a Lock for a writer, or queues for it.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key fence       the fencing counter
-- @key readers     the readers
-- @key owner       who holds and waits (owner_info)
-- @arg token       the token
-- @arg lease       the lease in ms ('0': no expiry)
-- @arg sent        this waiter's queue entry ("+<ms>:..." until queued, see stamp), or ''
--                  for one try without queueing
-- @arg life        the queue's lifetime in ms (the caller's remaining wait, plus slack)
-- @arg info        the record of who takes it (owner::record), or '' for none
-- @flag fair       in fair mode: a free lock goes to the waiters already queued
-- @flag again      on any try after the first, and on a settle: this waiter may be
--                  queued already, or hold the lock (handed over, or taken by a try whose
--                  reply was lost). A key found holding this token counts as this waiter's
--                  only then, and only once its entry has left the queue: a caller's token
--                  may be another holder's too, and taking a lock is never re-entry
-- @flag chosen     the token is the caller's choice: another holder may use it too,
--                  so a key found holding it counts as this waiter's only when the entry it
--                  sent as queued (no '+') has left the queue, which a grant to it does;
--                  otherwise (a settle after a lost reply, a fresh entry) it answers {4, pttl}
-- @flag fenced     issue a fencing token
-- @flag upgrade    this token holds a read share that it upgrades: the lock is taken
--                  once no other reader is left, and meanwhile the waiter queues first
--
-- Returns {1, fencing token} when the token holds the lock (now, or handed over
-- earlier; 0 when none was asked for), {0, pttl} busy and not queued,
-- {2, pttl, entry as queued, clock} busy and queued, {3, pttl} busy and the entry,
-- sent as queued, has left the queue (granted or passed over: it is not queued
-- again), {4, pttl} held by this token, a caller's, with nothing to show it is this
-- waiter's. pttl is the holder's remaining lease in ms (negative: no expiry); clock
-- is the server's clock in ms when the entry was stamped (absent for an entry sent
-- as queued: see stamp). A hold found held already gets its lease again, from now.
-- Running it twice with the same arguments is harmless, which is what settles a
-- lost reply: the caller asks for a fencing token only when every earlier run for
-- this token asked for one too (the counter then still holds this holder's number).
--
-- Each helper is included in the branch that uses it: the common cases (taken at
-- once, or busy and queued) define only stamp.
--@include lib/stamp
local entry, stamped = sent, nil
if entry ~= '' then entry, stamped = stamp(queue, entry, again) end
if fair and redis.call('exists', lock) == 0 and redis.call('lindex', queue, 0) ~= entry then
    -- Fair: hand a free lock to the first live waiter ahead of this one.
    --@include lib/grant
    hand_over(lock, queue, readers, fence, entry, nil)
end
local holder
if lease == '0' then
    holder = redis.call('set', lock, token, 'nx', 'get')
else
    holder = redis.call('set', lock, token, 'nx', 'px', lease, 'get')
end
local taken = not holder
local upgrading = upgrade and holder == ''
if upgrading then
    -- This token holds a read share: the lock is its once it is the only reader.
    local t = redis.call('time')
    redis.call('zremrangebyscore', readers, '-inf', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
    local share = redis.call('zscore', readers, token)
    upgrading = share ~= false
    if share and redis.call('zcard', readers) == 1 then
        redis.call('del', readers)
        if lease == '0' then redis.call('set', lock, token) else redis.call('set', lock, token, 'px', lease) end
        taken = true
    end
end
local queued = again and entry ~= '' and redis.call('lpos', queue, entry)
if not taken and holder == token and again and not queued and chosen
        and (entry == '' or string.byte(sent, 1) == 43) then
    -- A caller's token, and no entry of this waiter's that a grant took out: the hold
    -- may be another's with the same token. Never re-entry: not this waiter's.
    return {4, redis.call('pttl', lock)}
end
if taken or (holder == token and again and not queued) then
    if queued then redis.call('lrem', queue, 0, entry) end
    if taken and info ~= '' then
        --@include lib/own
        own(owner, token, info, lease)
    end
    -- Held already (handed over, or a retried call): the lease starts again now, as
    -- the caller counts it from this try (a grant read late must not outlive it).
    if not taken and lease ~= '0' then redis.call('pexpire', lock, lease) end
    if not fenced then return {1, 0} end
    -- Taken now: a new number. Held already: the counter still has this holder's
    -- number, since no one else took the key since.
    if taken then
        --@include lib/next_fence
        return {1, next_fence(fence)}
    end
    return {1, tonumber(redis.call('get', fence)) or 0}
end
-- An upgrading reader goes first: readers that come after it queue behind it, and
-- the last other reader's release hands it the lock.
local push = 'rpush'
if upgrading then push = 'lpush' end
--@include lib/enqueue
