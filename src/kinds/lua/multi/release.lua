-- multi/release: gives up every key a MultiLock's token holds, each handed to the
-- head of its queue as a Lock's release would (grant's hand_over).
--
-- KEYS[5i-4] key i's lock   KEYS[5i-3] its queue   KEYS[5i-2] its fencing counter
-- KEYS[5i-1] its readers   KEYS[5i] who holds it (owner_info), for each key i
-- ARGV[1] the token
--
-- Returns how many of the keys the token held (and no longer does).
--@include grant
local token, n, released = ARGV[1], #KEYS / 5, 0
for i = 1, n do
    local lock, queue = KEYS[5 * i - 4], KEYS[5 * i - 3]
    if redis.call('get', lock) == token then
        released = released + 1
        redis.call('hdel', KEYS[5 * i], token)
        local head = redis.call('lpop', queue)
        if not head or not hand_over(lock, queue, KEYS[5 * i - 1], KEYS[5 * i - 2], nil, head) then
            redis.call('del', lock)
        end
    end
end
return released
