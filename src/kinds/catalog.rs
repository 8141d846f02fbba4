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
    /// A semaphore's hash, or the string of a hold taken alone in its holders' key
    /// (`kinds::semaphore`).
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
    // Strings are locks, and semaphores held alone (a string in their holders' key,
    // their own key absent: `kinds::semaphore`): one pass takes in both with a wider
    // glob (the name anywhere in the key), and each key is then matched here exactly.
    let mut wide = b"*".to_vec();
    wide.extend_from_slice(&glob);
    wide.push(b'*');
    'masters: for ep in route.masters()? {
        for (type_name, server_glob) in [(&b"string"[..], &wide), (b"hash", &glob)] {
            let keep = |key: &[u8]| listed(key, type_name, &glob).is_some();
            let keys = route::on_node(&ep, |run| {
                scan_type(run, server_glob, type_name, &keep, limit + 1)
            })?;
            for key in keys {
                let Some((key, kind)) = listed(&key, type_name, &glob) else { continue };
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

/// What a key of type `type_name` found by a scan is in a listing for `glob`: the key
/// listed (a semaphore held alone is listed by its own key) and its kind; `None` for
/// an auxiliary key, or one that does not match.
fn listed<'k>(key: &'k [u8], type_name: &[u8], glob: &[u8]) -> Option<(&'k [u8], Found)> {
    let (key, kind) = match (keys::aux_of(key), type_name) {
        (None, b"hash") => (key, Found::Semaphore),
        (None, _) => (key, Found::Lock),
        // A Lock's readers are a sorted set: a string there is a semaphore held alone.
        (Some((base, keys::HOLDERS)), b"string") => (base, Found::Semaphore),
        (Some(_), _) => return None,
    };
    glob_match(glob, key).then_some((key, kind))
}

/// The keys of type `type_name` matching `glob` on one server that `keep` keeps, at
/// most `max`.
fn scan_type(
    run: &mut dyn FnMut(&Call<'_>) -> RedisResult<Value>,
    glob: &[u8],
    type_name: &[u8],
    keep: &dyn Fn(&[u8]) -> bool,
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
            Value::BulkString(k) if keep(&k) => Some(k),
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

/// Whether `text` matches the glob `pattern` as Redis matches `SCAN MATCH`
/// (`stringmatchlen`: `*`, `?`, `[...]` with `^` and ranges, `\\` escaping).
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => {
            let rest =
                rest.iter().position(|&b| b != b'*').map_or(&rest[rest.len()..], |i| &rest[i..]);
            rest.is_empty() || (0..=text.len()).any(|i| glob_match(rest, &text[i..]))
        }
        Some((b'?', rest)) => !text.is_empty() && glob_match(rest, &text[1..]),
        Some((b'[', rest)) => {
            let Some((&c, after)) = text.split_first() else { return false };
            let (not, mut p) = match rest.split_first() {
                Some((b'^', p)) => (true, p),
                _ => (false, rest),
            };
            let mut hit = false;
            loop {
                match p {
                    [] => break,
                    [b']', tail @ ..] => {
                        p = tail;
                        break;
                    }
                    [b'\\', x, tail @ ..] => {
                        hit |= *x == c;
                        p = tail;
                    }
                    [lo, b'-', hi, tail @ ..] if *hi != b']' => {
                        let (lo, hi) = if lo <= hi { (*lo, *hi) } else { (*hi, *lo) };
                        hit |= (lo..=hi).contains(&c);
                        p = tail;
                    }
                    [x, tail @ ..] => {
                        hit |= *x == c;
                        p = tail;
                    }
                }
            }
            hit != not && glob_match(p, after)
        }
        Some((b'\\', [x, rest @ ..])) => text.first() == Some(x) && glob_match(rest, &text[1..]),
        Some((x, rest)) => text.first() == Some(x) && glob_match(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::{escape_glob, glob_match};

    #[test]
    fn a_prefix_matches_only_itself() {
        assert_eq!(escape_glob(b"app:*[x]?\\"), b"app:\\*\\[x\\]\\?\\\\".to_vec());
        assert!(glob_match(&escape_glob(b"app:*[x]?\\"), b"app:*[x]?\\"));
        assert!(!glob_match(&escape_glob(b"app:*"), b"app:x"));
    }

    #[test]
    fn globs_match_as_redis_matches_them() {
        let cases: &[(&[u8], &[u8], bool)] = &[
            (b"*", b"", true),
            (b"*", b"anything", true),
            (b"a*", b"abc", true),
            (b"a*", b"ba", false),
            (b"*c", b"abc", true),
            (b"a*c", b"ac", true),
            (b"a*c", b"abcd", false),
            (b"a**c", b"abbc", true),
            (b"?", b"", false),
            (b"a?c", b"abc", true),
            (b"[abc]x", b"bx", true),
            (b"[abc]x", b"dx", false),
            (b"[^abc]x", b"dx", true),
            (b"[^abc]x", b"ax", false),
            (b"[a-c]", b"b", true),
            (b"[c-a]", b"b", true),
            (b"[a-c]", b"d", false),
            (b"[\\]]", b"]", true),
            (b"\\*", b"*", true),
            (b"\\*", b"a", false),
            (b"job:*", b"{job:1}:readers", false),
            (b"*job:*", b"{job:1}:readers", true),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(
                glob_match(pattern, text),
                *want,
                "{} ~ {}",
                String::from_utf8_lossy(pattern),
                String::from_utf8_lossy(text)
            );
        }
    }
}
