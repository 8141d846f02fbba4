-- inspect: what Semaphore::inspect() shows, read in one step, changing nothing
-- (holds whose lease has ended are left out, not reclaimed).
--
-- @key sem         the semaphore's hash (see lib/permits)
-- @key queue       the queue
-- @key holders     the holders, scored by when their lease ends (or a hold taken
--                  alone: see lib/permits)
--
-- Returns {permits, used, waiters, holders}: the number the live holders agreed on
-- (-1 when none holds), the permits they hold, the queue entries whose waiter still
-- listens, and one {weight, ms left (-1: no expiry), record ('': none kept)} per
-- live holder.
--@include lib/live_waiters
local t0 = redis.call('time')
local now = tonumber(t0[1]) * 1000 + math.floor(tonumber(t0[2]) / 1000)
local list, used = {}, 0
local live = redis.pcall('zrangebyscore', holders, '(' .. now, '+inf', 'withscores')
if live.err then
    -- A hold taken alone (see lib/permits): its string, read as it is.
    local v = redis.call('get', holders)
    local p, w = string.match(v, '^(%d+):(%d+):')
    if not p then return live end
    local ms = redis.call('pttl', holders)
    if ms < 0 then ms = -1 end
    return {tonumber(p), tonumber(w), live_waiters(queue), {{tonumber(w), ms, ''}}}
end
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
return {stored, used, live_waiters(queue), list}
