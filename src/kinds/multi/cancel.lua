-- cancel: leaves the queue when a MultiLock's wait gives up.
--
-- @keys lock queue fence readers: in the MultiLock's order
-- @arg token       the token
-- @arg entry       its entry (as queued, or as sent)
-- @arg lease       the lease in ms ('0': none)
-- @arg modes       each key's mode, one letter a key ('w', or 'r': a read share)
-- @flag chosen     the token is the caller's choice: keys holding it are this
--                  waiter's only if its entry was known to be queued (sent as queued,
--                  no '+') and a grant took it out; otherwise they may be another
--                  holder's, and are left be
--
-- Returns {1, f1, ..., fn} when every key was granted to the token meanwhile (fi:
-- the counter of key i; each lease starts again from now, as the waiter counts it
-- from the cancel), {0} otherwise. Keys it holds only in part (a grant whose lease
-- ran out in part) are let go: no subset outlives the wait.
local rest = string.sub(entry, (string.find(entry, ':', 1, true) or 1))
local queued = false
for i = 1, n do
    for _, e in ipairs(redis.call('lrange', queue[i], 0, -1)) do
        local c = string.find(e, ':', 1, true)
        if e == entry or (c and string.sub(e, c) == rest) then
            redis.call('lrem', queue[i], 0, e)
            queued = true
        end
    end
end
--@include lib/readers
-- Whether the token holds key i (its lock, or a share of it).
local function holds(i)
    local v = redis.call('get', lock[i])
    if string.sub(modes, i, i) == 'r' then
        return v == '' and redis.call('zscore', readers[i], token) ~= false
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
if not queued and chosen and string.byte(entry, 1) == 43 then return {0} end
if queued or count < n then
    if not queued then
        -- A grant whose lease ran out in part: what is left goes.
        for i = 1, n do
            if held[i] and string.sub(modes, i, i) == 'r' then
                redis.call('zrem', readers[i], token)
                read_mode(lock[i], readers[i], now_ms())
            elseif held[i] then
                redis.call('del', lock[i])
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
        add_reader(readers[i], token, lease, now)
        read_mode(lock[i], readers[i], now)
    else
        if lease ~= '0' then redis.call('pexpire', lock[i], lease) end
        out[i + 1] = tonumber(redis.call('get', fence[i])) or 0
    end
end
return out
