-- release: gives up every key a MultiLock's token holds, each handed to the head of
-- its queue as a Lock's release would (grant's hand_over).
--
-- @keys lock queue fence readers owner: in the MultiLock's order
-- @arg token       the token
-- @arg modes       each key's mode, one letter a key ('w' or 'r': a read share, given
--                  up as read_release does: the last reader out hands the lock over)
--
-- Returns how many of the keys the token held (and no longer does).
--@include lib/grant
local released = 0
-- First every key is let go, then each is handed over: a MultiLock waiting for
-- several of these keys finds them all free at its turn, and gets them at once.
local freed = {}
for i = 1, n do
    local v = redis.call('get', lock[i])
    if string.sub(modes, i, i) == 'r' then
        if v == '' and redis.call('zrem', readers[i], token) == 1 then
            released = released + 1
            redis.call('hdel', owner[i], token)
            -- The last reader out frees the lock.
            freed[i] = not read_mode(lock[i], readers[i], now_ms())
        end
    elseif v == token then
        released = released + 1
        redis.call('hdel', owner[i], token)
        redis.call('del', lock[i])
        freed[i] = true
    end
end
for i = 1, n do
    -- A hand-over of an earlier key may have taken this one too (grant_multi).
    if freed[i] and redis.call('exists', lock[i]) == 0 then
        hand_over(lock[i], queue[i], readers[i], fence[i], nil, nil)
    end
end
return released
