//! The server's own compare-and-delete: whether a server has it, asked once per
//! connection.
//!
//! Valkey 9 has `DELIFEQ key value`, Redis 8.4 `DELEX key IFEQ value`; both have
//! `SET key value IFEQ value` (Valkey from 8.1). A connection asks `HELLO` in the
//! write of its first `PING` (`endpoint::open`) and reads the server's name and
//! version: a server older than those, or one that refuses the question (Redis
//! before 6.2), has none, and every release and renewal stays a script.
//!
//! A lock's release does more than delete when someone waits: it hands the lock
//! over. So the plain command is only sent for a hold taken with nobody queued, with
//! `EXISTS` of the queue in the same write; a waiter that queued since is handed the
//! free lock by the `kick` script in the next write (`fast`). The value stays the
//! token, byte for byte, on every server: the commands compare it as the scripts do.

use redis::Value;

/// What a server offers of its own compare-and-delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cad {
    /// Nothing: releases and renewals are scripts.
    #[default]
    None,
    /// Valkey 9: `DELIFEQ key value`, and `SET … IFEQ`.
    DelIfEq,
    /// Redis 8.4: `DELEX key IFEQ value`, and `SET … IFEQ`.
    DelEx,
}

/// The question asked in a new connection's first write: `HELLO` without a protocol
/// version, which names the server and its version without switching protocol, and
/// which no server checks against an ACL (docs/acl.md).
pub const PROBE: &[&[u8]] = &[b"HELLO"];

/// Reads the reply to `PROBE`: `server` and `version` among its fields (a flat array
/// of names and values in RESP2, a map in RESP3). Valkey from 9.0 has `DELIFEQ`,
/// Redis from 8.4 `DELEX`; anything else (an error, an older server, a Valkey that
/// calls itself Redis 7.2 for compatibility, a reply of another shape) has neither.
/// A server that names a version it does not live up to refuses the command, and
/// the connection turns it off then (`fast`).
pub fn from_probe(reply: &Value) -> Cad {
    let pairs: Vec<(&Value, &Value)> = match reply {
        Value::Array(items) if items.len() % 2 == 0 => {
            items.chunks_exact(2).map(|p| (&p[0], &p[1])).collect()
        }
        Value::Map(pairs) => pairs.iter().map(|(k, v)| (k, v)).collect(),
        _ => return Cad::None,
    };
    let field = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| text(k).is_some_and(|k| k.eq_ignore_ascii_case(name)))
            .and_then(|(_, v)| text(v))
    };
    let (Some(server), Some(version)) = (field("server"), field("version")) else {
        return Cad::None;
    };
    let mut parts = version.split('.').map(|n| n.parse::<u32>().ok());
    let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
        return Cad::None;
    };
    match server.to_ascii_lowercase().as_str() {
        "valkey" if major >= 9 => Cad::DelIfEq,
        "redis" if (major, minor) >= (8, 4) => Cad::DelEx,
        _ => Cad::None,
    }
}

/// Whether the environment turns the server's compare-and-delete off for this
/// process: `REDIS_LOCK_NO_CAD` set (to anything). A bench and debug switch
/// (`bench/uncontended.php --cad` compares the two paths), not a setting: read once.
pub fn turned_off() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OFF.get_or_init(|| std::env::var_os("REDIS_LOCK_NO_CAD").is_some())
}

fn text(v: &Value) -> Option<&str> {
    match v {
        Value::BulkString(b) => std::str::from_utf8(b).ok(),
        Value::SimpleString(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reads_each_server() {
        let hello = |server: &str, version: &str| {
            Value::Array(
                ["server", server, "version", version, "proto", "2"]
                    .iter()
                    .map(|s| Value::BulkString(s.as_bytes().to_vec()))
                    .collect(),
            )
        };
        assert_eq!(from_probe(&hello("valkey", "9.0.0")), Cad::DelIfEq);
        assert_eq!(from_probe(&hello("valkey", "10.1.2")), Cad::DelIfEq);
        assert_eq!(from_probe(&hello("valkey", "8.1.4")), Cad::None);
        assert_eq!(from_probe(&hello("redis", "8.4.0")), Cad::DelEx);
        assert_eq!(from_probe(&hello("redis", "9.0.0")), Cad::DelEx);
        assert_eq!(from_probe(&hello("redis", "8.2.3")), Cad::None);
        assert_eq!(from_probe(&hello("redis", "7.2.4")), Cad::None);
        assert_eq!(from_probe(&hello("redis", "x.y")), Cad::None);
        assert_eq!(from_probe(&hello("keydb", "9.0.0")), Cad::None);
        let map = Value::Map(vec![
            (Value::SimpleString("server".into()), Value::SimpleString("valkey".into())),
            (Value::SimpleString("version".into()), Value::BulkString(b"9.0.1".to_vec())),
        ]);
        assert_eq!(from_probe(&map), Cad::DelIfEq);
        assert_eq!(from_probe(&Value::Okay), Cad::None);
        assert_eq!(from_probe(&Value::Array(vec![Value::Nil])), Cad::None);
        assert_eq!(from_probe(&Value::Int(1)), Cad::None);
    }
}
