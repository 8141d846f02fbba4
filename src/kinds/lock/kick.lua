-- kick: hands a free Lock to the head of its queue, as a release does. Run by a
-- process that freed the lock for its own re-take (a short hold) and will not take
-- it again after all, so that the waiters need not wait for their timers.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key fence       the fencing counter
-- @key readers     the readers
--
-- Returns 1 when someone got the lock, 0 otherwise.
if redis.call('exists', queue) == 0 or redis.call('exists', lock) == 1 then return 0 end
--@include lib/grant
if hand_over(lock, queue, readers, fence, nil, nil) then return 1 end
return 0
