-- live_waiters(queue): how many entries of the queue are still waited for (their
-- time is not up, see stamp) by a waiter still listening on their channel (PUBSUB
-- NUMSUB, SHARDNUMSUB for a sharded one; an entry whose listeners cannot be counted
-- counts). Every kind's entries have the shape of lib/entry.
--@include lib/entry
local function live_waiters(queue)
    local n = 0
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    for _, e in ipairs(redis.call('lrange', queue, 0, -1)) do
        local u, _, _, ch = split_entry(e)
        if u and u >= now then
            local verb = 'numsub'
            if string.byte(ch, 17) == 123 then verb = 'shardnumsub' end
            local heard = redis.pcall('pubsub', verb, ch)
            if type(heard) ~= 'table' or heard[2] ~= 0 then n = n + 1 end
        end
    end
    return n
end
