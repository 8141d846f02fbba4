//! Names of the auxiliary keys kept beside a lock (its waiting queue, the first
//! waiter's patience, the fencing counter, the readers of a shared hold, who holds
//! it), chosen so that in Redis Cluster they
//! hash to the lock key's slot.
//!
//! Cluster hashes only the part between the first `{` and the next `}` when that
//! part is non-empty (the hash tag). A key that has a tag keeps it when a suffix
//! is appended; a key without one gets itself as the tag: `{key}suffix`. A key
//! that cannot be wrapped (it has a `}` but no tag, like `a}b`, or an empty tag)
//! gets a short tag that hashes to its slot: `{T}a}b:queue}`. The closing `}` keeps
//! those names apart from the names derived from tagged keys, which never end in one.

/// A lock's key and the keys its scripts keep beside it, in the order the scripts
/// take them (`KEYS[1..6]`).
#[derive(Debug, Clone)]
pub struct LockKeys {
    /// The lock itself: holds the holder's token, with the lease as its expiry.
    pub lock: Vec<u8>,
    /// The waiting queue.
    pub queue: Vec<u8>,
    /// How long the queue's first waiter still lets short holds pass it over.
    pub patience: Vec<u8>,
    /// The fencing counter. It never expires: numbers must keep increasing.
    pub fence: Vec<u8>,
    /// The readers of a shared hold, with when each one's lease ends.
    pub readers: Vec<u8>,
    /// Who holds it and who waits (`owner_info`): a hash of token to `owner::record`.
    pub owner: Vec<u8>,
    /// A hash of `lock`, to tell cheaply whether two objects name the same lock.
    pub id: u64,
}

impl LockKeys {
    /// The keys for the (prefixed) lock key `lock`.
    pub fn new(lock: Vec<u8>) -> Self {
        LockKeys {
            queue: aux_key(&lock, b":queue"),
            patience: aux_key(&lock, b":patience"),
            fence: aux_key(&lock, b":fence"),
            readers: aux_key(&lock, HOLDERS),
            owner: aux_key(&lock, b":owner"),
            id: fnv1a(&lock),
            lock,
        }
    }

    /// All six, as a script's `KEYS`.
    pub fn all(&self) -> [&[u8]; 6] {
        [&self.lock, &self.queue, &self.patience, &self.fence, &self.readers, &self.owner]
    }
}

/// The suffixes of the auxiliary keys.
const SUFFIXES: [&[u8]; 5] = [b":queue", b":patience", b":fence", b":readers", b":owner"];

/// Whether `key` is the auxiliary key of some lock key (listings leave those out).
/// A lock named like one (`{a}:queue`) is taken for one: names of that shape are
/// the library's.
pub fn is_aux(key: &[u8]) -> bool {
    aux_of(key).is_some()
}

/// The lock key and suffix whose auxiliary key `key` is, if it is one (`is_aux`).
pub fn aux_of(key: &[u8]) -> Option<(&[u8], &'static [u8])> {
    SUFFIXES.iter().find_map(|&suffix| {
        let candidates: [Option<&[u8]>; 3] = [
            // `key` wrapped: `{key}suffix`.
            key.strip_suffix(suffix)
                .and_then(|k| k.strip_prefix(b"{"))
                .and_then(|k| k.strip_suffix(b"}")),
            // A tagged key: `key suffix`.
            key.strip_suffix(suffix),
            // A borrowed tag: `{tag}key suffix}`.
            key.strip_suffix(b"}").and_then(|k| k.strip_suffix(suffix)).and_then(|k| {
                let close = k.iter().position(|&b| b == b'}')?;
                k.strip_prefix(b"{").map(|_| &k[close + 1..])
            }),
        ];
        candidates
            .into_iter()
            .flatten()
            .find(|base| !base.is_empty() && aux_key(base, suffix) == key)
            .map(|base| (base, suffix))
    })
}

/// The suffix of the key that holds a semaphore's holders (a lock's readers).
pub const HOLDERS: &[u8] = b":readers";

/// The auxiliary key `suffix` of the lock key `key`.
pub fn aux_key(key: &[u8], suffix: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + suffix.len() + 8);
    if has_hash_tag(key) {
        out.extend_from_slice(key);
        out.extend_from_slice(suffix);
    } else if !key.contains(&b'}') {
        // No `}` in it: `{key}` hashes exactly the key.
        out.push(b'{');
        out.extend_from_slice(key);
        out.push(b'}');
        out.extend_from_slice(suffix);
    } else {
        // Wrapping would change what is hashed: borrow a tag with the same slot.
        out.push(b'{');
        out.extend_from_slice(tag_for_slot(slot(key)).as_bytes());
        out.push(b'}');
        out.extend_from_slice(key);
        out.extend_from_slice(suffix);
        out.push(b'}');
    }
    out
}

