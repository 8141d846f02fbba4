-- multi/cancel: leaves the queue when a MultiLock's wait gives up.
--
-- KEYS[5i-4] key i's lock   KEYS[5i-3] its queue   KEYS[5i-2] its fencing counter
-- KEYS[5i-1] its readers   KEYS[5i] who holds it, for each key i
-- ARGV[1] the token   ARGV[2] its entry (as queued, or as sent)   ARGV[3] the lease
-- in ms ('0': none)   ARGV[4] each key's mode, one letter a key ('w', or 'r': a read
-- share)   ARGV[5] '1' when the token is the caller's choice: keys holding it are
-- this waiter's only if its entry was known to be queued (sent as queued, no '+')
-- and a grant took it out; otherwise they may be another holder's, and are left be
--
-- Returns {1, f1, ..., fn} when every key was granted to the token meanwhile (fi:
-- the counter of key i; each lease starts again from now, as the waiter counts it
-- from the cancel), {0} otherwise. Keys it holds only in part (a grant whose lease
-- ran out in part) are let go: no subset outlives the wait.
local n, token = #KEYS / 5, ARGV[1]
local rest = string.sub(ARGV[2], (string.find(ARGV[2], ':', 1, true) or 1))
local queued = false
for i = 1, n do
    for _, e in ipairs(redis.call('lrange', KEYS[5 * i - 3], 0, -1)) do
        local c = string.find(e, ':', 1, true)
        if e == ARGV[2] or (c and string.sub(e, c) == rest) then
            redis.call('lrem', KEYS[5 * i - 3], 0, e)
            queued = true
        end
    end
end
--@include readers
local modes = ARGV[4]
-- Whether the token holds key i (its lock, or a share of it).
local function holds(i)
    local v = redis.call('get', KEYS[5 * i - 4])
    if string.sub(modes, i, i) == 'r' then
        return v == '' and redis.call('zscore', KEYS[5 * i - 1], token) ~= false
    end
    return v == token
end
local held = {}
local count = 0
for i = 1, n do
    held[i] = holds(i)
    if held[i] then count = count + 1 end
end
-- A caller's token, and no entry known to be this waiter's: nothing here is known to be its own.
if not queued and ARGV[5] == '1' and string.byte(ARGV[2], 1) == 43 then return {0} end
if queued or count < n then
    if not queued then
        -- A grant whose lease ran out in part: what is left goes.
        for i = 1, n do
            if held[i] and string.sub(modes, i, i) == 'r' then
                redis.call('zrem', KEYS[5 * i - 1], token)
                read_mode(KEYS[5 * i - 4], KEYS[5 * i - 1], now_ms())
            elseif held[i] then
                redis.call('del', KEYS[5 * i - 4])
            end
        end
    end
    return {0}
end
local out = {1}
for i = 1, n do
    out[i + 1] = 0
    if string.sub(modes, i, i) == 'r' then
        local now = now_ms()
        add_reader(KEYS[5 * i - 1], token, ARGV[3], now)
        read_mode(KEYS[5 * i - 4], KEYS[5 * i - 1], now)
    else
        if ARGV[3] ~= '0' then redis.call('pexpire', KEYS[5 * i - 4], ARGV[3]) end
        out[i + 1] = tonumber(redis.call('get', KEYS[5 * i - 2])) or 0
    end
end
return out
