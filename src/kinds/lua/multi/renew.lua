-- multi/renew: sets the lease of every key of a MultiLock, if the token holds every
-- one of them (extendLock()).
--
-- KEYS[2i-1] key i's lock   KEYS[2i] its readers, for each key i
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': no expiry)   ARGV[3] each key's
-- mode, one letter a key ('w', or 'r': a read share, renewed in the readers)
--
-- Returns 1 when renewed, 0 (and nothing changed) when the token no longer holds
-- some key.
--@include readers
local n, token, modes = #KEYS / 2, ARGV[1], ARGV[3]
local now = now_ms()
for i = 1, n do
    local v = redis.call('get', KEYS[2 * i - 1])
    if string.sub(modes, i, i) == 'r' then
        local score = v == '' and redis.call('zscore', KEYS[2 * i], token)
        if not score or (score ~= 'inf' and tonumber(score) <= now) then return 0 end
    elseif v ~= token then
        return 0
    end
end
for i = 1, n do
    if string.sub(modes, i, i) == 'r' then
        add_reader(KEYS[2 * i], token, ARGV[2], now)
        read_mode(KEYS[2 * i - 1], KEYS[2 * i], now)
    elseif ARGV[2] == '0' then
        redis.call('persist', KEYS[2 * i - 1])
    else
        redis.call('pexpire', KEYS[2 * i - 1], ARGV[2])
    end
end
return 1
