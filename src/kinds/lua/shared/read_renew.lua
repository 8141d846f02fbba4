-- read_renew: sets a live read share's lease.
--
-- KEYS[1] the lock   KEYS[2] the readers   KEYS[3] who holds it (absent: none kept)
-- ARGV[1] the token   ARGV[2] the lease in ms ('0': none)
--
-- Keeps the record as long. Returns 1 when it did, 0 otherwise.
--@include readers
if redis.call('get', KEYS[1]) ~= '' then return 0 end
local now = now_ms()
local score = redis.call('zscore', KEYS[2], ARGV[1])
if not score or (score ~= 'inf' and tonumber(score) <= now) then return 0 end
add_reader(KEYS[2], ARGV[1], ARGV[2], now)
read_mode(KEYS[1], KEYS[2], now)
if KEYS[3] then
    if ARGV[2] == '0' then redis.call('persist', KEYS[3]) else redis.call('pexpire', KEYS[3], ARGV[2], 'gt') end
end
return 1
