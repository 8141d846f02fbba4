-- cancel: leaves the queue when a wait for permits gives up.
--
-- @key sem         the semaphore's hash (see lib/permits)
-- @key queue       the queue
-- @key patience    the first waiter's patience
-- @key holders     the holders, scored by when their lease ends
-- @arg token       the token
-- @arg entry       the entry (as queued or as sent: see stamp)
-- @arg lease       the lease in ms ('0': none)
--
-- Returns 1 if permits were handed to the token meanwhile (their lease starting
-- again from now, as the waiter counts it), 0 otherwise.
--@include semaphore/lib/permits
--@include lib/stamp
if redis.call('lrem', queue, 0, (stamp(queue, entry, true))) ~= 0 then
    redis.call('hdel', sem, 'o:' .. token)
    return 0
end
if redis.call('zscore', holders, token) then
    -- Handed over meanwhile: its lease starts again now, as the waiter counts it.
    if lease == '0' then redis.call('zadd', holders, 'inf', token) else redis.call('zadd', holders, now + tonumber(lease), token) end
    keep()
    return 1
end
return 0
