-- semaphore acquire: takes permits, or queues for them.
--
-- KEYS: see permits
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': none)
-- ARGV[3] the queue entry ('': one try)   ARGV[4] the queue's lifetime in ms
-- ARGV[5] '1' on any try after the first   ARGV[6] the number of permits
-- ARGV[7] the permits wanted   ARGV[8] '1' in fair mode
-- ARGV[9] the first waiter's patience in ms
-- ARGV[10] the record of who takes them (owner::record; '': none), kept as
--          'o:<token>' while it holds or waits
--
-- Returns {1, 0} when the token holds its permits (found held already: with its
-- lease again from now), {0, ms} busy and not queued, {3, ms} busy and the entry,
-- sent as queued, gone from the queue (see stamp), {2, ms, entry as queued, clock} queued
-- (ms: until the earliest lease ends, -1 if none does; clock: the server's clock in
-- ms when the entry was stamped, see stamp), {-1, stored} when the
-- holders agreed on another number of permits.
--@include permits
--@include stamp
local token, lease, entry = ARGV[1], ARGV[2], ARGV[3]
local again = ARGV[5] == '1'
local stamped = nil
if entry ~= '' then entry, stamped = stamp(queue, entry, again, t0) end
local permits, weight = tonumber(ARGV[6]), tonumber(ARGV[7])
local stored, held = unpack(redis.call('hmget', sem, 'permits', 'used'))
if stored and tonumber(stored) ~= permits and redis.call('zcard', holders) > 0 then return {-1, tonumber(stored)} end
local queued = again and entry ~= '' and redis.call('lpos', queue, entry)
-- Only a try after the first may find its token holding: tokens are never reused.
local holding = again and redis.call('zscore', holders, token)
-- Handed over while queued (the grant took the entry out), or a retried try: the
-- lease starts again now, as the caller counts it from this try.
if holding and not queued then
    if lease == '0' then redis.call('zadd', holders, 'inf', token) else redis.call('zadd', holders, now + tonumber(lease), token) end
    keep()
    return {1, 0}
end
if not holding and permits - (tonumber(held) or 0) >= weight then
    local head = redis.call('lindex', queue, 0)
    if not head or head == entry or (ARGV[8] ~= '1' and patient(head, ARGV[9])) then
        if queued then redis.call('lrem', queue, 0, entry) end
        add(token, weight, lease, permits, ARGV[8], tonumber(held) or 0)
        if ARGV[10] ~= '' then redis.call('hset', sem, 'o:' .. token, ARGV[10]) end
        keep()
        return {1, 0}
    end
end
first = first or redis.call('zrange', holders, 0, 0, 'withscores')
local ms = -1
if first[2] and first[2] ~= 'inf' then ms = math.max(0, math.ceil(tonumber(first[2]) - now)) end
if entry == '' then return {0, ms} end
-- Sent as queued, and gone: granted or passed over. Never queued twice.
if not queued and again and string.byte(ARGV[3], 1) ~= 43 then return {3, ms} end
if not queued then
    if ARGV[10] ~= '' and redis.call('exists', sem) == 1 then redis.call('hset', sem, 'o:' .. token, ARGV[10]) end
    -- A new queue gets its lifetime; a longer wait than any before extends it.
    if redis.call('rpush', queue, entry) == 1 then
        redis.call('pexpire', queue, ARGV[4])
    else
        redis.call('pexpire', queue, ARGV[4], 'gt')
    end
end
return {2, ms, entry, stamped}
