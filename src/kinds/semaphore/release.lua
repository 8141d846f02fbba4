-- release: gives up a hold's permits and hands the freed ones out, fairly if the
-- holders were taken in fair mode.
--
-- @key sem         the semaphore's hash (see lib/permits)
-- @key queue       the queue
-- @key patience    the first waiter's patience
-- @key holders     the holders, scored by when their lease ends
-- @arg token       the token
-- @arg wait        the first waiter's patience in ms
-- @flag alone      the hold was taken alone (see lib/permits): looked for as such first
--
-- Returns 1 when the hold was released with its lease still running, 0 when the
-- token held nothing (or its lease had ended).
--
-- A hold taken alone and still so is released by a look at its string: GET, DEL,
-- and EXISTS of the queue. Someone queued (before it was taken: a waiter queued
-- after it would have turned it into the hash) gets the freed permits below, in
-- this same step.
local freed = nil
if alone then
    local v = redis.pcall('get', holders)
    -- An error: the holders are a sorted set now, and the release is the usual one.
    if type(v) ~= 'table' then
        local p, t = nil, nil
        if v then p, t = string.match(v, '^(%d+):%d+:(.*)$') end
        if t ~= token then return 0 end
        redis.call('del', holders)
        if redis.call('exists', queue) == 0 then return 1 end
        freed = p
    end
end
--@include semaphore/lib/permits
--@include semaphore/lib/hand_out
-- One read for what the release needs (the hold's weight, the semaphore's terms and
-- the permits held, after the reclaim above), and ZREM as the test of a live hold.
-- The permits held are written once: by the grant that hands them on, or here. When
-- nobody holds any after it and nobody was handed any, both keys go at once (what
-- keep would find): the hold's own fields are not deleted first.
local w, count, fair, held = unpack(redis.call('hmget', sem, 'w:' .. token, 'permits', 'fair', 'used'))
held = tonumber(held) or 0
local live = 0
if freed then
    -- Released alone above, with waiters queued: nothing else is held.
    live, count, fair = 1, freed, '0'
elseif redis.call('zrem', holders, token) == 1 then
    live = 1
    held = held - (tonumber(w) or 0)
end
local given = count and hand_out(tonumber(count), fair == '1', wait, held)
if held == 0 and not given then
    redis.call('del', sem, holders)
    return live
end
if live == 1 then redis.call('hdel', sem, 'w:' .. token, 'o:' .. token) end
if live == 1 and not given then redis.call('hset', sem, 'used', held) end
keep()
return live
