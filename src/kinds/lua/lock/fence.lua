-- fence: the fencing token of a hold taken without one, made part of that
-- holder's tenure.
--
-- KEYS[1] the lock   KEYS[2] the fencing counter
-- ARGV[1] the token
--
-- Returns the next number if KEYS[1] still holds the token, 0 otherwise.
--@include next_fence
if redis.call('get', KEYS[1]) == ARGV[1] then return next_fence(KEYS[2]) end
return 0
