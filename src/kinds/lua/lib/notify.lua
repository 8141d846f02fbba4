-- notify(entry, ms) tells a waiter to look again in `ms` (the message is
-- "n<ms>:<token>"), with the answers of tell.
--@include parse
local function notify(entry, ms)
    local t, lease, f, ch = parse(entry)
    if not t then return 'no' end
    return tell(ch, 'n' .. ms .. ':' .. t)
end
