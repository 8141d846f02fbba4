-- release: gives up a Lock's write hold, or forces the lock free.
--
-- KEYS[1] the lock   KEYS[2] the queue   KEYS[3] the first waiter's patience
-- KEYS[4] the fencing counter   KEYS[5] the readers   KEYS[6] who holds and waits
-- ARGV[1] the holder's token, or '' for a forced release (no token is empty),
--         readers included
-- ARGV[2] '1': a short hold (see below)
-- ARGV[3] the patience in ms of the first waiter
--
-- Returns 1 when released, 2 when only freed while waiters are queued (a short
-- hold), 0 when the token did not hold it, -1 when readers hold it (a reader's
-- share is released by read_release).
--
-- Normally the lock goes straight to the head of the queue (hand_over: its first
-- writer that still listens, or the run of readers before the first writer), with
-- a fencing token if it asked for one. With ARGV[2] = '1' (a short hold, not in
-- fair mode) the lock is only freed, so that the releaser or a newcomer may take it
-- again at once, but only while the first waiter's patience lasts: ARGV[3] ms from
-- the first short hold that found it first in line. That waiter is told once when
-- to look again, and no release after that passes it over. The patience key
-- (KEYS[3]) is "<until ms>:<told 0|1>:<entry>", for the entry at the head when it
-- started; only this path reads or writes it.
--
-- The common cases come first and define nothing: nobody waits (GET, LPOP, DEL;
-- GET, LINDEX, DEL after a short hold),
-- or a writer waits (GET, LPOP, HDEL, TIME, PUBLISH, SET; with INCR for a fencing
-- token).
local holder = redis.call('get', KEYS[1])
if not holder then return 0 end
if holder ~= ARGV[1] and ARGV[1] ~= '' then
    -- In read mode the token may be a reader's: the caller asks read_release then.
    if holder == '' then return -1 end
    return 0
end
-- Forced, in read mode: every reader's share goes with it.
if holder == '' then redis.call('del', KEYS[5]) end
local lock, queue, patience, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if ARGV[2] == '1' then
    local head = redis.call('lindex', queue, 0)
    if not head then
        -- Nobody waits (a tight loop alone): as below.
        redis.call('del', lock, KEYS[6])
        return 1
    end
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local u = tonumber(string.match(head, '^(%d+):'))
    if u and u >= now then
        local p = redis.call('get', patience)
        local ends, told, who = nil, nil, nil
        if p then ends, told, who = string.match(p, '^(%d+):([01]):(.*)$') end
        if who ~= head then
            -- A new first waiter: its patience starts now, and the key lasts as long
            -- as it may stay first.
            ends, told = now + tonumber(ARGV[3]), '0'
            redis.call('set', patience, ends .. ':0:' .. head, 'px', u - now + tonumber(ARGV[3]) + 1)
        end
        ends = tonumber(ends)
        if now < ends then
            --@include notify
            local answer = 'yes'
            if told == '0' then answer = notify(head, ends - now) end
            if answer ~= 'no' then
                redis.call('del', lock)
                redis.call('hdel', KEYS[6], holder)
                if told == '0' then redis.call('set', patience, ends .. ':1:' .. head, 'keepttl') end
                return 2
            end
            -- The first waiter is gone: the lock is handed over as usual.
        end
    end
end
local head = redis.call('lpop', queue)
if not head then
    -- Nobody waits: no one else's record is left in KEYS[6] either.
    redis.call('del', lock, KEYS[6])
    return 1
end
redis.call('hdel', KEYS[6], holder)
-- The common hand-over, written out: the head is a writer whose time is not up and
-- who still listens. It defines no function, which a script pays for on every
-- call; anything else (a reader, a waiter gone, a refused PUBLISH) goes to
-- hand_over below, the general case.
local t = redis.call('time')
local clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local u, lease, f, n, rest = string.match(head, '^(%d+):(%d+):([01]):(%d+):(.*)$')
n = tonumber(n)
if u and tonumber(u) >= clock and #rest > n then
    local ch, token = string.sub(rest, 1, n), string.sub(rest, n + 1)
    local verb = 'publish'
    if string.byte(ch, 17) == 123 then verb = 'spublish' end
    local msg = string.format('g@%.0f:', clock) .. token
    if f == '1' then
        --@include next_fence
        msg = string.format('g%.0f@%.0f:', next_fence(fence, t), clock) .. token
    end
    local heard = redis.pcall(verb, ch, msg)
    if type(heard) == 'number' then
        if heard > 0 then
            if lease == '0' then redis.call('set', lock, token) else redis.call('set', lock, token, 'px', lease) end
            return 1
        end
        -- Nobody listens: the waiter is gone, and so is its entry.
        head = nil
    end
end
--@include grant
if hand_over(lock, queue, KEYS[5], fence, nil, head) then return 1 end
redis.call('del', lock)
return 1
