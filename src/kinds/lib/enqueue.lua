-- The end of an acquire script that found the lock busy, not a function: returns
-- {0, pttl} for one try (`entry` is ''), or queues `entry` (unless `queued`
-- already) with `push`, keeps the queue `life` ms, records the waiter's `info`
-- (in `owner`, for its wait and its lease) and returns {2, pttl, entry, clock} (the
-- entry as queued, and the server's clock when it was stamped: see stamp), or {3,
-- pttl} when the entry was sent as queued (`sent`, as the caller gave it) and has
-- left the queue. Expects the locals lock, queue, owner, entry,
-- sent, queued, again, push, life, token, lease, info and stamped.
local pttl = redis.call('pttl', lock)
if entry == '' then return {0, pttl} end
-- Sent as queued, and gone: granted or passed over. Never queued twice.
if not queued and again and string.byte(sent, 1) ~= 43 then return {3, pttl} end
if not queued then
    --@include lib/queue_entry
    queue_entry(queue, entry, push, life)
    if info ~= '' then
        --@include lib/own
        local ms = '0'
        if lease ~= '0' then ms = tostring(tonumber(life) + tonumber(lease)) end
        own(owner, token, info, ms)
    end
end
return {2, pttl, entry, stamped}
