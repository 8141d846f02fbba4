-- holds: whether a token holds a Lock.
--
-- KEYS[1] the lock   KEYS[2] the readers
-- ARGV[1] the token
--
-- Returns 1 for the write lock, 2 for a live read share, 0 for neither.
--@include readers
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] then return 1 end
if holder ~= '' then return 0 end
local score = redis.call('zscore', KEYS[2], ARGV[1])
if score and (score == 'inf' or tonumber(score) > now_ms()) then return 2 end
return 0
