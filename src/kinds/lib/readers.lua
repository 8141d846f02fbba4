-- Shared (read) holds. In read mode the lock key holds the empty string (no token
-- can be empty) and lives as long as the longest reader's lease; the readers are a
-- sorted set of tokens scored by the Redis time, in ms, when their lease ends
-- ('inf': never). Expiry is judged on Redis's clock only.
--
-- now_ms(); add_reader(readers, token, lease, now); read_mode(lock, readers, now)
-- sets the lock key and the set's expiry from the longest lease left, or deletes
-- both when no reader is left, and answers whether any is.
local function now_ms()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function add_reader(readers, t, lease, now)
    if lease == '0' then
        redis.call('zadd', readers, 'inf', t)
    else
        redis.call('zadd', readers, now + tonumber(lease), t)
    end
end
local function read_mode(lock, readers, now)
    redis.call('zremrangebyscore', readers, '-inf', now)
    local last = redis.call('zrange', readers, -1, -1, 'withscores')
    if not last[2] then
        redis.call('del', lock, readers)
        return false
    end
    if last[2] == 'inf' then
        redis.call('set', lock, '')
        redis.call('persist', readers)
    else
        local px = math.max(1, math.ceil(tonumber(last[2]) - now))
        redis.call('set', lock, '', 'px', px)
        redis.call('pexpire', readers, px)
    end
    return true
end
