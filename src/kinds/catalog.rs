//! What the servers hold under a prefix: the locks and semaphores, found with a
//! bounded `SCAN` of every master (`redis_lock_scan()`, the `redis-lock` tool's
//! `list`). Auxiliary keys (queues, counters, readers, records) are left out.

use crate::config::Settings;
use crate::error::Result;
use crate::keys;
use crate::net::call::Call;
use crate::topology::route::{self, Route};
use redis::{ErrorKind, RedisError, RedisResult, Value};
use std::collections::BTreeMap;

/// What a listed key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A lock's key (a string: a holder's token, or "" for readers).
    Lock,
    /// A semaphore's hash.
    Semaphore,
}

impl Found {
    /// The name listings give it.
    pub fn name(self) -> &'static str {
        match self {
            Found::Lock => "lock",
            Found::Semaphore => "semaphore",
        }
    }
}

/// A listing: names (without the prefix) in byte order, and whether `limit` cut it.
#[derive(Debug, Default)]
pub struct Listing {
    pub entries: Vec<(Vec<u8>, Found)>,
    pub truncated: bool,
}

/// Lists the locks and semaphores whose name, without the prefix, matches the glob
/// `pattern` (`*`, `?`, `[...]`, as `SCAN MATCH` takes them), at most `limit` of
/// them, on every master `settings` name.
pub fn scan(settings: &Settings, pattern: &[u8], limit: usize) -> Result<Listing> {
    let topology = settings.check()?;
    let route = Route::for_key(&topology, settings, b"")?;
    let mut glob = escape_glob(&settings.prefix);
    glob.extend_from_slice(pattern);
    let mut found = BTreeMap::new();
    let mut truncated = false;
    'masters: for ep in route.masters()? {
        for (kind, type_name) in [(Found::Lock, &b"string"[..]), (Found::Semaphore, b"hash")] {
            let keys = route::on_node(&ep, |run| scan_type(run, &glob, type_name, limit + 1))?;
            for key in keys {
                if keys::is_aux(&key) {
                    continue;
                }
                let Some(name) = key.strip_prefix(&settings.prefix[..]) else { continue };
                if found.len() >= limit && !found.contains_key(name) {
                    truncated = true;
                    break 'masters;
                }
                found.insert(name.to_vec(), kind);
            }
        }
    }
    Ok(Listing { entries: found.into_iter().collect(), truncated })
}

/// The keys of type `type_name` matching `glob` on one server, at most `max`.
fn scan_type(
    run: &mut dyn FnMut(&Call<'_>) -> RedisResult<Value>,
    glob: &[u8],
    type_name: &[u8],
    max: usize,
) -> RedisResult<Vec<Vec<u8>>> {
    let mut cursor = b"0".to_vec();
    let mut out = Vec::new();
    loop {
        let reply = run(&Call::Command(&[
            b"SCAN", &cursor, b"MATCH", glob, b"COUNT", b"1000", b"TYPE", type_name,
        ]))?;
        let Value::Array(mut parts) = reply else { return Err(bad_reply()) };
        let (Some(Value::Array(keys)), Some(Value::BulkString(next))) = (parts.pop(), parts.pop())
        else {
            return Err(bad_reply());
        };
        out.extend(keys.into_iter().filter_map(|k| match k {
            Value::BulkString(k) => Some(k),
            _ => None,
        }));
        if next == b"0" || out.len() >= max {
            return Ok(out);
        }
        cursor = next;
    }
}

fn bad_reply() -> RedisError {
    RedisError::from((ErrorKind::UnexpectedReturnType, "unexpected reply", "SCAN".to_string()))
}

/// `text` as a glob that matches only itself.
fn escape_glob(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for &b in text {
        if matches!(b, b'*' | b'?' | b'[' | b']' | b'\\') {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_prefix_matches_only_itself() {
        assert_eq!(super::escape_glob(b"app:*[x]?\\"), b"app:\\*\\[x\\]\\?\\\\".to_vec());
    }
}
