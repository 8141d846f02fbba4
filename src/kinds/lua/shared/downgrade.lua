-- downgrade: turns a write lock into a read share in one step, and lets in the
-- readers waiting at the head of the queue, so that no writer enters in between.
--
-- KEYS as LockKeys::all(): [1] the lock, [2] the queue, [5] the readers
-- ARGV[1] the token   ARGV[2] the share's lease in ms ('0': none)
--
-- Returns 1 when done, 0 when the token does not hold the write lock.
--@include parse
--@include readers
local lock, queue, readers = KEYS[1], KEYS[2], KEYS[5]
if redis.call('get', lock) ~= ARGV[1] then return 0 end
local now = now_ms()
add_reader(readers, ARGV[1], ARGV[2], now)
while true do
    local head = redis.call('lindex', queue, 0)
    -- A writer, or a MultiLock's entry ("m", see grant_multi), waits for the readers.
    if not head or string.find(head, '^%d+:%d+:m') then break end
    local t, lease, f, ch = parse(head)
    if t and f ~= 'r' then break end
    local answer = 'no'
    if t then answer = tell(ch, string.format('g@%.0f:', clock) .. t) end
    if answer == 'denied' then break end
    redis.call('lpop', queue)
    if answer == 'yes' then add_reader(readers, t, lease, now) end
end
read_mode(lock, readers, now)
return 1
