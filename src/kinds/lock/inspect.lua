-- inspect: what Lock::inspect() shows, read in one step, changing nothing.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key fence       the fencing counter
-- @key readers     the readers
-- @key owner       who holds and waits (records)
-- @arg token       the inspecting object's token, or ''
--
-- Returns {state, pttl, readers, waiters, fence, mine, records}: state 'free',
-- 'write' or 'read'; pttl in ms (-2: free, -1: no expiry); the live readers; the
-- queue entries whose waiter still listens (live_waiters); the fencing counter (''
-- if none); 1 when the token holds it; one record per holder ('' where none was
-- kept).
--@include lib/live_waiters
local t0 = redis.call('time')
local now = tonumber(t0[1]) * 1000 + math.floor(tonumber(t0[2]) / 1000)
local holder = redis.call('get', lock)
local state, pttl, count, mine, records = 'free', -2, 0, 0, {}
if holder then
    pttl = redis.call('pttl', lock)
    local holders = {holder}
    state = 'write'
    if holder == '' then
        state = 'read'
        holders = redis.call('zrangebyscore', readers, '(' .. now, '+inf')
        count = #holders
    end
    for _, t in ipairs(holders) do
        if token ~= '' and t == token then mine = 1 end
        records[#records + 1] = redis.call('hget', owner, t) or ''
    end
end
return {state, pttl, count, live_waiters(queue), redis.call('get', fence) or '', mine, records}
