-- cancel: leaves the queue when a wait gives up.
--
-- KEYS[1] the lock   KEYS[2] the queue   KEYS[3] the fencing counter
-- KEYS[4] the readers   KEYS[5] who holds and waits
-- ARGV[1] the waiter's token   ARGV[2] its entry (as queued, or as sent: see stamp)
-- ARGV[3] the lease in ms ('0': none)   ARGV[4] '1' when the token is the caller's
-- choice (another holder may use it too)
--
-- Returns {1, fencing counter} if the lock was handed to this token meanwhile (the
-- counter then holds its number), {2, 0} if a read share was, {0, 0} otherwise. A
-- hold handed over gets its lease again from now, since the waiter counts it from
-- the cancel. A grant takes the entry out of the queue: a key that holds the token
-- while the entry is still queued is another holder's with the same chosen token;
-- so is one holding a caller's token whose entry was never known to be queued (sent
-- with '+'): nothing shows a grant took it.
--@include stamp
if redis.call('lrem', KEYS[2], 0, (stamp(KEYS[2], ARGV[2], true))) ~= 0 then
    redis.call('hdel', KEYS[5], ARGV[1])
    return {0, 0}
end
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] and ARGV[4] == '1' and string.byte(ARGV[2], 1) == 43 then return {0, 0} end
if holder == ARGV[1] then
    -- Handed over meanwhile: its lease starts again now, as the waiter counts it.
    if ARGV[3] ~= '0' then redis.call('pexpire', KEYS[1], ARGV[3]) end
    return {1, tonumber(redis.call('get', KEYS[3])) or 0}
end
if holder == '' and redis.call('zscore', KEYS[4], ARGV[1]) then
    --@include readers
    local now = now_ms()
    add_reader(KEYS[4], ARGV[1], ARGV[3], now)
    read_mode(KEYS[1], KEYS[4], now)
    return {2, 0}
end
return {0, 0}
