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
local live = 0
if redis.call('zscore', holders, ARGV[1]) then
    live = 1
    drop(ARGV[1])
end
local permits = tonumber(redis.call('hget', sem, 'permits'))
if permits then hand_out(permits, redis.call('hget', sem, 'fair') == '1', ARGV[2]) end
keep()
return live
