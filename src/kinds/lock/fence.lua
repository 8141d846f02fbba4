-- fence: the fencing token of a hold taken without one, made part of that
-- holder's tenure.
--
-- @key lock        the lock
-- @key fence       the fencing counter
-- @arg token       the token
--
-- Returns the next number if the lock still holds the token, 0 otherwise.
--@include lib/next_fence
if redis.call('get', lock) == token then return next_fence(fence) end
return 0
