-- tell(channel, message): publishes a message to a waiter's channel and answers
--   'yes'    a connection heard it;
--   'no'     nobody listens: the waiter is gone (its process died and Redis
--            closed its connection);
--   'denied' this user may not publish (an ACL): nothing is known of the waiter
--            then, so it stays queued and finds out by its own timer.
-- A sharded channel ("redis_lock:wake:{...": its 17th byte is '{') goes by
-- SPUBLISH, which stays in the slot's shard (see net::wake).
local function tell(ch, msg)
    local verb = 'publish'
    if string.byte(ch, 17) == 123 then verb = 'spublish' end
    local heard = redis.pcall(verb, ch, msg)
    if type(heard) ~= 'number' then return 'denied' end
    if heard == 0 then return 'no' end
    return 'yes'
end
