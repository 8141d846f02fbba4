-- queue_entry(queue, entry, push, life): puts `entry` at the tail of `queue` (push
-- 'rpush'), or at its head ('lpush'), and keeps the queue at least `life` ms more: a
-- new queue gets its lifetime, a longer wait than any before extends it. One
-- command per line: an error names its line (see Script::explain).
local function queue_entry(queue, entry, push, life)
    local n
    if push == 'lpush' then
        n = redis.call('lpush', queue, entry)
    else
        n = redis.call('rpush', queue, entry)
    end
    if n == 1 then
        redis.call('pexpire', queue, life)
    else
        redis.call('pexpire', queue, life, 'gt')
    end
end
