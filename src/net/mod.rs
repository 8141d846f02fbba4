//! The network: how bytes reach a Redis server and come back, on connections of our
//! own. Nothing here knows what a lock is, or how servers are arranged: that is
//! `topology`, one floor up. From the socket up:
//!
//! - `socket`: the byte stream (TCP, TLS through `tls`'s settings, Unix sockets).
//! - `resp`: commands written in RESP by hand, into a reused buffer.
//! - `reply`: replies parsed from RESP (RESP3 in RESP2's shapes), within limits;
//!   `scan`: a reply arriving in pieces, checked as it comes.
//! - `reader`: a socket and its reused read buffer, giving whole replies.
//! - `wire`: the command connection (handshake, replies, unawaited commands, the
//!   push messages kept aside); `listen`: pub/sub on it, inline in RESP3 or in
//!   RESP2's subscribed mode.
//! - `call`: one command or script call as a value; `script`: EVALSHA with the
//!   text as fallback; `cad`: the server's own compare-and-delete, asked as a
//!   connection is made, and the mark that lets a lock's release use it; `fast`:
//!   a lock's first try, release and renewal by the server's own commands where
//!   they do what the script would, else the script.
//! - `failure`: what an error means, in words; `endpoint`: one server's settings,
//!   new connections to it, its clock; `evict`: whether a server can evict lock
//!   keys, asked as a connection is made; `idle`: least-recently-used lists;
//!   `pool`: the thread's connections and how a command runs on one (retry,
//!   settle).
//! - `wake`: where a waiter listens for its grant.

pub mod cad;
pub mod call;
pub mod endpoint;
pub mod evict;
mod failure;
pub mod fast;
pub mod idle;
pub mod listen;
pub mod pool;
mod reader;
mod reply;
pub mod resp;
mod scan;
pub mod script;
mod socket;
pub mod tls;
pub mod wake;
pub mod wire;
