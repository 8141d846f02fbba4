-- multi/fence: the fencing tokens of a MultiLock's hold taken without them.
--
-- KEYS[2i-1] key i's lock   KEYS[2i] its fencing counter, for each key i
-- ARGV[1] the token
--
-- Returns {f1, ..., fn}, each a new number of its key's counter, when the token
-- holds every key, or {} (and no number taken) when it no longer does.
--@include next_fence
local n = #KEYS / 2
for i = 1, n do
    if redis.call('get', KEYS[2 * i - 1]) ~= ARGV[1] then return {} end
end
local out, t = {}, redis.call('time')
for i = 1, n do
    out[i] = next_fence(KEYS[2 * i], t)
end
return out
