//! A frame that arrives in many reads, checked as it comes: where it ends, and that
//! it keeps to `reply`'s limits before it is whole (a huge declared length, nesting
//! without end, a line that never ends are refused as their bytes come).

use crate::net::reply::{
    declared, number, protocol, refused, MAX_BULK, MAX_DEPTH, MAX_LINE, MAX_VALUES,
};
use redis::RedisResult;

/// How far a frame still arriving has been checked, so that each read is checked
/// only for what it brought: a reply that comes in many pieces costs one pass over
/// it, not one per piece, and allocates nothing. It finds where values end and
/// holds them to the limits (`MAX_LINE`, `MAX_BULK`, `MAX_VALUES`, `MAX_DEPTH`, the
/// types and lengths `parse` takes); `parse` reads the frame once it is whole.
pub(super) struct Scan {
    /// Where the next header starts, from the frame's first byte.
    at: usize,
    /// Values begun so far, every level counted.
    values: usize,
    /// How many values each open aggregate still owes, outermost first; `owed[0]`
    /// is the frame itself (one value).
    owed: [usize; MAX_DEPTH + 1],
    /// How many of `owed` are open.
    open: usize,
    /// How far past `at` the search for the end of a line got (a line may come in
    /// many reads too).
    searched: usize,
    /// The longest bulk string accepted: the connection's `max_reply`.
    max_bulk: i64,
}

impl Scan {
    /// A scan of a frame not begun yet; `max_bulk` is the connection's `max_reply`.
    pub(super) fn new(max_bulk: usize) -> Scan {
        let mut owed = [0; MAX_DEPTH + 1];
        owed[0] = 1;
        Scan {
            at: 0,
            values: 0,
            owed,
            open: 1,
            searched: 0,
            max_bulk: i64::try_from(max_bulk).unwrap_or(MAX_BULK).min(MAX_BULK),
        }
    }

    /// Whether `data` (the frame's bytes so far, from its first) holds the whole frame.
    pub(super) fn whole(&mut self, data: &[u8]) -> RedisResult<bool> {
        while self.open > 0 {
            let rest = &data[self.at..];
            let window = &rest[..rest.len().min(MAX_LINE + 2)];
            // From the last byte searched: it may be the CR of a CRLF split between reads.
            let from = self.searched.saturating_sub(1).min(window.len());
            let Some(eol) = window[from..].windows(2).position(|w| w == b"\r\n").map(|i| from + i)
            else {
                if window.len() == MAX_LINE + 2 {
                    return Err(refused(format!(
                        "a line of at most {MAX_LINE} bytes, got a longer one"
                    )));
                }
                self.searched = window.len();
                return Ok(false);
            };
            let (kind, line) = (rest[0], rest.get(1..eol).unwrap_or_default());
            let mut end = eol + 2;
            let mut opens = 0;
            match kind {
                b'+' | b'-' | b':' | b'_' | b'#' | b',' | b'(' => {}
                b'$' | b'=' | b'!' => match number(line)? {
                    -1 => {}
                    n if !(0..=self.max_bulk).contains(&n) => {
                        return Err(protocol(
                            &format!(
                                "a bulk length of at most max_reply ({} bytes)",
                                self.max_bulk
                            ),
                            line,
                        ))
                    }
                    n => {
                        end += n as usize + 2;
                        if rest.len() < end {
                            return Ok(false);
                        }
                    }
                },
                b'*' | b'~' | b'%' | b'>' | b'|' => {
                    let n = number(line)?;
                    let null = (kind == b'*' && n == -1) || (kind == b'~' && line == b"-1");
                    if !null {
                        opens = declared(
                            n,
                            if matches!(kind, b'%' | b'|') { 2 } else { 1 },
                            self.open - 1,
                            line,
                        )?;
                        // An attribute is followed by the value it annotates, at its depth.
                        opens += usize::from(kind == b'|');
                    }
                }
                _ => return Err(protocol("a RESP reply", &rest[..eol])),
            }
            self.at += end;
            self.searched = 0;
            self.values += 1;
            if self.values > MAX_VALUES {
                return Err(refused(format!("a reply of at most {MAX_VALUES} values, got more")));
            }
            if opens > 0 {
                self.owed[self.open] = opens;
                self.open += 1;
                continue;
            }
            // A value ended: so does each aggregate it was the last of.
            while self.open > 0 {
                self.owed[self.open - 1] -= 1;
                if self.owed[self.open - 1] > 0 {
                    break;
                }
                self.open -= 1;
            }
        }
        Ok(true)
    }
}

