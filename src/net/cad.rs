//! The server's own compare-and-delete: whether a server has it, asked once per
//! connection, and the mark that lets a lock's uncontended release use it.
//!
//! Valkey 9 has `DELIFEQ key value`, Redis 8.4 `DELEX key IFEQ value`; both have
//! `SET key value IFEQ value` (Valkey from 8.1). A connection asks `COMMAND INFO
//! DELIFEQ DELEX` in the write of its first `PING` (`endpoint::open`): a server that
//! knows neither, or refuses the question (an old server, an ACL without `COMMAND`),
//! has none, and every release and renewal stays a script.
//!
//! A lock's release does more than delete when someone waits: it hands the lock
//! over. So the plain command is only ever sent for a value that shows nobody
//! queued: a hold taken alone writes its token *marked* (`token::mark`: the 32 hex digits
//! of a generated token and `!`), and every waiter that queues behind a marked value
//! takes the mark off (`kinds/lib/unmark.lua`; the mark is `token`'s). `DELIFEQ key <marked>` then deletes
//! exactly when the release script would only have deleted; otherwise it answers 0,
//! and the script runs (`fast`). The scripts take a marked value for its token.

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

/// The question asked in a new connection's first write.
pub const PROBE: &[&[u8]] = &[b"COMMAND", b"INFO", b"DELIFEQ", b"DELEX"];

/// Reads the reply to `PROBE`: one entry per command, nil (or an empty array, as
/// some servers answer) for one the server does not know. Anything else (an error,
/// a reply of another shape) counts as neither.
pub fn from_probe(reply: &Value) -> Cad {
    let Value::Array(items) = reply else { return Cad::None };
    let known = |v: Option<&Value>| matches!(v, Some(Value::Array(info)) if !info.is_empty());
    if items.len() != 2 {
        return Cad::None;
    }
    if known(items.first()) {
        Cad::DelIfEq
    } else if known(items.get(1)) {
        Cad::DelEx
    } else {
        Cad::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reads_each_server() {
        let info = Value::Array(vec![Value::BulkString(b"x".to_vec())]);
        assert_eq!(from_probe(&Value::Array(vec![info.clone(), Value::Nil])), Cad::DelIfEq);
        assert_eq!(from_probe(&Value::Array(vec![Value::Nil, info.clone()])), Cad::DelEx);
        assert_eq!(from_probe(&Value::Array(vec![Value::Nil, Value::Nil])), Cad::None);
        assert_eq!(from_probe(&Value::Array(vec![Value::Array(vec![]), Value::Array(vec![])])), Cad::None);
        assert_eq!(from_probe(&Value::Array(vec![info])), Cad::None);
        assert_eq!(from_probe(&Value::Okay), Cad::None);
        assert_eq!(from_probe(&Value::Int(1)), Cad::None);
    }
}
