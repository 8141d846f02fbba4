-- hand_out(permits, fair, ms, held) gives free permits to the queued waiters that
-- fit, in queue order (the first 64), past a first waiter that does not fit only
-- when not `fair` and while its patience (`ms`) lasts; `held` is the permits held
-- now. Answers the permits held after (add writes them), or nil when nobody got
-- any. After permits.
--
-- The queue is read a page at a time, as many entries as there are free permits
-- (each takes one at least): one permit freed reads one entry, not 64.
--@include lib/entry
local function hand_out(permits, fair, ms, held)
    clock = now
    local given = nil
    local seen, kept = 0, 0
    while permits - held > 0 and seen < 64 do
        local want = math.min(permits - held, 64 - seen)
        -- Entries left queued (`kept`: passed while the head's patience lasts) come first.
        local page = redis.call('lrange', queue, kept, kept + want - 1)
        if #page == 0 then return given end
        for _, e in ipairs(page) do
            seen = seen + 1
            local free = permits - held
            if free <= 0 then return given end
            local u, lease, w, ch, t = split_entry(e)
            w = tonumber(w)
            if not u or u < now or not w then
                redis.call('lrem', queue, 1, e)
            elseif w <= free then
                local answer = tell(ch, granted(t))
                if answer == 'denied' then return given end
                redis.call('lrem', queue, 1, e)
                if answer == 'yes' then
                    held = add(t, w, lease, permits, fair and '1' or '0', held)
                    given = held
                end
            elseif fair or not patient(e, ms) then
                return given
            else
                kept = kept + 1
            end
        end
    end
    return given
end
