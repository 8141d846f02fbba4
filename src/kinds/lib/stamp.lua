-- stamp(queue, entry, again, t): the entry as queued, and this server's clock (ms)
-- when the entry's time was set (nil for an entry sent as queued); `t` is a TIME
-- reply the script read already, or nil.
--
-- A waiter sends its entry as "+<ms>:<rest>" or "+<ms>~<cap>:<rest>": how long it
-- still waits and, when it knows a lower bound of this server's clock, until when
-- at the latest on this server's clock (the cap: see waiting::wait_for). Queued, the
-- entry is "<until>:<rest>", until = now + ms, or the cap if earlier: a try that
-- reached the server late (a slow or partitioned link) does not wait past its
-- waiter's deadline. Releases pass over an entry whose time is up: its waiter may be
-- cut off from the server and unable to leave the queue (a partition), and must not
-- be handed a lock it will never use. An entry whose cap has passed is not queued:
-- stamp returns '' then. The clock is returned so that the waiter can bound, on its
-- own clock, when a lease granted later ends (waiting::grant_bound).
--
-- Returns `entry` itself when it is queued already; with `again`, the one in `queue`
-- with the same rest (an earlier try queued it and its reply was lost); otherwise a
-- new one.
--
-- An entry sent as queued (no '+') that is no longer in the queue has left it: it
-- was granted, or passed over. It is never queued again: a queue entry grants at
-- most once (enqueue answers {3, pttl} then, and the waiter queues anew with '+').
local function stamp(queue, entry, again, t)
    if string.byte(entry, 1) ~= 43 then return entry, nil end
    local colon = string.find(entry, ':', 1, true)
    local ms, cap = string.match(string.sub(entry, 2, colon - 1), '^(%d+)~?(%d*)$')
    local rest = string.sub(entry, colon)
    t = t or redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if again then
        for _, e in ipairs(redis.call('lrange', queue, 0, -1)) do
            local c = string.find(e, ':', 1, true)
            if c and string.sub(e, c) == rest then return e, now end
        end
    end
    local u = now + tonumber(ms)
    if cap ~= '' and tonumber(cap) < u then u = tonumber(cap) end
    if u < now then return '', now end
    return string.format('%d', u) .. rest, now
end
