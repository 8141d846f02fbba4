//! Waiting for a lock: the one mechanism every kind of hold waits through.
//!
//! `waiting` is the loop (a queue entry, a private wake channel, a timer at the
//! holder's lease, polling when pub/sub is refused); `entry` writes the queue entries
//! and reads the messages that answer them (the scripts' side is `kinds/lib/entry.lua`);
//! `backoff` is the jittered, deadline-bound sleep of the polling paths. A kind says
//! how to try, how to cancel and what a grant means (`waiting::Waiter`); the
//! mechanism knows no kind.

pub mod backoff;
pub mod entry;
pub mod waiting;
