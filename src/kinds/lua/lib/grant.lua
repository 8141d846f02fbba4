-- grant(lock, fence, entry) gives the lock to the waiting writer `entry` if it still
-- listens, with the answers of tell. The message is "g@<ms>:<token>", or
-- "g<fencing token>@<ms>:<token>" when the waiter asked for one, where <ms> is the
-- server's clock when the grant was made (`clock`, read before the lease is set):
-- the waiter bounds from it when its lease ends (waiting::grant_bound), so that a
-- grant read late (a paused process) is never taken for a live hold. Publishing
-- first is safe: the waiter reads the message only after the script.
--
-- hand_over(lock, queue, readers, fence, mine, first) gives the free lock to the
-- head of the queue, stopping at the entry `mine` (a waiter never hands the lock to
-- itself): to its first writer still listening, or to every reader up to the first
-- writer, each told on its own channel. Answers whether anyone got it. `first`,
-- when given, is the head taken off the queue already by the caller (release's
-- fast path), which is put back if it cannot be told (put_back).
--@include parse
--@include readers
--@include next_fence
local function grant(lock, fence, entry)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    local msg = string.format('g@%.0f:', clock) .. t
    if f == '1' then msg = string.format('g%.0f@%.0f:', next_fence(fence), clock) .. t end
    local answer = tell(ch, msg)
    if answer == 'yes' then
        if lease == '0' then redis.call('set', lock, t) else redis.call('set', lock, t, 'px', lease) end
    end
    return answer
end
local function put_back(queue, entry)
    -- pcall: a user refused PUBLISH may be refused LPUSH too. The entry is lost
    -- then, and its waiter, which finds out by its own timer, queues anew.
    if redis.pcall('lpush', queue, entry) == 1 then
        -- The queue had gone with its last entry, and its expiry with it: this entry
        -- is waited for until its time, and the queue kept as a wait keeps it.
        local u = tonumber(string.match(entry, '^(%d+):')) or 0
        redis.pcall('pexpire', queue, math.max(0, u - (clock or now_ms())) + 5000)
    end
end
local function hand_over(lock, queue, readers, fence, mine, first)
    local now = nil
    while true do
        local head = first or redis.call('lindex', queue, 0)
        if not head or head == mine then break end
        local t, lease, f, ch = parse(head)
        local answer = 'no'
        if t and f == 'r' then
            answer = tell(ch, string.format('g@%.0f:', clock) .. t)
            if answer == 'yes' then
                now = now or now_ms()
                add_reader(readers, t, lease, now)
            end
        elseif t then
            -- Readers got it: the writer behind them waits for their release.
            if now then break end
            answer = grant(lock, fence, head)
        end
        if answer == 'denied' then
            if first then put_back(queue, head) end
            break
        end
        if not first then redis.call('lpop', queue) end
        first = nil
        if answer == 'yes' and f ~= 'r' then return true end
    end
    if now then return read_mode(lock, readers, now) end
    return false
end
