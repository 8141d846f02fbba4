-- release: gives up a Lock's write hold, or forces the lock free.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key patience    the first waiter's patience
-- @key fence       the fencing counter
-- @key readers     the readers
-- @key owner       who holds and waits
-- @arg token       the holder's token, or '' for a forced release (no token is empty),
--                  readers included
-- @arg wait        the patience in ms of the first waiter
-- @flag short      a short hold (see below)
--
-- Returns 1 when released, 2 when only freed while waiters are queued (a short
-- hold), 0 when the token did not hold it, -1 when readers hold it (a reader's
-- share is released by read_release).
--
-- Normally the lock goes straight to the head of the queue (hand_over: its first
-- writer that still listens, or the run of readers before the first writer), with
-- a fencing token if it asked for one. After a short hold (not in fair mode) the
-- lock is only freed, so that the releaser or a newcomer may take it again at
-- once, but only while the first waiter's patience lasts: `wait` ms from the first
-- short hold that found it first in line. That waiter is told once when to look
-- again, and no release after that passes it over. The patience key is
-- "<until ms>:<told 0|1>:<entry>", for the entry at the head when it started; only
-- this path reads or writes it.
--
-- The common cases come first: nobody waits (GET, LPOP, DEL; GET, LINDEX, DEL after
-- a short hold), defining nothing, or a writer waits (GET, LPOP, HDEL, TIME,
-- PUBLISH, SET; with INCR for a fencing token), defining only lib/entry's helpers.
local holder = redis.call('get', lock)
if not holder then return 0 end
if holder ~= token and token ~= '' then
    -- In read mode the token may be a reader's: the caller asks read_release then.
    if holder == '' then return -1 end
    return 0
end
-- Forced, in read mode: every reader's share goes with it.
if holder == '' then redis.call('del', readers) end
if short then
    local head = redis.call('lindex', queue, 0)
    if not head then
        -- Nobody waits (a tight loop alone): as below.
        redis.call('del', lock, owner)
        return 1
    end
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    --@include lib/entry
    local u = split_entry(head)
    if u and u >= now then
        local p = redis.call('get', patience)
        local ends, told, who = nil, nil, nil
        if p then ends, told, who = string.match(p, '^(%d+):([01]):(.*)$') end
        if who ~= head then
            -- A new first waiter: its patience starts now, and the key lasts as long
            -- as it may stay first.
            ends, told = now + tonumber(wait), '0'
            redis.call('set', patience, ends .. ':0:' .. head, 'px', u - now + tonumber(wait) + 1)
        end
        ends = tonumber(ends)
        if now < ends then
            --@include lib/notify
            local answer = 'yes'
            if told == '0' then answer = notify(head, ends - now) end
            if answer ~= 'no' then
                redis.call('del', lock)
                redis.call('hdel', owner, holder)
                if told == '0' then redis.call('set', patience, ends .. ':1:' .. head, 'keepttl') end
                return 2
            end
            -- The first waiter is gone: the lock is handed over as usual.
        end
    end
end
local head = redis.call('lpop', queue)
if not head then
    -- Nobody waits: no one else's record is left in owner either.
    redis.call('del', lock, owner)
    return 1
end
redis.call('hdel', owner, holder)
-- The common hand-over, written out: the head is a writer whose time is not up and
-- who still listens. It defines only the entry's helpers (a script pays for every
-- function it defines, on every call); anything else (a reader, a waiter gone, a
-- refused PUBLISH, a MultiLock) goes to hand_over below, the general case.
--@include lib/entry
local t = redis.call('time')
clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local u, lease, f, ch, rest = split_entry(head)
if u and u >= clock and (f == '0' or f == '1') then
    local verb = 'publish'
    if string.byte(ch, 17) == 123 then verb = 'spublish' end
    local number = nil
    if f == '1' then
        --@include lib/next_fence
        number = next_fence(fence, t)
    end
    local heard = redis.pcall(verb, ch, granted(rest, number))
    if type(heard) == 'number' then
        if heard > 0 then
            if lease == '0' then redis.call('set', lock, rest) else redis.call('set', lock, rest, 'px', lease) end
            return 1
        end
        -- Nobody listens: the waiter is gone, and so is its entry.
        head = nil
    end
end
--@include lib/grant
if hand_over(lock, queue, readers, fence, nil, head) then return 1 end
redis.call('del', lock)
return 1
