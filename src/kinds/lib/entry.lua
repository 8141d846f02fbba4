-- Queue entries and the messages that answer them, as the scripts read and write
-- them: the one place of their formats on the server's side (the client's is
-- kinds::core::entry, and tests/lua_scripts.rs runs each side against the other).
--
-- An entry, as queued: "<until>:<lease ms>:<mark>:<channel length>:<channel><rest>".
-- until, in ms on the server's clock, is when its waiter stops waiting (see stamp);
-- the lease is the one its hold gets ('0': none); the mark says who waits: '0' a
-- writer, '1' a writer that wants a fencing token, 'r' a reader, digits a semaphore
-- waiter's weight, 'm<f><list length>' a MultiLock (f as a writer's; its list of
-- keys opens the rest, see grant_multi); the channel is the one it listens on; the
-- rest ends with the token, whole, so that any bytes a caller chose read
-- unambiguously.
--
-- split_entry(e): until (a number), lease, mark, channel and rest, or nil for an
-- entry of another shape. parse(e): a lock's entry (mark '0', '1' or 'r') whose
-- waiter still waits, as token, lease, mark and channel, or nil; it sets `clock`,
-- the server's time in ms, on first use.
--
-- The messages on a waiter's channel: granted(t, number) "g@<clock>:<token>", or
-- "g<number>@<clock>:<token>" with a fencing token, the hold being the token's
-- since the server's time `clock` (the waiter bounds its lease from it);
-- look_again(ms, t) "n<ms>:<token>": look again in ms.
local clock = nil
local function split_entry(e)
    local u, lease, mark, n, rest = string.match(e, '^(%d+):(%d+):([^:]+):(%d+):(.*)$')
    if not rest then return nil end
    n = tonumber(n)
    if #rest <= n then return nil end
    return tonumber(u), lease, mark, string.sub(rest, 1, n), string.sub(rest, n + 1)
end
local function parse(e)
    local u, lease, mark, ch, t = split_entry(e)
    if not u or not string.find(mark, '^[01r]$') then return nil end
    if not clock then
        local now = redis.call('time')
        clock = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
    end
    if u < clock then return nil end
    return t, lease, mark, ch
end
local function granted(t, number)
    if number then return string.format('g%.0f@%.0f:', number, clock) .. t end
    return string.format('g@%.0f:', clock) .. t
end
local function look_again(ms, t)
    return 'n' .. ms .. ':' .. t
end
--@include lib/tell
