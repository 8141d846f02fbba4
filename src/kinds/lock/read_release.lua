-- read_release: gives up a read share. The last reader out hands the lock over;
-- when one reader is left and it waits first in line to upgrade, it gets the write
-- lock.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key fence       the fencing counter
-- @key readers     the readers
-- @key owner       who holds and waits
-- @arg token       the token
--
-- Returns 1 when the share was released with its lease still running, 0 when the
-- token held no share (or its lease had run out).
--@include lib/grant
if redis.call('get', lock) ~= '' then return 0 end
local now = now_ms()
local score = redis.call('zscore', readers, token)
if not score then return 0 end
redis.call('zrem', readers, token)
redis.call('hdel', owner, token)
local live = 0
if score == 'inf' or tonumber(score) > now then live = 1 end
redis.call('zremrangebyscore', readers, '-inf', now)
local left = redis.call('zcard', readers)
if left == 1 then
    local head = redis.call('lindex', queue, 0)
    local t, lease, f = nil, nil, nil
    if head then t, lease, f = parse(head) end
    if t and f ~= 'r' and redis.call('zscore', readers, t) then
        local answer = grant(lock, fence, head)
        if answer ~= 'denied' then redis.call('lpop', queue) end
        if answer == 'yes' then
            redis.call('del', readers)
            return live
        end
    end
end
if read_mode(lock, readers, now) then return live end
hand_over(lock, queue, readers, fence, nil, nil)
return live
