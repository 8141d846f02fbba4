-- take: the first try of a Lock when it must do more than SET NX PX.
--
-- @key lock        the lock
-- @key fence       the fencing counter
-- @key owner?      who holds it (owner_info)
-- @arg token       the token
-- @arg lease       the lease in ms ('0': no expiry)
-- @flag again      settle a lost reply of an earlier run
-- @flag chosen     the token is the caller's choice: another holder may use it too
-- @flag fenced     issue a fencing token
-- @arg info?       the record of who takes it (absent: none)
--
-- SET NX PX of the token, then, when taken, the record (in owner) and, when fenced,
-- the next fencing number. Returns the fencing token (1 without one), 0 when the
-- key is held, -1 when settling with a caller's token finds the key holding it
-- (this call's earlier run, or another holder of the same token: not known which).
--
-- When it settles a lost reply (again, and not chosen), a key found held by this
-- token was taken by that run, and the counter is then still this holder's number
-- (no one else has held the key since), and its lease starts again, since the
-- caller counts it from this run. Otherwise a key that holds the same token is busy
-- like any other: taking a lock is never re-entry.
--@include lib/next_fence
local holder
if lease == '0' then
    holder = redis.call('set', lock, token, 'nx', 'get')
else
    holder = redis.call('set', lock, token, 'nx', 'px', lease, 'get')
end
if not holder then
    if info then
        local fresh = redis.call('exists', owner) == 0
        redis.call('hset', owner, token, info)
        if fresh and lease ~= '0' then
            redis.call('pexpire', owner, lease)
        elseif lease == '0' then
            redis.call('persist', owner)
        else
            redis.call('pexpire', owner, lease, 'gt')
        end
    end
    if fenced then return next_fence(fence) end
    return 1
end
if holder == token and again and chosen then return -1 end
if holder == token and again then
    -- Found held: the lease starts again now, as the caller counts it from this try.
    if lease ~= '0' then redis.call('pexpire', lock, lease) end
    if not fenced then return 1 end
    return tonumber(redis.call('get', fence)) or next_fence(fence)
end
return 0
