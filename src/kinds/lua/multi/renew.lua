-- multi/renew: sets the lease of every key of a MultiLock, if the token holds every
-- one of them (extendLock()).
--
-- KEYS[i] key i's lock, for each key i
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': no expiry)
--
-- Returns 1 when renewed, 0 (and nothing changed) when the token no longer holds
-- some key.
for i = 1, #KEYS do
    if redis.call('get', KEYS[i]) ~= ARGV[1] then return 0 end
end
for i = 1, #KEYS do
    if ARGV[2] == '0' then
        redis.call('persist', KEYS[i])
    else
        redis.call('pexpire', KEYS[i], ARGV[2])
    end
end
return 1
