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
for i = 1, n do
    local lock, queue, fence, readers = KEYS[5 * i - 4], KEYS[5 * i - 3], KEYS[5 * i - 2], KEYS[5 * i - 1]
    local v = redis.call('get', lock)
    if string.sub(modes, i, i) == 'r' then
        if v == '' and redis.call('zrem', readers, token) == 1 then
            released = released + 1
            redis.call('hdel', KEYS[5 * i], token)
            if not read_mode(lock, readers, now_ms()) then hand_over(lock, queue, readers, fence, nil, nil) end
        end
    elseif v == token then
        released = released + 1
        redis.call('hdel', KEYS[5 * i], token)
        local head = redis.call('lpop', queue)
        if not head or not hand_over(lock, queue, readers, fence, nil, head) then
            redis.call('del', lock)
        end
    end
end
return released
