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
    Ok(())
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

    /// A caller's token is any 1 to 256 bytes: one that differs from another by a
    /// byte is another token, whatever it looks like (a lock's value is always
    /// exactly its holder's token).
    #[test]
    fn any_shape_of_token_may_be_chosen() {
        assert!(check_chosen("token", b"0123456789abcdef0123456789abcdef!").is_ok());
        assert!(check_chosen("token", b"0123456789abcdef0123456789abcdef").is_ok());
        assert!(check_chosen("token", b"job!").is_ok());
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
