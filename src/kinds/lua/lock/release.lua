-- release: gives up a Lock's write hold, or forces the lock free.
--
-- KEYS[1] the lock   KEYS[2] the queue   KEYS[3] the first waiter's patience
-- KEYS[4] the fencing counter   KEYS[5] the readers   KEYS[6] who holds and waits
-- ARGV[1] the holder's token, or '' for a forced release (no token is empty),
--         readers included
-- ARGV[2] '1': a short hold (see below)
-- ARGV[3] the patience in ms of the next waiter
--
-- Returns 1 when released, 2 when only freed while waiters are queued (a short
-- hold), 0 when the token did not hold it, -1 when readers hold it (a reader's
-- share is released by read_release).
--
-- Normally the lock goes straight to the head of the queue (hand_over: its first
-- writer that still listens, or the run of readers before the first writer), with
-- a fencing token if it asked for one, and the next waiter's patience starts. With
-- ARGV[2] = '1' (a short hold, not in fair mode) the lock is only freed, so that
-- the releaser or a newcomer may take it again at once, but only while the first
-- waiter's patience lasts; that waiter is told once when to look again, and no
-- release after that passes it over.
--
-- The common case, nobody waiting, comes first and defines nothing.
local holder = redis.call('get', KEYS[1])
if not holder then return 0 end
if holder ~= ARGV[1] and ARGV[1] ~= '' then
    -- In read mode the token may be a reader's: the caller asks read_release then.
    if holder == '' then return -1 end
    return 0
end
-- Forced, in read mode: every reader's share goes with it.
if holder == '' then redis.call('del', KEYS[5]) end
if redis.call('exists', KEYS[2]) == 0 then
    -- Nobody waits: no one else's record is left in KEYS[6] either.
    redis.call('del', KEYS[1], KEYS[6])
    return 1
end
local lock, queue, patience, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
redis.call('hdel', KEYS[6], holder)
if ARGV[2] == '1' then
    local p = redis.call('get', patience)
    if p then
        redis.call('del', lock)
        if p == '1' then
            --@include notify
            local left = redis.call('pttl', patience)
            while true do
                local head = redis.call('lindex', queue, 0)
                if not head then break end
                local answer = notify(head, left)
                if answer ~= 'no' then break end
                redis.call('lpop', queue)
            end
            redis.call('set', patience, '2', 'keepttl')
        end
        return 2
    end
end
--@include grant
if hand_over(lock, queue, KEYS[5], fence, nil) then
    redis.call('set', patience, '1', 'px', ARGV[3])
    return 1
end
redis.call('del', lock)
return 1
