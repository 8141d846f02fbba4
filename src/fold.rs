//! How a key becomes a metric's name (`redis_lock.metrics_fold`): its variable
//! part folded, so that `invoice:42` and `invoice:43` count as one name and the
//! number of names stays bounded.
//!
//! - `digits` (the default): the key is cut into words at punctuation (any
//!   printable ASCII byte but letters, digits and `_`); a word holding anything but
//!   letters and `_` (a digit, a byte outside ASCII, a control byte) becomes `*`,
//!   and so does one longer than 32 bytes. `invoice:42:pdf` is `invoice:*:pdf`, a
//!   UUID `*-*-*-*-*`, a binary key `*`.
//! - `prefix:N`: the first N `:`-separated parts are kept, the rest is one `*`
//!   (`prefix:1`: `invoice:42:pdf` is `invoice:*`).
//! - `exact`: the key as it is, bounded only by the names' table and its overflow
//!   (not `none`, which php.ini reads as an empty value).
//!
//! A folded name is cut to `NAME_MAX` bytes.

use crate::error::{LockError, Result};

/// The longest name kept; a longer one is cut.
pub const NAME_MAX: usize = 120;

/// A word longer than this is taken for an identifier (a hash, base64) and folded.
const WORD_MAX: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    Digits,
    Prefix(usize),
    Exact,
}

impl Fold {
    /// The rule a `redis_lock.metrics_fold` value names.
    pub fn parse(text: &str) -> Result<Fold> {
        let bad = || {
            LockError::InvalidValue(format!(
                "redis-lock: redis_lock.metrics_fold must be digits, exact or prefix:N (N from 1 to 16), not \"{text}\""
            ))
        };
        match text.trim() {
            "" | "digits" => Ok(Fold::Digits),
            "exact" => Ok(Fold::Exact),
            t => {
                let n = t.strip_prefix("prefix:").ok_or_else(bad)?;
                match n.parse::<usize>() {
                    Ok(n @ 1..=16) => Ok(Fold::Prefix(n)),
                    _ => Err(bad()),
                }
            }
        }
    }

    /// `key`'s name under this rule.
    pub fn apply(self, key: &[u8]) -> Vec<u8> {
        let mut out = match self {
            Fold::Exact => key.to_vec(),
            Fold::Prefix(n) => {
                let mut parts = key.splitn(n + 1, |&b| b == b':');
                let mut out = Vec::with_capacity(key.len().min(NAME_MAX));
                for i in 0..n {
                    match parts.next() {
                        Some(p) => {
                            if i > 0 {
                                out.push(b':');
                            }
                            out.extend_from_slice(p);
                        }
                        None => break,
                    }
                }
                if parts.next().is_some() {
                    out.extend_from_slice(b":*");
                }
                out
            }
            Fold::Digits => digits(key),
        };
        out.truncate(NAME_MAX);
        out
    }
}

fn is_punct(b: u8) -> bool {
    b.is_ascii_punctuation() && b != b'_' || b == b' '
}

fn digits(key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len().min(NAME_MAX));
    let mut rest = key;
    while !rest.is_empty() {
        let word_len = rest.iter().position(|&b| is_punct(b)).unwrap_or(rest.len());
        let (word, after) = rest.split_at(word_len);
        if !word.is_empty() {
            let plain = word.len() <= WORD_MAX
                && word.iter().all(|&b| b.is_ascii_alphabetic() || b == b'_');
            if plain {
                out.extend_from_slice(word);
            } else {
                out.push(b'*');
            }
        }
        if let Some((&sep, after)) = after.split_first() {
            out.push(sep);
            rest = after;
        } else {
            rest = after;
        }
        if out.len() > NAME_MAX {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(key: &[u8]) -> String {
        String::from_utf8(Fold::Digits.apply(key)).unwrap()
    }

    #[test]
    fn digits_folds_the_variable_words() {
        assert_eq!(d(b"invoice:42:pdf"), "invoice:*:pdf");
        assert_eq!(d(b"invoice:43:pdf"), "invoice:*:pdf");
        assert_eq!(d(b"cron"), "cron");
        assert_eq!(d(b"user/7/avatar.png"), "user/*/avatar.png");
        assert_eq!(d(b"job:550e8400-e29b-41d4-a716-446655440000"), "job:*-*-*-*-*");
        assert_eq!(d(b"s3-sync"), "*-sync");
        assert_eq!(d(&[0xff, 0x00, 0x01]), "*");
        assert_eq!(d(b"k:caf\xc3\xa9"), "k:*");
        assert_eq!(d(b"report:abcdefghijklmnopqrstuvwxyzabcdefgh"), "report:*");
        assert_eq!(d(b""), "");
        assert_eq!(d(b"a::b"), "a::b");
        assert!(Fold::Digits.apply(&[b'a'; 400]).len() <= NAME_MAX);
    }

    #[test]
    fn prefix_keeps_n_parts() {
        let p1 = Fold::Prefix(1);
        assert_eq!(p1.apply(b"invoice:42:pdf"), b"invoice:*");
        assert_eq!(p1.apply(b"invoice"), b"invoice");
        assert_eq!(Fold::Prefix(2).apply(b"invoice:42:pdf"), b"invoice:42:*");
        assert_eq!(Fold::Prefix(2).apply(b"invoice:42"), b"invoice:42");
        assert_eq!(Fold::Exact.apply(b"invoice:42"), b"invoice:42");
    }

    #[test]
    fn parses_the_directive() {
        assert_eq!(Fold::parse("digits").unwrap(), Fold::Digits);
        assert_eq!(Fold::parse("").unwrap(), Fold::Digits);
        assert_eq!(Fold::parse("exact").unwrap(), Fold::Exact);
        assert_eq!(Fold::parse("prefix:3").unwrap(), Fold::Prefix(3));
        for bad in ["none", "prefix:0", "prefix:17", "prefix:", "regex", "prefix:x"] {
            assert!(Fold::parse(bad).is_err(), "{bad}");
        }
    }
}
