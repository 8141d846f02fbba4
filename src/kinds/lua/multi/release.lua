-- multi/release: gives up every key a MultiLock's token holds, each handed to the
-- head of its queue as a Lock's release would (grant's hand_over).
--
-- KEYS[5i-4] key i's lock   KEYS[5i-3] its queue   KEYS[5i-2] its fencing counter
-- KEYS[5i-1] its readers   KEYS[5i] who holds it (owner_info), for each key i
-- ARGV[1] the token   ARGV[2] each key's mode, one letter a key ('w' or 'r': a read
-- share, given up as read_release does: the last reader out hands the lock over)
--
-- Returns how many of the keys the token held (and no longer does).
--@include grant
local token, modes, n, released = ARGV[1], ARGV[2], #KEYS / 5, 0
-- First every key is let go, then each is handed over: a MultiLock waiting for
-- several of these keys finds them all free at its turn, and gets them at once.
local freed = {}
for i = 1, n do
    local lock, readers = KEYS[5 * i - 4], KEYS[5 * i - 1]
    local v = redis.call('get', lock)
    if string.sub(modes, i, i) == 'r' then
        if v == '' and redis.call('zrem', readers, token) == 1 then
            released = released + 1
            redis.call('hdel', KEYS[5 * i], token)
            -- The last reader out frees the lock.
            freed[i] = not read_mode(lock, readers, now_ms())
        end
    elseif v == token then
        released = released + 1
        redis.call('hdel', KEYS[5 * i], token)
        redis.call('del', lock)
        freed[i] = true
    end
end
for i = 1, n do
    -- A hand-over of an earlier key may have taken this one too (grant_multi).
    if freed[i] and redis.call('exists', KEYS[5 * i - 4]) == 0 then
        hand_over(KEYS[5 * i - 4], KEYS[5 * i - 3], KEYS[5 * i - 1], KEYS[5 * i - 2], nil, nil)
    end
end
return released
