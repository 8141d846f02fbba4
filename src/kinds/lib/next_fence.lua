-- next_fence(counter, t): the next fencing token of the counter key: one more than
-- the last, and at least the server's clock in µs, so that a counter lost with the
-- data (a restart without persistence, a failover to a replica that missed it)
-- starts again above every number issued before, as long as the clocks do not go
-- back. `t` is a TIME reply the caller read already in this script, or nil: the
-- floor may lag the clock by the script's few µs, and a second TIME would cost a
-- call on the contended path.
local function next_fence(counter, t)
    local n = redis.call('incr', counter)
    t = t or redis.call('time')
    local floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
    if n < floor then
        redis.call('set', counter, string.format('%.0f', floor))
        n = floor
    end
    return n
end
