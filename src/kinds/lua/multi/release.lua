-- multi/release: gives up every key a MultiLock's token holds, each handed to the
-- head of its queue as a Lock's release would (grant's hand_over).
--
-- KEYS[4i-3] key i's lock   KEYS[4i-2] its queue   KEYS[4i-1] its fencing counter
-- KEYS[4i] its readers, for each key i
-- ARGV[1] the token
--
-- Returns how many of the keys the token held (and no longer does).
--@include grant
local token, n, released = ARGV[1], #KEYS / 4, 0
for i = 1, n do
    local lock, queue = KEYS[4 * i - 3], KEYS[4 * i - 2]
    if redis.call('get', lock) == token then
        released = released + 1
        local head = redis.call('lpop', queue)
        if not head or not hand_over(lock, queue, KEYS[4 * i], KEYS[4 * i - 1], nil, head) then
            redis.call('del', lock)
        end
    end
end
return released
