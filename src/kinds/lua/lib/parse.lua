-- parse(entry): a queue entry "<until>:<lease ms>:<f>:<channel length>:<channel><token>"
-- split into token, lease, f and channel, or nil for an entry whose waiter's time
-- is up (see stamp). f is '1' for a writer that wants a fencing token, '0' for a
-- writer, 'r' for a reader. Sets `clock`, the server's time in ms, on first use.
-- With tell.
local clock = nil
local function parse(entry)
    local u, lease, f, n, rest = string.match(entry, '^(%d+):(%d+):([01r]):(%d+):(.*)$')
    if not rest then return nil end
    if not clock then
        local t = redis.call('time')
        clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
    if tonumber(u) < clock then return nil end
    n = tonumber(n)
    if #rest <= n then return nil end
    return string.sub(rest, n + 1), lease, f, string.sub(rest, 1, n)
end
--@include tell
