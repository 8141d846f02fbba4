//! The pure-Rust core against real redis-server processes, one module a topic; the
//! helpers every topic uses are here, the servers in `tests/support`.

#[path = "../support/mod.rs"]
mod support;

mod basics;
mod connections;
mod threads;
mod topologies;
mod waiting;

use redis::Value;
use redis_lock::config::{OptValue, Settings, Source};
use support::RedisServer;

fn settings(dsn: &str) -> Settings {
    let mut s = Settings::default();
    s.set("dsn", &OptValue::Str(dsn.as_bytes().to_vec()), Source::Option).unwrap();
    s
}

/// A key's value, as it is: a lock's is exactly its holder's token, on every server.
fn get(server: &RedisServer, key: &str) -> Option<Vec<u8>> {
    match server.cmd(&["GET", key]).unwrap() {
        Value::BulkString(b) => Some(b),
        Value::Nil => None,
        other => panic!("unexpected {other:?}"),
    }
}

/// Fencing numbers are at least the server's clock in µs: above this (2020) for sure.
const FLOOR: i64 = 1_600_000_000_000_000;

fn pttl(server: &RedisServer, key: &str) -> i64 {
    match server.cmd(&["PTTL", key]).unwrap() {
        Value::Int(ms) => ms,
        other => panic!("unexpected {other:?}"),
    }
}
