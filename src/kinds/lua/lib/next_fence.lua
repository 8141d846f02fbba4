-- next_fence(counter): the next fencing token of the counter key: one more than the
-- last, and at least the server's clock in µs, so that a counter lost with the data
-- (a restart without persistence, a failover to a replica that missed it) starts
-- again above every number issued before, as long as the clocks do not go back.
local function next_fence(counter)
    local n = redis.call('incr', counter)
    local t = redis.call('time')
    local floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
    if n < floor then
        redis.call('set', counter, string.format('%.0f', floor))
        n = floor
    end
    return n
end
