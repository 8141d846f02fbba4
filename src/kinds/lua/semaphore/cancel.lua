-- semaphore cancel: leaves the queue when a wait gives up.
--
-- KEYS: see permits
-- ARGV[1] the token   ARGV[2] the entry (as queued or as sent: see stamp)
-- ARGV[3] the lease in ms ('0': none)
--
-- Returns 1 if permits were handed to the token meanwhile (their lease starting
-- again from now, as the waiter counts it), 0 otherwise.
--@include permits
--@include stamp
if redis.call('lrem', queue, 0, (stamp(queue, ARGV[2], true))) ~= 0 then
    redis.call('hdel', sem, 'o:' .. ARGV[1])
    return 0
end
if redis.call('zscore', holders, ARGV[1]) then
    -- Handed over meanwhile: its lease starts again now, as the waiter counts it.
    if ARGV[3] == '0' then redis.call('zadd', holders, 'inf', ARGV[1]) else redis.call('zadd', holders, now + tonumber(ARGV[3]), ARGV[1]) end
    keep()
    return 1
end
return 0
