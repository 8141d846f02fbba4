-- The head of every semaphore script, not a function: reclaims the holds whose
-- lease has ended (on Redis's clock), and defines the helpers. Expects the keys as
-- locals (every semaphore script names them so):
--
--   sem       the hash: 'permits', 'used', 'fair', 'w:<token>' (each holder's
--             weight), 'o:<token>' (who holds or waits, with owner_info)
--   queue     the queue, whose entries' mark is the waiter's weight (lib/entry)
--   patience  the first waiter's patience, "<deadline ms>:<entry>"
--   holders   the holders, scored by when their lease ends; or, for a hold taken
--             alone (the first try's SET NX PX, no script: nobody held any), a
--             string '<permits>:<weight>:<token>' with the hold's lease as its
--             expiry, and no hash. A Lock's readers are always a sorted set, so a
--             string here is a semaphore's (listings tell it so).
--
-- `first` is the holder whose lease ends first, {token, score} ({} when none), as
-- the reclaim left it, or nil when the reclaim dropped some (read it again then).
-- A hold taken alone is first turned into the hash and the sorted set (what every
-- script below reads), its lease kept: from then on it is a hold like any other.
-- drop(t) frees a holder's permits; used() the permits held; add(t, w, lease,
-- permits, fair, held) records a hold, `held` being the permits held before it,
-- and answers the permits held after; keep() sets both keys' expiry from the
-- longest lease (deletes them when none is left), and keep_alone(lease) for a hold
-- that is the only one, whose lease is then the keys' (no read of the longest);
-- patient(head, ms) whether the first waiter's patience lasts (starting it when
-- `head` is new at the head).
local t0 = redis.call('time')
local now = tonumber(t0[1]) * 1000 + math.floor(tonumber(t0[2]) / 1000)
local function drop(t)
    local w = tonumber(redis.call('hget', sem, 'w:' .. t)) or 0
    redis.call('hdel', sem, 'w:' .. t, 'o:' .. t)
    redis.call('hincrby', sem, 'used', -w)
    redis.call('zrem', holders, t)
end
-- A hold taken alone, as the hash and sorted set (see above); anything else than
-- that string fails as ZRANGE failed.
local function from_alone(failed)
    local v = redis.call('get', holders)
    local p, w, t = string.match(v, '^(%d+):(%d+):(.*)$')
    if not p then return redis.error_reply(failed.err) end
    local ms = redis.call('pttl', holders)
    local score = 'inf'
    if ms >= 0 then score = now + ms end
    redis.call('del', holders)
    redis.call('zadd', holders, score, t)
    redis.call('hset', sem, 'permits', p, 'fair', '0', 'w:' .. t, w, 'used', w)
    if ms >= 0 then
        redis.call('pexpire', sem, math.max(1, ms))
        redis.call('pexpire', holders, math.max(1, ms))
    end
    return {t, score}
end
-- The earliest lease tells whether any has ended: the reclaim's range is read only
-- then, so a script pays one call for it, which acquire reuses.
local first = redis.pcall('zrange', holders, 0, 0, 'withscores')
if first.err then
    first = from_alone(first)
    if first.err then return first end
end
if first[2] and first[2] ~= 'inf' and tonumber(first[2]) <= now then
    for _, t in ipairs(redis.call('zrangebyscore', holders, '-inf', now)) do drop(t) end
    first = nil
end
local function used()
    return tonumber(redis.call('hget', sem, 'used')) or 0
end
local function add(t, w, lease, permits, fair, held)
    if lease == '0' then redis.call('zadd', holders, 'inf', t) else redis.call('zadd', holders, now + tonumber(lease), t) end
    held = held + w
    redis.call('hset', sem, 'permits', permits, 'fair', fair, 'w:' .. t, w, 'used', held)
    return held
end
local function keep()
    local last = redis.call('zrange', holders, -1, -1, 'withscores')
    if not last[2] then
        redis.call('del', sem, holders)
    elseif last[2] == 'inf' then
        redis.call('persist', sem)
        redis.call('persist', holders)
    else
        local px = math.max(1, math.ceil(tonumber(last[2]) - now))
        redis.call('pexpire', sem, px)
        redis.call('pexpire', holders, px)
    end
end
local function keep_alone(lease)
    if lease == '0' then
        redis.call('persist', sem)
        redis.call('persist', holders)
    else
        redis.call('pexpire', sem, lease)
        redis.call('pexpire', holders, lease)
    end
end
local function patient(head, ms)
    if not head then return true end
    local v = redis.call('get', patience)
    local until_ms, who = nil, nil
    if v then until_ms, who = string.match(v, '^(%d+):(.*)$') end
    if who ~= head then
        local life = redis.call('pttl', queue)
        if life < 1 then life = 60000 end
        redis.call('set', patience, (now + tonumber(ms)) .. ':' .. head, 'px', life)
        return true
    end
    return now < tonumber(until_ms)
end
