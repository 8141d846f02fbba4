-- acquire: takes every key of a MultiLock for one token, or none of them, or
-- queues for them.
--
-- @keys lock queue fence readers owner: in the MultiLock's order (owner: who holds
--                  it, with owner_info; readers: a read key's shares)
-- @arg token       the token
-- @arg lease       the lease in ms ('0': no expiry)
-- @arg sent        this waiter's "m" entry ("+<ms>:..." until queued, see stamp), or ''
--                  for one try without queueing
-- @arg life        the queue's lifetime in ms
-- @arg info        the record of who takes it (owner::record), or '' for none
-- @arg modes       each key's mode, one letter a key: 'w' taken alone, 'r' a read share
--                  (beside other readers, and behind any waiter queued for the key)
-- @flag fair       in fair mode: a free key whose queue has someone else first counts
--                  as busy
-- @flag again      on any try after the first: this waiter may be queued already, or
--                  hold every key (a grant, or a try whose reply was lost). Keys found
--                  holding this token count as its own only then, and only once its
--                  entry has left every queue: a caller's token may be another holder's
--                  too
-- @flag fenced     issue fencing tokens
-- @flag chosen     the token is the caller's choice: keys found holding it count as
--                  this waiter's only when the entry it sent as queued (no '+') has left
--                  every queue, which a grant to it does; otherwise {4, pttl}
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
local entry = sent
local sent_queued = entry ~= '' and string.byte(entry, 1) ~= 43
-- Where this waiter's entry is queued, if anywhere.
local at = nil
if again and entry ~= '' then
    if sent_queued then
        for i = 1, n do
            if redis.call('lpos', queue[i], entry) then
                at = i
                break
            end
        end
    else
        -- Sent with '+': an earlier try whose reply was lost may have queued it.
        local rest = string.sub(entry, string.find(entry, ':', 1, true))
        for i = 1, n do
            for _, e in ipairs(redis.call('lrange', queue[i], 0, -1)) do
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
--@include lib/readers
local now = nil
local busy, held = nil, {}
for i = 1, n do
    local v = redis.call('get', lock[i])
    if string.sub(modes, i, i) == 'r' then
        if v == '' then
            now = now or now_ms()
            redis.call('zremrangebyscore', readers[i], '-inf', now)
        end
        if (v == '' or not v) and again and not at and redis.call('zscore', readers[i], token) then
            held[i] = true
        elseif v and v ~= '' then
            busy = busy or i
        elseif not busy then
            -- A reader goes behind anyone queued for the key (a writer is not starved).
            local head = redis.call('lindex', queue[i], 0)
            if head and head ~= entry then busy = i end
        end
    elseif v == token and again and not at then
        held[i] = true
    elseif v then
        -- Another holder (a writer, readers, or another holder with the same token).
        busy = busy or i
    elseif fair and not busy then
        local head = redis.call('lindex', queue[i], 0)
        if head and head ~= entry then busy = i end
    end
end
-- A caller's token found on a key, and no entry of this waiter's that a grant took
-- out: the keys may be another holder's with the same token. Never re-entry.
if next(held) and chosen and (entry == '' or not sent_queued) then
    return {4, redis.call('pttl', lock[next(held)])}
end
if not busy then
    if at then redis.call('lrem', queue[at], 0, entry) end
    local out, t = {1}, nil
    --@include lib/next_fence
    --@include lib/own
    for i = 1, n do
        out[i + 1] = 0
        if string.sub(modes, i, i) == 'r' then
            -- A share, new or held already: its lease starts now.
            now = now or now_ms()
            add_reader(readers[i], token, lease, now)
            read_mode(lock[i], readers[i], now)
        else
            if held[i] then
                -- Held already (granted): the lease starts again now, as the caller counts it.
                if lease ~= '0' then redis.call('pexpire', lock[i], lease) end
            elseif lease == '0' then
                redis.call('set', lock[i], token)
            else
                redis.call('set', lock[i], token, 'px', lease)
            end
            if fenced then
                if held[i] then
                    out[i + 1] = tonumber(redis.call('get', fence[i])) or 0
                else
                    t = t or redis.call('time')
                    out[i + 1] = next_fence(fence[i], t)
                end
            end
        end
        own(owner[i], token, info, lease)
    end
    return out
end
-- Some keys hold this token and others are taken: a grant whose lease ran out in
-- part. What is left goes, so that no subset stays held.
for i = 1, n do
    if held[i] and string.sub(modes, i, i) == 'r' then
        redis.call('zrem', readers[i], token)
        read_mode(lock[i], readers[i], now or now_ms())
    elseif held[i] then
        redis.call('del', lock[i])
    end
end
local pttl = redis.call('pttl', lock[busy])
if entry == '' then return {0, pttl} end
if sent_queued and not at then return {3, pttl} end
local into, push = queue[busy], 'rpush'
if at and at ~= busy then
    -- Queued behind a key that is free now: it waits where it is busy, first in line.
    redis.call('lrem', queue[at], 0, entry)
    at, push = nil, 'lpush'
end
local stamped = nil
if not at then
    -- Sent with '+': queued with its time on the server's clock (an entry sent as
    -- queued keeps its own).
    --@include lib/stamp
    entry, stamped = stamp(into, entry, false)
    -- Its cap has passed: its waiter's deadline has too.
    if entry == '' then return {0, pttl} end
    --@include lib/queue_entry
    queue_entry(into, entry, push, life)
end
return {2, pttl, entry, stamped}
