-- renew: sets the lease of every key of a MultiLock, if the token holds every one
-- of them (extendLock(), the watchdog).
--
-- @keys lock readers: in the MultiLock's order
-- @arg token       the token
-- @arg lease       the lease in ms ('0': no expiry)
-- @arg modes       each key's mode, one letter a key ('w', or 'r': a read share,
--                  renewed in the readers)
--
-- Returns 1 when renewed, 0 (and nothing changed) when the token no longer holds
-- some key.
--@include lib/readers
local now = now_ms()
for i = 1, n do
    local v = redis.call('get', lock[i])
    if string.sub(modes, i, i) == 'r' then
        local score = v == '' and redis.call('zscore', readers[i], token)
        if not score or (score ~= 'inf' and tonumber(score) <= now) then return 0 end
    elseif v ~= token then
        return 0
    end
end
for i = 1, n do
    if string.sub(modes, i, i) == 'r' then
        add_reader(readers[i], token, lease, now)
        read_mode(lock[i], readers[i], now)
    elseif lease == '0' then
        redis.call('persist', lock[i])
    else
        redis.call('pexpire', lock[i], lease)
    end
end
return 1