/// The generator the socket-level property test (`tests/hostile_replies.rs`) uses too.
#[cfg(test)]
#[path = "../../tests/support/resp_gen.rs"]
mod resp_gen;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::reply::parse;

    /// Feeds `data` to a fresh `Scan` in pieces of random sizes, as reads would bring it.
    fn scanned(data: &[u8], rng: &mut rand::rngs::StdRng) -> (RedisResult<bool>, usize) {
        use rand::Rng;
        let mut scan = Scan::new(MAX_BULK as usize);
        let mut have = 0;
        loop {
            have = (have + rng.random_range(1..64)).min(data.len());
            match scan.whole(&data[..have]) {
                Ok(false) if have < data.len() => continue,
                other => return (other, scan.at),
            }
        }
    }

    /// The scan that waits for a frame and the parse that reads it agree on every
    /// generated input: where a frame ends, and that a prefix of one is not whole.
    /// (`tests/hostile_replies.rs` sends the same inputs over sockets.)
    #[test]
    fn the_scan_and_the_parse_agree_on_generated_replies() {
        use rand::SeedableRng;
        let cases: u64 = std::env::var("REDIS_LOCK_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20_000);
        let seed = 0x5eed_5ca7;
        for i in 0..cases {
            let mut rng =
                rand::rngs::StdRng::seed_from_u64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let case = resp_gen::case(&mut rng);
            let data = &case.bytes;
            let what = || {
                format!(
                    "seed {seed:#x}, case {i}, {}: {:?}",
                    case.how,
                    String::from_utf8_lossy(&data[..data.len().min(100)])
                )
            };
            let parsed = std::panic::catch_unwind(|| parse(data, 0))
                .unwrap_or_else(|_| panic!("parse panicked: {}", what()));
            let (whole, at) = scanned(data, &mut rng);
            let (fresh, fresh_at) = {
                let mut scan = Scan::new(MAX_BULK as usize);
                (scan.whole(data), scan.at)
            };
            assert_eq!(
                whole.as_ref().ok(),
                fresh.as_ref().ok(),
                "a scan in pieces and one in one go differ: {}",
                what()
            );
            match (&parsed, &whole) {
                (Ok(Some((_, used))), Ok(true)) => {
                    assert_eq!((*used, at, fresh_at), (at, at, at), "{}", what())
                }
                (Ok(Some(_)), other) => panic!("parsed whole, scanned {other:?}: {}", what()),
                (Ok(None), Ok(true)) => panic!("scanned whole, parse waits for more: {}", what()),
                _ => {}
            }
            if case.valid {
                assert!(
                    matches!(parsed, Ok(Some((_, used))) if used == data.len()),
                    "{:?}: {}",
                    parsed.err(),
                    what()
                );
            }
            if case.prefix {
                assert!(matches!(parsed, Ok(None)), "a prefix parsed as {parsed:?}: {}", what());
                assert!(matches!(whole, Ok(false)), "a prefix scanned as {whole:?}: {}", what());
            }
        }
    }

    #[test]
    fn the_scan_holds_replies_to_the_limits() {
        let refused = |data: &[u8]| Scan::new(MAX_BULK as usize).whole(data).is_err();
        assert!(refused(&[b'+'; MAX_LINE + 2]));
        assert!(!refused(&[b'+'; MAX_LINE + 1]));
        assert!(refused(format!("${}\r\n", MAX_BULK + 1).as_bytes()));
        assert!(refused(format!("*{}\r\n", MAX_VALUES + 1).as_bytes()));
        assert!(refused(format!("%{}\r\n", MAX_VALUES + 1).as_bytes()));
        assert!(refused("*1\r\n".repeat(MAX_DEPTH + 1).as_bytes()));
        assert!(!refused("*1\r\n".repeat(MAX_DEPTH).as_bytes()));
        let nested = format!("*2\r\n*{MAX_VALUES}\r\n") + &":1\r\n".repeat(MAX_VALUES);
        assert!(refused(nested.as_bytes()));
        for bad in
            [&b"*-2\r\n"[..], b"$-2\r\n", b"~-01\r\n", b">-1\r\n", b"*x\r\n", b"?\r\n", b"\r\n"]
        {
            assert!(refused(bad), "{}", String::from_utf8_lossy(bad));
        }
        let mut scan = Scan::new(MAX_BULK as usize);
        assert!(!scan.whole(b"*2\r\n$5\r\nab").unwrap());
        assert!(!scan.whole(b"*2\r\n$5\r\nabcde\r\n").unwrap());
        assert!(scan.whole(b"*2\r\n$5\r\nabcde\r\n|1\r\n+k\r\n+v\r\n:3\r\n").unwrap());
        assert_eq!(scan.at, 31);
        // A line, and the CRLF that ends it, split between reads.
        let mut scan = Scan::new(MAX_BULK as usize);
        for have in 1..b"+abc\r\n".len() {
            assert!(!scan.whole(&b"+abc\r\n"[..have]).unwrap());
        }
        assert!(scan.whole(b"+abc\r\n").unwrap());
    }
}
