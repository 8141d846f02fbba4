-- multi/acquire: takes every key of a MultiLock for one token, or none of them, or
-- queues for them.
--
-- KEYS[5i-4] key i's lock   KEYS[5i-3] its queue   KEYS[5i-2] its fencing counter
-- KEYS[5i-1] its readers (a read key's shares)   KEYS[5i] who holds it (owner_info),
-- for each key i in the MultiLock's order
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': no expiry)
-- ARGV[3] this waiter's "m" entry ("+<ms>:..." until queued, see stamp), or '' for
--         one try without queueing
-- ARGV[4] the queue's lifetime in ms   ARGV[5] '1' in fair mode: a free key whose
--         queue has someone else first counts as busy
-- ARGV[6] '1' on any try after the first: this waiter may be queued already, or
--         hold every key (a grant, or a try whose reply was lost). Keys found holding
--         this token count as its own only then, and only once its entry has left
--         every queue: a caller's token may be another holder's too
-- ARGV[7] '1' to issue fencing tokens
-- ARGV[8] the record of who takes it (owner::record), or '' for none
-- ARGV[9] each key's mode, one letter a key: 'w' taken alone, 'r' a read share
--         (beside other readers, and behind any waiter queued for the key)
-- ARGV[10] '1' when the token is the caller's choice: keys found holding it count as
--         this waiter's only when the entry it sent as queued (no '+') has left
--         every queue, which a grant to it does; otherwise {4, pttl}
--
-- Returns {1, f1, ..., fn} when the token holds every key (fi: key i's fencing
-- token; 0 when none was asked for, and for a read share), {0, pttl} busy and not
-- queued, {2, pttl, entry as queued, clock} busy and queued, {3, pttl} busy and
-- the entry, sent as queued, has left every queue (it is not queued again), {4, pttl}
-- some key holds this token, a caller's, with nothing to show it is this waiter's
-- (as a Lock's acquire: a settle after a lost reply, a fresh entry). pttl is
-- that of the first busy key; clock the server's clock in ms when the entry was
-- stamped (absent for an entry sent as queued: see stamp).
--
-- All or none: no other client ever sees some of the keys taken by this script and
-- not the others. The entry waits in one queue at a time, the first busy key's
-- (a release there hands over through grant_multi); found in a queue whose key is
-- free now, it moves to the front of the first busy key's queue. Every MultiLock
-- orders its keys the same way, so that two never wait on each other in a circle.
local n = #KEYS / 5
local token, lease, entry, again = ARGV[1], ARGV[2], ARGV[3], ARGV[6] == '1'
local sent_queued = entry ~= '' and string.byte(entry, 1) ~= 43
-- Where this waiter's entry is queued, if anywhere.
local at = nil
if again and entry ~= '' then
    if sent_queued then
        for i = 1, n do
            if redis.call('lpos', KEYS[5 * i - 3], entry) then
                at = i
                break
            end
        end
    else
        -- Sent with '+': an earlier try whose reply was lost may have queued it.
        local rest = string.sub(entry, string.find(entry, ':', 1, true))
        for i = 1, n do
            for _, e in ipairs(redis.call('lrange', KEYS[5 * i - 3], 0, -1)) do
                local c = string.find(e, ':', 1, true)
                if c and string.sub(e, c) == rest then
                    entry, at = e, i
                    break
                end
            end
            if at then break end
        end
    end
end
local modes = ARGV[9]
--@include readers
local now = nil
local busy, held = nil, {}
for i = 1, n do
    local lock, queue, readers = KEYS[5 * i - 4], KEYS[5 * i - 3], KEYS[5 * i - 1]
    local v = redis.call('get', lock)
    if string.sub(modes, i, i) == 'r' then
        if v == '' then
            now = now or now_ms()
            redis.call('zremrangebyscore', readers, '-inf', now)
        end
        if (v == '' or not v) and again and not at and redis.call('zscore', readers, token) then
            held[i] = true
        elseif v and v ~= '' then
            busy = busy or i
        elseif not busy then
            -- A reader goes behind anyone queued for the key (a writer is not starved).
            local head = redis.call('lindex', queue, 0)
            if head and head ~= entry then busy = i end
        end
    elseif v == token and again and not at then
        held[i] = true
    elseif v then
        -- Another holder (a writer, readers, or another holder with the same token).
        busy = busy or i
    elseif ARGV[5] == '1' and not busy then
        local head = redis.call('lindex', queue, 0)
        if head and head ~= entry then busy = i end
    end
end
-- A caller's token found on a key, and no entry of this waiter's that a grant took
-- out: the keys may be another holder's with the same token. Never re-entry.
if next(held) and ARGV[10] == '1' and (entry == '' or not sent_queued) then
    return {4, redis.call('pttl', KEYS[5 * (next(held)) - 4])}
end
if not busy then
    if at then redis.call('lrem', KEYS[5 * at - 3], 0, entry) end
    local out, t = {1}, nil
    --@include next_fence
    --@include own
    for i = 1, n do
        local lock = KEYS[5 * i - 4]
        out[i + 1] = 0
        if string.sub(modes, i, i) == 'r' then
            -- A share, new or held already: its lease starts now.
            now = now or now_ms()
            add_reader(KEYS[5 * i - 1], token, lease, now)
            read_mode(lock, KEYS[5 * i - 1], now)
        else
            if held[i] then
                -- Held already (granted): the lease starts again now, as the caller counts it.
                if lease ~= '0' then redis.call('pexpire', lock, lease) end
            elseif lease == '0' then
                redis.call('set', lock, token)
            else
                redis.call('set', lock, token, 'px', lease)
            end
            if ARGV[7] == '1' then
                if held[i] then
                    out[i + 1] = tonumber(redis.call('get', KEYS[5 * i - 2])) or 0
                else
                    t = t or redis.call('time')
                    out[i + 1] = next_fence(KEYS[5 * i - 2], t)
                end
            end
        end
        own(KEYS[5 * i], token, ARGV[8], lease)
    end
    return out
end
-- Some keys hold this token and others are taken: a grant whose lease ran out in
-- part. What is left goes, so that no subset stays held.
for i = 1, n do
    if held[i] and string.sub(modes, i, i) == 'r' then
        redis.call('zrem', KEYS[5 * i - 1], token)
        read_mode(KEYS[5 * i - 4], KEYS[5 * i - 1], now or now_ms())
    elseif held[i] then
        redis.call('del', KEYS[5 * i - 4])
    end
end
local pttl = redis.call('pttl', KEYS[5 * busy - 4])
if entry == '' then return {0, pttl} end
if sent_queued and not at then return {3, pttl} end
local queue, push = KEYS[5 * busy - 3], 'rpush'
if at and at ~= busy then
    -- Queued behind a key that is free now: it waits where it is busy, first in line.
    redis.call('lrem', KEYS[5 * at - 3], 0, entry)
    at, push = nil, 'lpush'
end
local stamped = nil
if not at then
    -- Sent with '+': queued with its time on the server's clock (an entry sent as
    -- queued keeps its own).
    --@include stamp
    entry, stamped = stamp(queue, entry, false)
    -- Its cap has passed: its waiter's deadline has too.
    if entry == '' then return {0, pttl} end
    local len
    if push == 'lpush' then
        len = redis.call('lpush', queue, entry)
    else
        len = redis.call('rpush', queue, entry)
    end
    if len == 1 then
        redis.call('pexpire', queue, ARGV[4])
    else
        redis.call('pexpire', queue, ARGV[4], 'gt')
    end
end
return {2, pttl, entry, stamped}
