-- semaphore renew: sets a live hold's lease.
--
-- KEYS: see permits
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': none)
--
-- Returns 1 when it did, 0 otherwise.
--@include permits
if not redis.call('zscore', holders, ARGV[1]) then return 0 end
if ARGV[2] == '0' then
    redis.call('zadd', holders, 'inf', ARGV[1])
else
    redis.call('zadd', holders, now + tonumber(ARGV[2]), ARGV[1])
end
keep()
return 1
