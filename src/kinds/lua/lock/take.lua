-- take: the first try of a Lock when it must do more than SET NX PX.
--
-- KEYS[1] the lock   KEYS[2] the fencing counter   KEYS[3] who holds it (owner_info)
-- ARGV[1] the token  ARGV[2] the lease in ms ('0': no expiry)
-- ARGV[3] '1': settle a lost reply of an earlier run; '2': the same with a token
--         the caller chose, which another holder may use too
-- ARGV[4] '0': no fencing token   ARGV[5] the record of who takes it (absent: none)
--
-- SET NX PX of the token, then, when taken, the record (KEYS[3]) and, unless
-- ARGV[4] is '0', the next fencing number. Returns the fencing token (1 without
-- one), 0 when the key is held, -1 when settling with a caller's token finds the key
-- holding it (this call's earlier run, or another holder of the same token: not
-- known which).
--
-- With ARGV[3] = '1' it settles a lost reply: a key found held by this token was
-- taken by that run, and the counter is then still this holder's number (no one
-- else has held the key since), and its lease starts again, since the caller counts
-- it from this run. Otherwise a key that holds the same token is busy like any
-- other: taking a lock is never re-entry.
--@include next_fence
local holder
if ARGV[2] == '0' then
    holder = redis.call('set', KEYS[1], ARGV[1], 'nx', 'get')
else
    holder = redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', ARGV[2], 'get')
end
if not holder then
    if ARGV[5] then
        local fresh = redis.call('exists', KEYS[3]) == 0
        redis.call('hset', KEYS[3], ARGV[1], ARGV[5])
        if fresh and ARGV[2] ~= '0' then
            redis.call('pexpire', KEYS[3], ARGV[2])
        elseif ARGV[2] == '0' then
            redis.call('persist', KEYS[3])
        else
            redis.call('pexpire', KEYS[3], ARGV[2], 'gt')
        end
    end
    if ARGV[4] ~= '0' then return next_fence(KEYS[2]) end
    return 1
end
if holder == ARGV[1] and ARGV[3] == '2' then return -1 end
if holder == ARGV[1] and ARGV[3] == '1' then
    -- Found held: the lease starts again now, as the caller counts it from this try.
    if ARGV[2] ~= '0' then redis.call('pexpire', KEYS[1], ARGV[2]) end
    if ARGV[4] == '0' then return 1 end
    return tonumber(redis.call('get', KEYS[2])) or next_fence(KEYS[2])
end
return 0
