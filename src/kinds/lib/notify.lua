-- notify(entry, ms) tells a waiter to look again in `ms` (entry's look_again), with
-- the answers of tell.
--@include lib/entry
local function notify(entry, ms)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    return tell(ch, look_again(ms, t))
end
