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
        let mut out = Vec::with_capacity(key.len().min(NAME_MAX));
        self.fold(key, &mut |part| out.extend_from_slice(part));
        out
    }

    /// The hash of `key`'s name (FNV-1a, never 0), made without building the name: a
    /// `new Lock` finds its name's slot by it.
    pub fn hash(self, key: &[u8]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        self.fold(key, &mut |part| {
            for &b in part {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        });
        h | 1
    }

    /// Gives `key`'s name to `emit` in parts, at most `NAME_MAX` bytes in all.
    fn fold(self, key: &[u8], emit: &mut impl FnMut(&[u8])) {
        let mut left = NAME_MAX;
        let mut put = |part: &[u8]| {
            let n = part.len().min(left);
            if n > 0 {
                emit(&part[..n]);
                left -= n;
            }
            left > 0
        };
        match self {
            Fold::Exact => {
                put(key);
            }
            Fold::Prefix(n) => {
                let mut parts = key.splitn(n + 1, |&b| b == b':');
                for i in 0..n {
                    let Some(p) = parts.next() else { return };
                    if (i > 0 && !put(b":")) || !put(p) {
                        return;
                    }
                }
                if parts.next().is_some() {
                    put(b":*");
                }
            }
            Fold::Digits => digits(key, &mut put),
        }
    }
}

/// What a byte is to `digits`: a letter or `_` (kept in a plain word), punctuation
/// (cuts words, kept), or anything else (folds its word).
const LETTER: u8 = 0;
const CUT: u8 = 1;
const OTHER: u8 = 2;

const CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() || c == b'_' {
            LETTER
        } else if c.is_ascii_punctuation() || c == b' ' {
            CUT
        } else {
            OTHER
        };
        b += 1;
    }
    t
};

/// One pass over the key; `put` takes each part of the name, and says whether it
/// wants more.
fn digits(key: &[u8], put: &mut impl FnMut(&[u8]) -> bool) {
    #[inline(always)]
    fn word(put: &mut impl FnMut(&[u8]) -> bool, word: &[u8], plain: bool) -> bool {
        if word.is_empty() {
            true
        } else if plain && word.len() <= WORD_MAX {
            put(word)
        } else {
            put(b"*")
        }
    }
    let (mut start, mut plain) = (0, true);
    for (i, &b) in key.iter().enumerate() {
        match CLASS[b as usize] {
            LETTER => {}
            CUT => {
                if !word(put, &key[start..i], plain) || !put(&key[i..=i]) {
                    return;
                }
                (start, plain) = (i + 1, true);
            }
            _ => plain = false,
        }
    }
    word(put, &key[start..], plain);
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
        assert_eq!(Fold::Digits.apply(&b"ab:".repeat(100)).len(), NAME_MAX);
        assert_eq!(Fold::Exact.apply(&[b'x'; 300]).len(), NAME_MAX);
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
    fn the_hash_is_the_names() {
        for rule in [Fold::Digits, Fold::Prefix(1), Fold::Prefix(3), Fold::Exact] {
            for key in [&b"invoice:42:pdf"[..], b"cron", b"", &[0xff; 200], &b"ab:".repeat(100)] {
                let name = rule.apply(key);
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for &b in &name {
                    h ^= u64::from(b);
                    h = h.wrapping_mul(0x0000_0100_0000_01b3);
                }
                assert_eq!(rule.hash(key), h | 1, "{rule:?} {key:?}");
            }
        }
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
