//! Generated replies, valid and hostile, for the reply reader's property tests:
//! `tests/hostile_replies.rs` sends them over real sockets, and `src/net/wire.rs`'s
//! unit tests hand them to the parser directly (through `#[path]`, so that both
//! draw from one generator). Every case comes from a seeded `StdRng`, so a failure
//! is replayed from its seed.

#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, RngCore};

/// One generated input and what it is.
pub struct Case {
    pub bytes: Vec<u8>,
    /// What was done to make it.
    pub how: &'static str,
    /// Whether `bytes` is one whole, unmutated reply (it must be read as a value).
    pub valid: bool,
    /// Whether `bytes` is a strict prefix of a valid reply (it must never be a value).
    pub prefix: bool,
    /// Whether the value holds only RESP2 types (redis-rs's parser reads it too).
    pub resp2: bool,
}

/// Numbers put in place of a length: huge, negative, garbage, off by one.
const BAD_LENGTHS: &[&[u8]] = &[
    b"9999999999",
    b"2147483647",
    b"2147483648",
    b"4294967296",
    b"9223372036854775807",
    b"9223372036854775808",
    b"18446744073709551615",
    b"99999999999999999999999",
    b"536870912",
    b"536870913",
    b"1048577",
    b"-2",
    b"-3",
    b"-0",
    b"-01",
    b"-2147483648",
    b"-9223372036854775808",
    b"",
    b"x",
    b" 1",
    b"1 ",
    b"+1",
    b"0x10",
    b"1e3",
    b"1.0",
    b"\xd9\xa1",
    b"\0",
    b"00000000000000000000000000001",
];

/// Type bytes of RESP2 and RESP3, and some that are neither.
const TYPES: &[u8] = b"+-:$*_#,(!=%~>|?\r\n\0 a";

/// A printable, CRLF-free text of up to `max` bytes.
fn text(rng: &mut StdRng, max: usize) -> Vec<u8> {
    let n = rng.random_range(0..=max);
    (0..n).map(|_| rng.random_range(b' '..=b'~')).collect()
}

/// Any bytes (CR and LF included), of up to `max`; now and then far more.
fn blob(rng: &mut StdRng, max: usize) -> Vec<u8> {
    let n = if rng.random_ratio(1, 40) {
        rng.random_range(0..20_000)
    } else {
        rng.random_range(0..=max)
    };
    blob_of(rng, n)
}

fn blob_of(rng: &mut StdRng, n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    rng.fill_bytes(&mut b);
    b
}

