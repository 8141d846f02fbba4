-- hand_out(permits, fair, ms) gives free permits to the queued waiters that fit, in
-- queue order (the first 64), past a first waiter that does not fit only when not
-- `fair` and while its patience (`ms`) lasts. Answers whether anyone got some.
-- After permits.
--@include tell
local function hand_out(permits, fair, ms)
    local free = permits - used()
    local given = false
    for i, e in ipairs(redis.call('lrange', queue, 0, 63)) do
        if free <= 0 then break end
        local t, lease, w, ch = parse(e)
        if not t then
            redis.call('lrem', queue, 1, e)
        elseif w <= free then
            local answer = tell(ch, string.format('g@%.0f:', now) .. t)
            if answer == 'denied' then break end
            redis.call('lrem', queue, 1, e)
            if answer == 'yes' then
                add(t, w, lease, permits, fair and '1' or '0')
                free = free - w
                given = true
            end
        elseif fair or not patient(e, ms) then
            break
        end
    end
    return given
end
