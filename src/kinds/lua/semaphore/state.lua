-- semaphore state: the permits free now, and whether a token holds some.
--
-- KEYS: see permits
-- ARGV[1] the number of permits   ARGV[2] the token, or ''
--
-- Returns {free, held}, or {-1, stored} when the holders agreed on another number.
--@include permits
local stored = redis.call('hget', sem, 'permits')
if stored and tonumber(stored) ~= tonumber(ARGV[1]) and redis.call('zcard', holders) > 0 then return {-1, tonumber(stored)} end
local held = 0
if ARGV[2] ~= '' and redis.call('zscore', holders, ARGV[2]) then held = 1 end
return {tonumber(ARGV[1]) - used(), held}