fn header(out: &mut Vec<u8>, kind: u8, n: impl std::fmt::Display) {
    out.push(kind);
    out.extend_from_slice(n.to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Writes one valid value; `resp3`: RESP3's types may appear. Returns whether only
/// RESP2 types were written.
pub fn value(rng: &mut StdRng, depth: usize, resp3: bool, out: &mut Vec<u8>) -> bool {
    let kinds = if resp3 { 17 } else { 9 };
    // Past a budget, only scalars: a reply stays within a few hundred KiB.
    let aggregate_ok = depth < 4 && out.len() < 256 * 1024;
    loop {
        let k = rng.random_range(0..kinds);
        if !aggregate_ok && matches!(k, 6..=8 | 13..=16) {
            continue;
        }
        return match k {
            0 => {
                out.push(b'+');
                out.extend(if rng.random_bool(0.3) { b"OK".to_vec() } else { text(rng, 20) });
                out.extend_from_slice(b"\r\n");
                true
            }
            1 => {
                let codes: &[&[u8]] = &[
                    b"ERR",
                    b"NOSCRIPT",
                    b"MOVED 3999 127.0.0.1:6381",
                    b"ASK 1 127.0.0.1:1",
                    b"READONLY",
                    b"BUSY",
                    b"WRONGTYPE",
                    b"NOPERM",
                ];
                out.push(b'-');
                out.extend_from_slice(codes[rng.random_range(0..codes.len())]);
                out.push(b' ');
                out.extend(text(rng, 30));
                out.extend_from_slice(b"\r\n");
                true
            }
            2 => {
                let n: i64 =
                    if rng.random_bool(0.5) { rng.random_range(-5..100) } else { rng.random() };
                header(out, b':', n);
                true
            }
            3 | 4 => {
                let b = if out.len() < 256 * 1024 { blob(rng, 40) } else { blob_of(rng, 10) };
                header(out, b'$', b.len());
                out.extend_from_slice(&b);
                out.extend_from_slice(b"\r\n");
                true
            }
            5 => {
                out.extend_from_slice(if rng.random_bool(0.5) { b"$-1\r\n" } else { b"*-1\r\n" });
                true
            }
            6..=8 => {
                let n = if depth == 0 && rng.random_ratio(1, 50) {
                    rng.random_range(0..3000)
                } else {
                    rng.random_range(0..5)
                };
                header(out, b'*', n);
                let mut plain = true;
                for _ in 0..n {
                    plain &= value(rng, depth + 1, resp3, out);
                }
                plain
            }
            9 => {
                out.extend_from_slice(match rng.random_range(0..4) {
                    0 => &b"_\r\n"[..],
                    1 => b"#t\r\n",
                    2 => b"#f\r\n",
                    _ => b"~-1\r\n",
                });
                false
            }
            10 => {
                let d: f64 = rng.random_range(-1e9..1e9);
                let s = match rng.random_range(0..4) {
                    0 => "inf".to_string(),
                    1 => "-inf".to_string(),
                    2 => "nan".to_string(),
                    _ => d.to_string(),
                };
                header(out, b',', s);
                false
            }
            11 => {
                let digits: String = (0..rng.random_range(1..40))
                    .map(|_| char::from(rng.random_range(b'0'..=b'9')))
                    .collect();
                header(out, b'(', digits);
                false
            }
            12 => {
                let (kind, head): (u8, &[u8]) =
                    if rng.random_bool(0.5) { (b'=', b"txt:") } else { (b'!', b"ERR ") };
                let body = [head, &text(rng, 30)[..]].concat();
                header(out, kind, body.len());
                out.extend_from_slice(&body);
                out.extend_from_slice(b"\r\n");
                false
            }
            13..=16 => {
                let n = rng.random_range(0..4);
                let (kind, per) = match k {
                    13 => (b'%', 2),
                    14 => (b'~', 1),
                    15 => (b'>', 1),
                    _ => (b'|', 2),
                };
                header(out, kind, n);
                for _ in 0..n * per {
                    value(rng, depth + 1, resp3, out);
                }
                if kind == b'|' {
                    // An attribute is followed by the value it annotates.
                    value(rng, depth + 1, resp3, out);
                }
                false
            }
            _ => unreachable!(),
        };
    }
}

/// Where each header line's number starts and ends (for length mutations).
fn numbers(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if b"*$%~>|=!:".contains(&bytes[i]) && (i == 0 || bytes[i - 1] == b'\n') {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && bytes[end] != b'\r' {
                end += 1;
            }
            found.push((start, end));
            i = end;
        } else {
            i += 1;
        }
    }
    found
}

/// A nesting `levels` deep of one-element aggregates of one kind, then maybe a value.
fn deep(rng: &mut StdRng, out: &mut Vec<u8>) {
    let levels = if rng.random_bool(0.2) {
        rng.random_range(50..100_000)
    } else {
        rng.random_range(50..200)
    };
    let opener: &[u8] =
        [&b"*1\r\n"[..], b">1\r\n", b"~1\r\n", b"|0\r\n", b"%1\r\n:1\r\n"][rng.random_range(0..5)];
    for _ in 0..levels {
        out.extend_from_slice(opener);
    }
    if rng.random_bool(0.5) {
        out.extend_from_slice(b":1\r\n");
    }
}

/// One input: a valid reply, one mutated, or bytes that never were one.
pub fn case(rng: &mut StdRng) -> Case {
    let resp3 = rng.random_bool(0.5);
    let mut bytes = Vec::new();
    let resp2 = value(rng, 0, resp3, &mut bytes);
    let mut c = Case { bytes, how: "valid", valid: true, prefix: false, resp2 };
    match rng.random_range(0..20) {
        0..=3 => {}
        4 | 5 => {
            let at = rng.random_range(0..c.bytes.len());
            c.bytes.truncate(at);
            (c.how, c.valid, c.prefix) = ("truncated", false, true);
        }
        6 | 7 => {
            for _ in 0..rng.random_range(1..5) {
                let at = rng.random_range(0..c.bytes.len());
                c.bytes[at] ^= 1 << rng.random_range(0..8);
            }
            (c.how, c.valid) = ("bit flips", false);
        }
        8 | 9 => {
            let by = BAD_LENGTHS[rng.random_range(0..BAD_LENGTHS.len())];
            let spots = numbers(&c.bytes);
            if spots.is_empty() {
                // A simple reply: an aggregate's header goes before it instead.
                let kind = b"*$%~>|=!"[rng.random_range(0..8)];
                c.bytes.splice(0..0, [kind, b'0', b'\r', b'\n']);
                c.bytes.splice(1..2, by.iter().copied());
                c.how = "length replaced";
                c.valid = false;
                return c;
            }
            let (start, end) = spots[rng.random_range(0..spots.len())];
            c.bytes.splice(start..end, by.iter().copied());
            if rng.random_bool(0.3) {
                c.bytes.truncate(rng.random_range(start..=c.bytes.len()));
            }
            (c.how, c.valid) = ("length replaced", false);
        }
        10 => {
            let mut other = Vec::new();
            value(rng, 0, true, &mut other);
            let from = rng.random_range(0..other.len());
            let to = rng.random_range(from..=other.len());
            let at = rng.random_range(0..=c.bytes.len());
            let cut = rng.random_range(at..=c.bytes.len().min(at + 8));
            c.bytes.splice(at..cut, other[from..to].iter().copied());
            (c.how, c.valid) = ("spliced", false);
        }
        11 => {
            c.bytes.clear();
            deep(rng, &mut c.bytes);
            (c.how, c.valid) = ("deep", false);
        }
        12 => {
            // A header's type byte replaced.
            let spots: Vec<usize> =
                (0..c.bytes.len()).filter(|&i| i == 0 || c.bytes[i - 1] == b'\n').collect();
            let at = spots[rng.random_range(0..spots.len())];
            c.bytes[at] = TYPES[rng.random_range(0..TYPES.len())];
            (c.how, c.valid) = ("type replaced", false);
        }
        13 => {
            // CRLF broken: a CR or LF dropped or doubled, or a bare LF.
            let spots: Vec<usize> = (0..c.bytes.len())
                .filter(|&i| c.bytes[i] == b'\r' || c.bytes[i] == b'\n')
                .collect();
            if let Some(&at) = spots.get(rng.random_range(0..spots.len().max(1))) {
                match rng.random_range(0..3) {
                    0 => {
                        c.bytes.remove(at);
                    }
                    1 => c.bytes.insert(at, c.bytes[at]),
                    _ => c.bytes[at] = b'x',
                }
            }
            (c.how, c.valid) = ("CRLF broken", false);
        }
        14 => {
            // A line that never ends.
            c.bytes.clear();
            c.bytes.push(TYPES[rng.random_range(0..TYPES.len())]);
            let n = if rng.random_bool(0.3) {
                rng.random_range(60_000..200_000)
            } else {
                rng.random_range(0..5000)
            };
            let start = c.bytes.len();
            c.bytes.resize(start + n, b'1');
            for _ in 0..n / 10 {
                let at = rng.random_range(start..c.bytes.len());
                c.bytes[at] = b'\r';
            }
            (c.how, c.valid) = ("endless line", false);
        }
        15 => {
            // A huge declared aggregate followed by what fits its start.
            c.bytes.clear();
            let kind = b"*%~>|"[rng.random_range(0..5)];
            let n = [2_147_483_647u64, 1 << 20, (1 << 20) + 1, 100_000_000, u64::MAX / 4]
                [rng.random_range(0..5)];
            header(&mut c.bytes, kind, n);
            for _ in 0..rng.random_range(0..2000) {
                c.bytes.extend_from_slice(b":1\r\n");
            }
            (c.how, c.valid) = ("huge aggregate", false);
        }
        16 => {
            // A huge declared bulk, with a little of it.
            c.bytes.clear();
            let kind = b"$=!"[rng.random_range(0..3)];
            let n =
                [104_857_600u64, 536_870_912, 536_870_913, 9_999_999_999][rng.random_range(0..4)];
            header(&mut c.bytes, kind, n);
            c.bytes.extend(blob(rng, 3000));
            (c.how, c.valid) = ("huge bulk", false);
        }
        17 => {
            c.bytes = blob(rng, 200);
            (c.how, c.valid) = ("random bytes", false);
        }
        18 => {
            // Random bytes drawn from RESP's own alphabet.
            let alphabet = b"+-:$*_#,(!=%~>|\r\n\r\n0123456789-";
            let n = rng.random_range(0..300);
            c.bytes = (0..n).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
            (c.how, c.valid) = ("RESP alphabet", false);
        }
        _ => {
            // Several replies back to back (pipelined); the first is read.
            let resp3 = rng.random_bool(0.5);
            for _ in 0..rng.random_range(1..4) {
                value(rng, 0, resp3, &mut c.bytes);
            }
            (c.how, c.valid) = ("several", false);
        }
    }
    c
}
