-- Who holds what (owner_info): a hash maps a holder's (or a queued waiter's) token
-- to its record. own(owner, t, info, ms) records `info` ('': nothing to record)
-- and keeps the hash at least `ms` more ms ('0': no expiry, never shortened);
-- keep_owner(owner, ms) only keeps it. A grant records nothing: the waiter
-- recorded itself when it queued.
local function keep_owner(owner, ms)
    if ms == '0' then redis.call('persist', owner) else redis.call('pexpire', owner, ms, 'gt') end
end
local function own(owner, t, info, ms)
    if info == '' then return end
    local fresh = redis.call('exists', owner) == 0
    redis.call('hset', owner, t, info)
    if fresh and ms ~= '0' then redis.call('pexpire', owner, ms) else keep_owner(owner, ms) end
end
