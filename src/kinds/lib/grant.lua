-- grant(lock, fence, entry) gives the lock to the waiting writer `entry` if it still
-- listens, with the answers of tell. The message is entry's `granted`, with a
-- fencing token when the waiter asked for one, stamped with the server's clock when
-- the grant was made (`clock`, read before the lease is set): the waiter bounds from
-- it when its lease ends (kinds::core::entry), so that a grant read late (a paused process)
-- is never taken for a live hold. Publishing first is safe: the waiter reads the
-- message only after the script.
--
-- hand_over(lock, queue, readers, fence, mine, first) gives the free lock to the
-- head of the queue, stopping at the entry `mine` (a waiter never hands the lock to
-- itself): to its first writer still listening, or to every reader up to the first
-- writer, each told on its own channel. Answers whether anyone got it. `first`,
-- when given, is the head taken off the queue already by the caller (release's
-- fast path), which is put back if it cannot be told (put_back).
--
-- grant_multi(lock, entry) is for a MultiLock's entry at the head ("m" entries,
-- see kinds::multi): it names every key the MultiLock wants, each as
-- "<w|r><length>:<lock><length>:<queue><length>:<fencing counter><length>:<readers>"
-- (w: taken alone, r: a read share). When every other key is free too (for a read
-- share: free, or held by readers), all of them are taken for it in this one step
-- (the MultiLock is told to look again now, and its next try finds them its
-- own); otherwise the entry moves to the front of the queue of the first key still
-- busy, having waited its turn here, and the lock goes on down this queue. Answers
-- 'yes', 'moved', or tell's 'no' and 'denied'.
--@include lib/entry
--@include lib/readers
--@include lib/next_fence
local function grant(lock, fence, entry)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    local number = nil
    if f == '1' then number = next_fence(fence) end
    local answer = tell(ch, granted(t, number))
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
local function grant_multi(lock, entry)
    local u, lease, mark, ch, rest = split_entry(entry)
    local f, bl = string.match(mark or '', '^m([01])(%d+)$')
    if not f then return 'no' end
    if not clock then clock = now_ms() end
    bl = tonumber(bl)
    if u < clock or #rest <= bl then return 'no' end
    local blob, t = string.sub(rest, 1, bl), string.sub(rest, bl + 1)
    -- Per key: its mode, then four "<length>:<name>".
    local keys, i, here = {}, 1, false
    while i <= #blob do
        local k = {mode = string.sub(blob, i, i)}
        i = i + 1
        for _, field in ipairs({'lock', 'queue', 'fence', 'readers'}) do
            local c = string.find(blob, ':', i, true)
            local len = c and tonumber(string.sub(blob, i, c - 1))
            if not len then return 'no' end
            k[field] = string.sub(blob, c + 1, c + len)
            i = c + 1 + len
        end
        if k.mode ~= 'w' and k.mode ~= 'r' then return 'no' end
        keys[#keys + 1] = k
    end
    for _, k in ipairs(keys) do
        if k.lock == lock then
            here = true
        else
            local v = redis.call('get', k.lock)
            if v and not (k.mode == 'r' and v == '') then
                put_back(k.queue, entry)
                return 'moved'
            end
        end
    end
    -- An entry that does not name this lock is not this queue's: dropped.
    if not here then return 'no' end
    local answer = tell(ch, look_again(0, t))
    if answer == 'yes' then
        local now = nil
        for _, k in ipairs(keys) do
            if k.mode == 'r' then
                now = now or now_ms()
                add_reader(k.readers, t, lease, now)
                read_mode(k.lock, k.readers, now)
            else
                if lease == '0' then redis.call('set', k.lock, t) else redis.call('set', k.lock, t, 'px', lease) end
                if f == '1' then next_fence(k.fence) end
            end
        end
    end
    return answer
end
local function hand_over(lock, queue, readers, fence, mine, first)
    local now = nil
    while true do
        local head = first or redis.call('lindex', queue, 0)
        if not head or head == mine then break end
        local t, lease, f, ch = nil, nil, 'm', nil
        if not string.find(head, '^%d+:%d+:m') then t, lease, f, ch = parse(head) end
        local answer = 'no'
        if f == 'm' then
            -- Readers got it: the MultiLock behind them waits for their release.
            if now then break end
            answer = grant_multi(lock, head)
        elseif t and f == 'r' then
            answer = tell(ch, granted(t))
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
