-- multi/state: what a MultiLock's keys hold now, changing nothing (getTtl(),
-- isOwned()).
--
-- KEYS[i] key i's lock, for each key i
-- ARGV[1] the token to compare, or ''   ARGV[2] '1': mine alone (a Redlock node's
-- part: the nodes' leases differ, and the quorum's answer is the one a majority gave)
--
-- Returns {mine, pttl1, ..., pttln}: mine is 1 when ARGV[1] holds every key, and
-- each pttl is PTTL's answer for key i (-2 free, -1 no expiry); {mine} with ARGV[2].
local out, mine = {0}, 1
for i = 1, #KEYS do
    if ARGV[1] == '' or redis.call('get', KEYS[i]) ~= ARGV[1] then mine = 0 end
    if ARGV[2] ~= '1' then out[i + 1] = redis.call('pttl', KEYS[i]) end
end
out[1] = mine
return out