/// FNV-1a, 64 bits: a few instructions per byte, and good enough to tell lock names apart
/// for a heuristic (a collision only costs a missed optimisation).
fn fnv1a(data: &[u8]) -> u64 {
    data.iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The number of hash slots in Redis Cluster.
pub const SLOTS: u16 = 16384;

/// The Cluster hash slot of `key`: CRC16 (XMODEM) of its hash tag, or of the whole
/// key when it has none, modulo 16384.
pub fn slot(key: &[u8]) -> u16 {
    crc16(hashed(key)) % SLOTS
}

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

/// CRC16-CCITT as Cluster uses it (XMODEM: polynomial 0x1021, initial value 0).
fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
        }
    }
    crc
}

/// A hash tag of `slot` (see `tag_for_slot`), remembered once found.
pub fn slot_tag(slot: u16) -> String {
    static FOUND: std::sync::Mutex<Vec<(u16, String)>> = std::sync::Mutex::new(Vec::new());
    let mut found = FOUND.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, tag)) = found.iter().find(|(s, _)| *s == slot) {
        return tag.clone();
    }
    let tag = tag_for_slot(slot);
    if found.len() >= 1024 {
        found.clear();
    }
    found.push((slot, tag.clone()));
    tag
}

/// The first lowercase-hex number whose text hashes to `slot`: about 16 thousand
/// tries on average, and every slot has one below 0x4cd80 (five digits).
fn tag_for_slot(slot: u16) -> String {
    (0u32..)
        .map(|n| format!("{n:x}"))
        .find(|t| crc16(t.as_bytes()) % SLOTS == slot)
        .unwrap_or_default()
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

    #[test]
    fn auxiliary_keys_share_the_lock_keys_slot() {
        for key in
            [&b"orders:42"[..], b"a{b}c", b"{user1}:x", b"a{b", b"{", b"x\0y", b"a}b", b"{}x", b"}"]
        {
            let aux = aux_key(key, b":queue");
            assert_eq!(slot(&aux), slot(key), "{:?}", String::from_utf8_lossy(&aux));
            assert!(aux.windows(6).any(|w| w == b":queue"));
        }
        assert_eq!(aux_key(b"orders:42", b":queue"), b"{orders:42}:queue");
        assert_eq!(aux_key(b"a{b}c", b":queue"), b"a{b}c:queue");
        assert_eq!(aux_key(b"a{b", b":queue"), b"{a{b}:queue");
    }

    #[test]
    fn keys_that_cannot_be_wrapped_borrow_a_tag_and_stay_distinct() {
        let odd = aux_key(b"a}b", b":queue");
        assert!(
            odd.starts_with(b"{") && odd.ends_with(b"a}b:queue}"),
            "{}",
            String::from_utf8_lossy(&odd)
        );
        // The tagged key that the odd name starts with has names of its own.
        let tagged = odd[..odd.len() - ":queue}".len()].to_vec();
        assert_ne!(aux_key(&tagged, b":queue"), odd);
        assert_ne!(aux_key(b"{}x", b":queue"), aux_key(b"{}x", b":fence"));
    }

    #[test]
    fn auxiliary_keys_are_told_from_lock_keys() {
        for key in [&b"orders:42"[..], b"a{b}c", b"{user1}:x", b"a{b", b"a}b", b"{}x", b"}"] {
            assert!(!is_aux(key), "{:?}", String::from_utf8_lossy(key));
            for suffix in SUFFIXES {
                let aux = aux_key(key, suffix);
                assert!(is_aux(&aux), "{:?}", String::from_utf8_lossy(&aux));
            }
        }
        assert!(!is_aux(b"orders:queue"));
        assert!(!is_aux(b"{x}:queued"));
    }

    #[test]
    fn slots_match_redis() {
        // Reference values from the Cluster specification and CLUSTER KEYSLOT.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"bar"), 5061);
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        // And from CLUSTER KEYSLOT on a redis-server 7.
        assert_eq!(slot(b"foo{}{bar}"), 8363);
        assert_eq!(slot(b"foo{{bar}}zap"), 4015);
        assert_eq!(slot(b"a}b"), 7866);
        assert_eq!(slot(b"{}x"), 10595);
        assert_eq!(slot(b"foo{bar}{zap}"), slot(b"bar"));
    }

    #[test]
    fn every_slot_has_a_short_tag() {
        for s in (0..SLOTS).step_by(97).chain([0, SLOTS - 1]) {
            let t = tag_for_slot(s);
            assert!(!t.is_empty() && t.len() <= 5, "slot {s}: {t}");
            assert_eq!(slot(format!("{{{t}}}x").as_bytes()), s);
        }
    }
}
