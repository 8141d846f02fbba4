-- renew: sets a write hold's lease (extendLock(), the watchdog).
--
-- @key lock        the lock
-- @key owner?      who holds it (absent: no records kept)
-- @arg token       the token
-- @arg lease       the lease in ms ('0': no expiry)
--
-- Keeps the holder's record as long. Returns 1 when it did, 0 when the token no
-- longer holds the key.
if redis.call('get', lock) ~= token then return 0 end
if owner then
    if lease == '0' then redis.call('persist', owner) else redis.call('pexpire', owner, lease, 'gt') end
end
if lease == '0' then
    redis.call('persist', lock)
    return 1
end
return redis.call('pexpire', lock, lease)
