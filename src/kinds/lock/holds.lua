-- holds: whether a token holds a Lock.
--
-- @key lock        the lock
-- @key readers     the readers
-- @arg token       the token
--
-- Returns 1 for the write lock, 2 for a live read share, 0 for neither.
--@include lib/readers
local holder = redis.call('get', lock)
if holder == token then return 1 end
if holder ~= '' then return 0 end
local score = redis.call('zscore', readers, token)
if score and (score == 'inf' or tonumber(score) > now_ms()) then return 2 end
return 0
