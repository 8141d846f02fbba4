-- renew: sets a write hold's lease (extendLock(), the watchdog).
--
-- KEYS[1] the lock   KEYS[2] who holds it (absent: no records kept)
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': no expiry)
--
-- Keeps the holder's record as long. Returns 1 when it did, 0 when the token no
-- longer holds the key.
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
if KEYS[2] then
    if ARGV[2] == '0' then redis.call('persist', KEYS[2]) else redis.call('pexpire', KEYS[2], ARGV[2], 'gt') end
end
if ARGV[2] == '0' then
    redis.call('persist', KEYS[1])
    return 1
end
return redis.call('pexpire', KEYS[1], ARGV[2])
