-- downgrade: turns a write lock into a read share in one step, and lets in the
-- readers waiting at the head of the queue, so that no writer enters in between.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key readers     the readers
-- @arg token       the token
-- @arg lease       the share's lease in ms ('0': none)
--
-- Returns 1 when done, 0 when the token does not hold the write lock.
--@include lib/entry
--@include lib/readers
if redis.call('get', lock) ~= token then return 0 end
local now = now_ms()
add_reader(readers, token, lease, now)
while true do
    local head = redis.call('lindex', queue, 0)
    -- A writer, or a MultiLock's entry ("m", see grant_multi), waits for the readers.
    if not head or string.find(head, '^%d+:%d+:m') then break end
    local t, share, f, ch = parse(head)
    if t and f ~= 'r' then break end
    local answer = 'no'
    if t then answer = tell(ch, granted(t)) end
    if answer == 'denied' then break end
    redis.call('lpop', queue)
    if answer == 'yes' then add_reader(readers, t, share, now) end
end
read_mode(lock, readers, now)
return 1
