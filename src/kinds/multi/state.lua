-- state: what a MultiLock's keys hold now, changing nothing (getTtl(), isOwned()).
--
-- @keys lock readers: in the MultiLock's order
-- @arg token       the token to compare, or ''
-- @arg modes       each key's mode, one letter a key ('w', or 'r': a read share)
-- @flag alone      answer mine alone (a Redlock node's part: the nodes' leases differ,
--                  and the quorum's answer is the one a majority gave)
--
-- Returns {mine, pttl1, ..., pttln}: mine is 1 when the token holds every key (a
-- share of each 'r' key), and each pttl is PTTL's answer for key i (-2 free, -1 no
-- expiry); {mine} when alone.
local out, mine = {0}, 1
for i = 1, n do
    local v = token ~= '' and redis.call('get', lock[i])
    if string.sub(modes, i, i) == 'r' then
        if v ~= '' or not redis.call('zscore', readers[i], token) then mine = 0 end
    elseif v ~= token then
        mine = 0
    end
    if not alone then out[i + 1] = redis.call('pttl', lock[i]) end
end
out[1] = mine
return out
