//! The network: how bytes reach a Redis server and come back.
//!
//! `resp` writes commands by hand into a reused buffer; `call` is one command as a
//! value, for one server or every node of a quorum; `wire` is the command
//! connection (our own, over TCP, TLS and Unix sockets);
//! `script` sends a Lua script by SHA1 with its text as the fallback; `tls` decides
//! whom `rediss://` trusts; `pool` is the per-thread, fork-aware registry of
//! endpoints and their connections; `wake` is the pub/sub subscriber that waiters
//! sleep on. Nothing here knows what a lock is, or how servers are arranged: that
//! is `topology`, one floor up.

pub mod call;
pub mod idle;
pub mod pool;
pub mod resp;
pub mod script;
pub mod tls;
pub mod wake;
pub mod wire;
