-- cancel: leaves the queue when a wait gives up.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key fence       the fencing counter
-- @key readers     the readers
-- @key owner       who holds and waits
-- @arg token       the waiter's token
-- @arg entry       its entry (as queued, or as sent: see stamp)
-- @arg lease       the lease in ms ('0': none)
-- @flag chosen     the token is the caller's choice (another holder may use it too)
--
-- Returns {1, fencing counter} if the lock was handed to this token meanwhile (the
-- counter then holds its number), {2, 0} if a read share was, {0, 0} otherwise. A
-- hold handed over gets its lease again from now, since the waiter counts it from
-- the cancel. A grant takes the entry out of the queue: a key that holds the token
-- while the entry is still queued is another holder's with the same chosen token;
-- so is one holding a caller's token whose entry was never known to be queued (sent
-- with '+'): nothing shows a grant took it.
--@include lib/stamp
if redis.call('lrem', queue, 0, (stamp(queue, entry, true))) ~= 0 then
    redis.call('hdel', owner, token)
    return {0, 0}
end
local holder = redis.call('get', lock)
if holder == token and chosen and string.byte(entry, 1) == 43 then return {0, 0} end
if holder == token then
    -- Handed over meanwhile: its lease starts again now, as the waiter counts it.
    if lease ~= '0' then redis.call('pexpire', lock, lease) end
    return {1, tonumber(redis.call('get', fence)) or 0}
end
if holder == '' and redis.call('zscore', readers, token) then
    --@include lib/readers
    local now = now_ms()
    add_reader(readers, token, lease, now)
    read_mode(lock, readers, now)
    return {2, 0}
end
return {0, 0}
