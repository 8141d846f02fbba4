//! Lock tokens: 128 bits from the OS CSPRNG, as 32 lowercase hex characters, or
//! any binary string of 1 to 256 bytes that the caller chooses.
//!
//! The OS generator is used on purpose rather than a user-space one: a forked
//! child would inherit a user-space generator's state and repeat its parent's
//! tokens, which would let one process release the other's lock. Its bytes are
//! read ahead into a page the kernel wipes in a child, for the same reason.

use crate::error::{LockError, Result};
use crate::fork_wiped;
use rand::rngs::OsRng;
use rand::TryRngCore;

/// Length in bytes of a generated token.
pub const TOKEN_LEN: usize = 32;

/// The longest token a caller may choose, in bytes.
pub const MAX_CHOSEN: usize = 256;

/// A lock token: binary-safe, since callers may choose their own.
pub type Token = Vec<u8>;

/// Checks a token the caller chose (`label` names the argument in the message).
pub fn check_chosen(label: &str, token: &[u8]) -> Result<()> {
    if token.is_empty() || token.len() > MAX_CHOSEN {
        return Err(LockError::InvalidValue(format!(
            "{label} must be a string of 1 to {MAX_CHOSEN} bytes, {} bytes given",
            token.len()
        )));
    }
    if is_marked(token) {
        return Err(LockError::InvalidValue(format!(
            "{label} must not be 32 lowercase hex digits followed by '!': a lock's value of that shape is a generated token marked (its holder saw nobody queue)"
        )));
    }
    Ok(())
}

/// The byte that marks a token whose holder has seen nobody queue: a lock's value
/// that lets its release be the server's own compare-and-delete (`net::cad`).
pub const MARK: u8 = b'!';

/// Whether `token` has a generated token's shape (32 lowercase hex digits): only
/// such a token is ever written marked, so that no token a caller may choose is
/// a marked one (`is_marked`; `check_chosen` refuses one).
pub fn markable(token: &[u8]) -> bool {
    token.len() == 32 && token.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `token` marked: its bytes, then `MARK`.
pub fn mark(token: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(token.len() + 1);
    v.extend_from_slice(token);
    v.push(MARK);
    v
}

/// Whether `value` is a marked token.
pub fn is_marked(value: &[u8]) -> bool {
    value.len() == 33 && value[32] == MARK && markable(&value[..32])
}

/// A lock key's value as the token it stands for: a marked token without its mark.
pub fn unmarked(value: &[u8]) -> &[u8] {
    if is_marked(value) {
        &value[..32]
    } else {
        value
    }
}

/// Returns a fresh random token: 16 bytes of the OS generator's, read ahead a
/// page at a time into memory a forked child never inherits (`fork_wiped`).
pub fn generate() -> Result<Token> {
    let mut raw = [0u8; 16];
    fork_wiped::random(&mut raw, |buf| OsRng.try_fill_bytes(buf).map_err(|e| e.to_string()))
        .map_err(LockError::Random)?;
    Ok(to_hex(&raw))
}

fn to_hex(bytes: &[u8]) -> Token {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = vec![0u8; bytes.len() * 2];
    for (pair, &b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[(b >> 4) as usize];
        pair[1] = DIGITS[(b & 0x0f) as usize];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn only_a_generated_token_is_marked() {
        let t = b"0123456789abcdef0123456789abcdef";
        assert!(markable(t));
        assert!(is_marked(&mark(t)));
        assert_eq!(unmarked(&mark(t)), &t[..]);
        assert!(!markable(b"0123456789ABCDEF0123456789abcdef"));
        assert!(!is_marked(b"0123456789ABCDEF0123456789abcdef!"));
        assert!(!is_marked(t));
        assert_eq!(unmarked(b"mine!"), b"mine!");
    }

    #[test]
    fn a_marked_token_is_never_chosen() {
        assert!(check_chosen("token", b"0123456789abcdef0123456789abcdef!").is_err());
        assert!(check_chosen("token", b"0123456789abcdef0123456789abcdef").is_ok());
        assert!(check_chosen("token", b"0123456789abcdef0123456789abcde!").is_ok());
    }

    #[test]
    fn tokens_are_32_hex_chars() {
        let t = generate().unwrap();
        assert_eq!(t.len(), TOKEN_LEN);
        assert!(t.iter().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn tokens_do_not_repeat() {
        let set: HashSet<Token> = (0..10_000).map(|_| generate().unwrap()).collect();
        assert_eq!(set.len(), 10_000);
    }

    #[test]
    fn hex_encoding_is_exact() {
        assert_eq!(to_hex(&[0x00, 0x0f, 0xa5, 0xff]), b"000fa5ff");
    }

    #[test]
    fn chosen_tokens_are_1_to_256_bytes() {
        assert!(check_chosen("t", b"").is_err());
        assert!(check_chosen("t", &[0u8; 257]).is_err());
        assert!(check_chosen("t", b"\0:=x").is_ok());
        assert!(check_chosen("t", &[0xffu8; 256]).is_ok());
    }
}
