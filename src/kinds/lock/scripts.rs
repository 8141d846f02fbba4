//! A `Lock`'s scripts, generated at build time from the Lua files beside this module
//! (`build/lua.rs`): one struct per script, whose fields are the slots its header
//! names, and the script itself.
//!
//! Fencing: the fencing counter is the lock's. A number is only ever taken from it by
//! a script that holds the key for that holder at that moment: the acquisition
//! itself (`take`, `acquire`, a grant in `release`) or, later, the holder's own
//! token-checked `fence`. Holds do not overlap, so the numbers increase from holder
//! to holder. A grant that finds its waiter gone wastes a number; numbers only need
//! to increase, not to be dense. Each number is at least the server's clock in µs
//! (`lib/next_fence.lua`), so that a counter lost with the data (a restart without
//! persistence, a failover to a replica that missed it) starts again above every
//! number issued before, as long as the servers' clocks do not go back.
//!
//! Read mode: the lock key holds the empty string (no token is empty), so a writer's
//! `SET NX` fails as it does against any holder, and the common writer path pays
//! nothing for readers. The readers are a sorted set beside the key, each token
//! scored with the Redis time, in ms, when its lease ends: expiry is judged on
//! Redis's clock, never a client's, and a crashed reader's share is gone when its
//! lease ends. The key lives as long as the longest lease.

include!(concat!(env!("OUT_DIR"), "/kinds/lock.rs"));
