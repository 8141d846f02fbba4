-- renew: sets a live hold's lease.
--
-- @key sem         the semaphore's hash (see lib/permits)
-- @key queue       the queue
-- @key patience    the first waiter's patience
-- @key holders     the holders, scored by when their lease ends
-- @arg token       the token
-- @arg lease       the lease in ms ('0': none)
--
-- Returns 1 when it did, 0 otherwise.
--@include semaphore/lib/permits
if not redis.call('zscore', holders, token) then return 0 end
if lease == '0' then
    redis.call('zadd', holders, 'inf', token)
else
    redis.call('zadd', holders, now + tonumber(lease), token)
end
keep()
return 1
