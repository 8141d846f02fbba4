//! Names of the auxiliary keys kept beside a lock (its waiting queue, the first
//! waiter's patience, the fencing counter), chosen so that in Redis Cluster they
//! hash to the lock key's slot.
//!
//! Cluster hashes only the part between the first `{` and the next `}` when that
//! part is non-empty (the hash tag). A key that has a tag keeps it when a suffix
//! is appended; a key without one gets itself as the tag: `{key}suffix`.

/// A lock's key and the keys its scripts keep beside it, in the order the scripts
/// take them (`KEYS[1..4]`).
#[derive(Debug)]
pub struct LockKeys {
    /// The lock itself: holds the holder's token, with the lease as its expiry.
    pub lock: Vec<u8>,
    /// The waiting queue.
    pub queue: Vec<u8>,
    /// How long the queue's first waiter still lets short holds pass it over.
    pub patience: Vec<u8>,
    /// The fencing counter. It never expires: numbers must keep increasing.
    pub fence: Vec<u8>,
}

impl LockKeys {
    /// The keys for the (prefixed) lock key `lock`.
    pub fn new(lock: Vec<u8>) -> Self {
        LockKeys {
            queue: aux_key(&lock, b":queue"),
            patience: aux_key(&lock, b":patience"),
            fence: aux_key(&lock, b":fence"),
            lock,
        }
    }

    /// All four, as a script's `KEYS`.
    pub fn all(&self) -> [&[u8]; 4] {
        [&self.lock, &self.queue, &self.patience, &self.fence]
    }
}

/// The auxiliary key `suffix` of the lock key `key`.
pub fn aux_key(key: &[u8], suffix: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + suffix.len() + 2);
    if has_hash_tag(key) || key.contains(&b'}') {
        // Either the tag carries over, or (a `}` with no valid tag before it) no
        // wrapping can reproduce the key's slot; the name is still unique.
        out.extend_from_slice(key);
    } else {
        out.push(b'{');
        out.extend_from_slice(key);
        out.push(b'}');
    }
    out.extend_from_slice(suffix);
    out
}

/// Whether Cluster would hash `key` by a tag rather than whole.
fn has_hash_tag(key: &[u8]) -> bool {
    match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) => len > 0,
            None => false,
        },
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes Cluster hashes for `key`.
    fn hashed(key: &[u8]) -> &[u8] {
        if let Some(open) = key.iter().position(|&b| b == b'{') {
            if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
                if len > 0 {
                    return &key[open + 1..open + 1 + len];
                }
            }
        }
        key
    }

    #[test]
    fn auxiliary_keys_share_the_lock_keys_slot() {
        for key in [&b"orders:42"[..], b"a{b}c", b"{user1}:x", b"a{b", b"{", b"x\0y"] {
            let aux = aux_key(key, b":queue");
            assert_eq!(hashed(&aux), hashed(key), "{:?}", String::from_utf8_lossy(&aux));
            assert!(aux.ends_with(b":queue"));
        }
        assert_eq!(aux_key(b"orders:42", b":queue"), b"{orders:42}:queue");
        assert_eq!(aux_key(b"a{b}c", b":queue"), b"a{b}c:queue");
    }

    #[test]
    fn keys_whose_slot_cannot_be_shared_still_get_a_distinct_name() {
        assert_eq!(aux_key(b"a}b", b":queue"), b"a}b:queue");
        assert_eq!(aux_key(b"{}x", b":queue"), b"{}x:queue");
    }
}
