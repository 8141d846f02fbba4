-- read_renew: sets a live read share's lease.
--
-- @key lock        the lock
-- @key readers     the readers
-- @key owner?      who holds it (absent: none kept)
-- @arg token       the token
-- @arg lease       the lease in ms ('0': none)
--
-- Keeps the record as long. Returns 1 when it did, 0 otherwise.
--@include lib/readers
if redis.call('get', lock) ~= '' then return 0 end
local now = now_ms()
local score = redis.call('zscore', readers, token)
if not score or (score ~= 'inf' and tonumber(score) <= now) then return 0 end
add_reader(readers, token, lease, now)
read_mode(lock, readers, now)
if owner then
    if lease == '0' then redis.call('persist', owner) else redis.call('pexpire', owner, lease, 'gt') end
end
return 1
