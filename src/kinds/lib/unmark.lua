-- unmark(lock, v): someone waits for `lock` now. Its value `v`, when it is a holder's
-- token marked (32 hex digits and '!', see net::cad: written by a holder that took
-- the lock with nobody queued, so that its release may be the server's own
-- compare-and-delete), loses its mark: that compare-and-delete then deletes nothing,
-- and the holder's release script runs, handing the lock over. Any other value (a
-- token unmarked, a caller's token, '' for readers, none) is left as it is. The
-- scripts take a marked value for its token wherever they compare a holder's.
local function unmark(lock, v)
    if v and #v == 33 and string.find(v, '^[0-9a-f]+!$') then
        redis.call('set', lock, string.sub(v, 1, 32), 'keepttl')
    end
end
