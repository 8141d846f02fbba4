-- fence: the fencing tokens of a MultiLock's hold taken without them.
--
-- @keys lock fence: of each key taken alone (a read share has no number)
-- @arg token       the token
--
-- Returns {f1, ..., fn}, each a new number of its key's counter, when the token
-- holds every key, or {} (and no number taken) when it no longer does.
--@include lib/next_fence
for i = 1, n do
    if redis.call('get', lock[i]) ~= token then return {} end
end
local out, t = {}, redis.call('time')
for i = 1, n do
    out[i] = next_fence(fence[i], t)
end
return out
