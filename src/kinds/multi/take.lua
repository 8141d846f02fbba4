-- take: takes every key of a MultiLock, or none, with no queue (a Redlock node's
-- part: each node of the quorum runs it).
--
-- @keys lock: in the MultiLock's order
-- @arg token       the token
-- @arg lease       the lease in ms
--
-- Returns 1 when every key was free and is now the token's, 0 (and nothing
-- changed) when any key is held, by anyone.
for i = 1, n do
    if redis.call('exists', lock[i]) == 1 then return 0 end
end
for i = 1, n do
    redis.call('set', lock[i], token, 'px', lease)
end
return 1
