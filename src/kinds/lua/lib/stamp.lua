-- stamp(queue, entry, again, t): the entry as queued; `t` is a TIME reply the
-- script read already, or nil.
--
-- A waiter sends its entry as "+<ms>:<rest>": how long it still waits. Queued, the
-- entry is "<until>:<rest>", until when on this server's clock, and releases pass
-- over an entry whose time is up: its waiter may be cut off from the server and
-- unable to leave the queue (a partition), and must not be handed a lock it will
-- never use. Returns `entry` itself when it is queued already; with `again`, the
-- one in `queue` with the same rest (an earlier try queued it and its reply was
-- lost); otherwise a new one.
--
-- An entry sent as queued (no '+') that is no longer in the queue has left it: it
-- was granted, or passed over. It is never queued again: a queue entry grants at
-- most once (enqueue answers {3, pttl} then, and the waiter queues anew with '+').
local function stamp(queue, entry, again, t)
    if string.byte(entry, 1) ~= 43 then return entry end
    local colon = string.find(entry, ':', 1, true)
    local rest = string.sub(entry, colon)
    if again then
        for _, e in ipairs(redis.call('lrange', queue, 0, -1)) do
            local c = string.find(e, ':', 1, true)
            if c and string.sub(e, c) == rest then return e end
        end
    end
    t = t or redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    return string.format('%d', now + tonumber(string.sub(entry, 2, colon - 1))) .. rest
end
