-- multi/state: what a MultiLock's keys hold now, changing nothing (getTtl(),
-- isOwned()).
--
-- KEYS[2i-1] key i's lock   KEYS[2i] its readers, for each key i
-- ARGV[1] the token to compare, or ''   ARGV[2] '1': mine alone (a Redlock node's
-- part: the nodes' leases differ, and the quorum's answer is the one a majority
-- gave)   ARGV[3] each key's mode, one letter a key ('w', or 'r': a read share)
--
-- Returns {mine, pttl1, ..., pttln}: mine is 1 when ARGV[1] holds every key (a
-- share of each 'r' key), and each pttl is PTTL's answer for key i (-2 free, -1 no
-- expiry); {mine} with ARGV[2].
local out, mine, n = {0}, 1, #KEYS / 2
for i = 1, n do
    local v = ARGV[1] ~= '' and redis.call('get', KEYS[2 * i - 1])
    if string.sub(ARGV[3], i, i) == 'r' then
        if v ~= '' or not redis.call('zscore', KEYS[2 * i], ARGV[1]) then mine = 0 end
    elseif v ~= ARGV[1] then
        mine = 0
    end
    if ARGV[2] ~= '1' then out[i + 1] = redis.call('pttl', KEYS[2 * i - 1]) end
end
out[1] = mine
return out
