-- multi/take: takes every key of a MultiLock, or none, with no queue (a Redlock
-- node's part: each node of the quorum runs it).
--
-- KEYS[i] key i's lock, for each key i
-- ARGV[1] the token   ARGV[2] the lease in ms
--
-- Returns 1 when every key was free and is now the token's, 0 (and nothing
-- changed) when any key is held, by anyone.
for i = 1, #KEYS do
    if redis.call('exists', KEYS[i]) == 1 then return 0 end
end
for i = 1, #KEYS do
    redis.call('set', KEYS[i], ARGV[1], 'px', ARGV[2])
end
return 1
