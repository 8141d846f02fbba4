-- read_acquire: takes a read share of a Lock, or queues for it.
--
-- @key lock        the lock
-- @key queue       the queue
-- @key readers     the readers
-- @key owner       who holds and waits
-- @arg token       the token
-- @arg lease       the lease in ms ('0': none)
-- @arg sent        the queue entry ('': one try, no queueing)
-- @arg life        the queue's lifetime in ms
-- @arg info        the record of who takes it (owner::record), or ''
-- @flag again      on any try after the first (the share may have been handed over
--                  already)
--
-- Returns {1, 0} when the token holds a share (one found held already gets its
-- lease again, from now), {0, pttl} when not and not queued, {2, pttl, entry as
-- queued, clock} when queued, {3, pttl} when the entry, sent as queued, has left
-- the queue (see stamp); pttl is the key's remaining lease in ms, clock the
-- server's clock in ms when the entry was stamped.
--@include lib/readers
--@include lib/own
--@include lib/stamp
local entry, stamped = sent, nil
if entry ~= '' then entry, stamped = stamp(queue, entry, again) end
local now = now_ms()
local holder = redis.call('get', lock)
local queued = again and entry ~= '' and redis.call('lpos', queue, entry)
if holder == '' then
    redis.call('zremrangebyscore', readers, '-inf', now)
    -- Handed over while queued (the grant took the entry out), or a retried try: the
    -- lease starts again now, as the caller counts it from this try.
    if again and not queued and redis.call('zscore', readers, token) then
        add_reader(readers, token, lease, now)
        read_mode(lock, readers, now)
        return {1, 0}
    end
end
if not holder or holder == '' then
    local head = redis.call('lindex', queue, 0)
    if not head or head == entry then
        if queued then redis.call('lrem', queue, 0, entry) end
        add_reader(readers, token, lease, now)
        read_mode(lock, readers, now)
        own(owner, token, info, lease)
        return {1, 0}
    end
end
local push = 'rpush'
--@include lib/enqueue
