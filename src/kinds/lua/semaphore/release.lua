-- semaphore release: gives up a hold's permits and hands the freed ones out, fairly
-- if the holders were taken in fair mode.
--
-- KEYS: see permits
-- ARGV[1] the token   ARGV[2] the first waiter's patience in ms
--
-- Returns 1 when the hold was released with its lease still running, 0 when the
-- token held nothing (or its lease had ended).
--@include permits
--@include hand_out
-- One read for what the release needs (the hold's weight, the semaphore's terms and
-- the permits held, after the reclaim above), and ZREM as the test of a live hold.
-- The permits held are written once: by the grant that hands them on, or here.
local w, permits, fair, held = unpack(redis.call('hmget', sem, 'w:' .. ARGV[1], 'permits', 'fair', 'used'))
held = tonumber(held) or 0
local live = 0
if redis.call('zrem', holders, ARGV[1]) == 1 then
    live = 1
    redis.call('hdel', sem, 'w:' .. ARGV[1], 'o:' .. ARGV[1])
    held = held - (tonumber(w) or 0)
end
local given = permits and hand_out(tonumber(permits), fair == '1', ARGV[2], held)
if live == 1 and not given then redis.call('hset', sem, 'used', held) end
keep()
return live
