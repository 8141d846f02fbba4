//! Lock tokens: 128 bits from the OS CSPRNG, as 32 lowercase hex characters.
//!
//! The OS generator is used on purpose rather than a user-space one: a forked
//! child would inherit a user-space generator's state and repeat its parent's
//! tokens, which would let one process release the other's lock.

use crate::error::{LockError, Result};
use rand::rngs::OsRng;
use rand::TryRngCore;

/// Length in bytes of a textual token.
pub const TOKEN_LEN: usize = 32;

/// Returns a fresh random token.
pub fn generate() -> Result<String> {
    let mut raw = [0u8; 16];
    OsRng
        .try_fill_bytes(&mut raw)
        .map_err(|e| LockError::Random(e.to_string()))?;
    Ok(to_hex(&raw))
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0x0f) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn tokens_are_32_hex_chars() {
        let t = generate().unwrap();
        assert_eq!(t.len(), TOKEN_LEN);
        assert!(t.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn tokens_do_not_repeat() {
        let set: HashSet<String> = (0..10_000).map(|_| generate().unwrap()).collect();
        assert_eq!(set.len(), 10_000);
    }

    #[test]
    fn hex_encoding_is_exact() {
        assert_eq!(to_hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
    }
}
