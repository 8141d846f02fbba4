-- state: the permits free now, and whether a token holds some.
--
-- @key sem         the semaphore's hash (see lib/permits)
-- @key queue       the queue
-- @key patience    the first waiter's patience
-- @key holders     the holders, scored by when their lease ends
-- @arg permits     the number of permits
-- @arg token       the token, or ''
--
-- Returns {free, held}, or {-1, stored} when the holders agreed on another number.
--@include semaphore/lib/permits
local stored = redis.call('hget', sem, 'permits')
if stored and tonumber(stored) ~= tonumber(permits) and redis.call('zcard', holders) > 0 then return {-1, tonumber(stored)} end
local held = 0
if token ~= '' and redis.call('zscore', holders, token) then held = 1 end
return {tonumber(permits) - used(), held}
