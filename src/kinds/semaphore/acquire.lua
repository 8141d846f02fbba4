-- acquire: takes permits, or queues for them.
--
-- @key sem         the semaphore's hash (see lib/permits)
-- @key queue       the queue
-- @key patience    the first waiter's patience
-- @key holders     the holders, scored by when their lease ends
-- @arg token       the token
-- @arg lease       the lease in ms ('0': none)
-- @arg sent        the queue entry ('': one try)
-- @arg life        the queue's lifetime in ms
-- @arg permits     the number of permits
-- @arg weight      the permits wanted
-- @arg wait        the first waiter's patience in ms
-- @arg info        the record of who takes them (owner::record; '': none), kept as
--                  'o:<token>' while it holds or waits
-- @flag again      on any try after the first
-- @flag fair       in fair mode
--
-- Returns {1, 0} when the token holds its permits (found held already: with its
-- lease again from now), {0, ms} busy and not queued, {3, ms} busy and the entry,
-- sent as queued, gone from the queue (see stamp), {2, ms, entry as queued, clock} queued
-- (ms: until the earliest lease ends, -1 if none does; clock: the server's clock in
-- ms when the entry was stamped, see stamp), {-1, stored} when the
-- holders agreed on another number of permits.
--@include semaphore/lib/permits
--@include lib/stamp
local entry, stamped = sent, nil
if entry ~= '' then entry, stamped = stamp(queue, entry, again, t0) end
local count, want = tonumber(permits), tonumber(weight)
local stored, held = unpack(redis.call('hmget', sem, 'permits', 'used'))
if stored and tonumber(stored) ~= count and redis.call('zcard', holders) > 0 then return {-1, tonumber(stored)} end
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
if not holding and count - (tonumber(held) or 0) >= want then
    local head = redis.call('lindex', queue, 0)
    if not head or head == entry or (not fair and patient(head, wait)) then
        if queued then redis.call('lrem', queue, 0, entry) end
        add(token, want, lease, count, fair and '1' or '0', tonumber(held) or 0)
        if info ~= '' then redis.call('hset', sem, 'o:' .. token, info) end
        -- Nobody held any before (the reclaim above counted): the only lease is this one.
        if (tonumber(held) or 0) == 0 then keep_alone(lease) else keep() end
        return {1, 0}
    end
end
first = first or redis.call('zrange', holders, 0, 0, 'withscores')
local ms = -1
if first[2] and first[2] ~= 'inf' then ms = math.max(0, math.ceil(tonumber(first[2]) - now)) end
if entry == '' then return {0, ms} end
-- Sent as queued, and gone: granted or passed over. Never queued twice.
if not queued and again and string.byte(sent, 1) ~= 43 then return {3, ms} end
if not queued then
    if info ~= '' and redis.call('exists', sem) == 1 then redis.call('hset', sem, 'o:' .. token, info) end
    --@include lib/queue_entry
    queue_entry(queue, entry, 'rpush', life)
end
return {2, ms, entry, stamped}
