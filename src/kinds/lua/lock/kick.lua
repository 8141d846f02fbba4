-- kick: hands a free Lock to the head of its queue, as a release does. Run by a
-- process that freed the lock for its own re-take (a short hold) and will not take
-- it again after all, so that the waiters need not wait for their timers.
--
-- KEYS as release's (lock, queue, patience, fencing counter, readers)
-- ARGV[1] unused
--
-- Returns 1 when someone got the lock, 0 otherwise.
if redis.call('exists', KEYS[2]) == 0 or redis.call('exists', KEYS[1]) == 1 then return 0 end
--@include grant
if hand_over(KEYS[1], KEYS[2], KEYS[5], KEYS[4], nil, nil) then return 1 end
return 0
