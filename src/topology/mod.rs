//! Topologies: which server runs a key's commands, and how the servers are arranged.
//!
//! `route` is the one interface the kinds call (one server, a Sentinel-monitored
//! master, a Redis Cluster slot); `sentinel` finds a master again after a failover,
//! `cluster` follows a slot through MOVED, ASK and failovers, and `redlock` is the
//! quorum over several independent masters; `durable` the acknowledgement a durable
//! grant waits for, `renew` the one way renewals are sent (an object's, a durable
//! check, the watchdog's rounds) and `landed` what they found. Built on `net`.

pub mod cluster;
pub mod durable;
pub mod landed;
pub mod redlock;
pub mod renew;
pub mod route;
pub mod rules;
pub mod sentinel;
