//! Replies read from RESP: one frame at the start of a buffer, parsed into redis-rs's
//! `Value`, held to limits that no broken or hostile server can talk past.
//!
//! RESP3's own types are read into the shapes RESP2 gives the same reply (a map as a
//! flat array, a double as its text, a Lua `false` as nil), so nothing above knows
//! which protocol a connection speaks; a push message is a `Value::Push`. An error
//! reply is handed to redis-rs's own parser, so that its kind (NOSCRIPT, MOVED, ASK,
//! READONLY…) is exactly what redis-rs gives. Nothing here panics on any input.

use redis::{ErrorKind, RedisError, RedisResult, Value};

/// Longest bulk string any reply may have: Redis's default `proto-max-bulk-len`. A
/// connection's own bound is `max_reply` (the setting), at most this.
pub(super) const MAX_BULK: i64 = crate::config::MAX_REPLY_LIMIT as i64;

/// Deepest nesting of aggregates accepted in a reply (no reply of ours nests more
/// than two deep); deeper is a protocol error, before any recursion goes further.
pub(super) const MAX_DEPTH: usize = 64;

/// Longest line (a header, a simple string or error) waited for: one still without
/// its CRLF past this is refused. Redis's own bound on an inline command.
pub(super) const MAX_LINE: usize = 64 * 1024;

/// Most values one reply may hold, all levels counted, and one aggregate may
/// declare: each costs a `Value` (56 bytes) however few bytes it came in.
pub(super) const MAX_VALUES: usize = 1 << 20;

/// Parses one reply (or RESP3 push message) at the start of `data`: the value and
/// how many bytes it took, or `None` when `data` does not hold all of it yet. RESP3's
/// own types are read into the shapes RESP2 gives the same reply (`parse_resp3`).
pub(super) fn parse(data: &[u8], depth: usize) -> RedisResult<Option<(Value, usize)>> {
    let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
    let (kind, line) = match data.split_first() {
        // A line that is only CRLF has no type: `_` refuses it.
        Some((&kind, _)) => (kind, data.get(1..eol).unwrap_or_default()),
        None => return Ok(None),
    };
    let after = eol + 2;
    let number = || -> RedisResult<i64> { number(line) };
    Ok(Some(match kind {
        b'+' => {
            let text = String::from_utf8_lossy(line);
            (if text == "OK" { Value::Okay } else { Value::SimpleString(text.into_owned()) }, after)
        }
        // redis-rs's parser reads the error line, so that its kind is redis-rs's.
        b'-' => (redis::parse_redis_value(&data[..after])?, after),
        b':' => (Value::Int(number()?), after),
        b'$' => match blob(data, line, after)? {
            None => return Ok(None),
            Some((bytes, end)) => {
                (bytes.map_or(Value::Nil, |b| Value::BulkString(b.to_vec())), end)
            }
        },
        b'*' => match number()? {
            -1 => (Value::Nil, after),
            n => match items(data, after, declared(n, 1, depth, line)?, depth)? {
                None => return Ok(None),
                Some((items, at)) => (Value::Array(items), at),
            },
        },
        _ => return parse_resp3(data, kind, line, after, depth),
    }))
}

/// RESP3's own types, after `parse` read the header line: a map or a set as a flat
/// array, a double, a big number or a verbatim string as a bulk string, null as nil,
/// and a boolean as Lua's conversion to RESP2 gives it (true is 1, false is nil). An
/// attribute is skipped; a push message is a `Value::Push`.
#[cold]
fn parse_resp3(
    data: &[u8],
    kind: u8,
    line: &[u8],
    after: usize,
    depth: usize,
) -> RedisResult<Option<(Value, usize)>> {
    // `n` values (`n` pairs when `per` is 2) after the header.
    let aggregate = |per: usize| -> RedisResult<Option<(Vec<Value>, usize)>> {
        items(data, after, declared(number(line)?, per, depth, line)?, depth)
    };
    Ok(Some(match kind {
        b'~' if line == b"-1" => (Value::Nil, after),
        b'~' | b'%' => match aggregate(if kind == b'%' { 2 } else { 1 })? {
            None => return Ok(None),
            Some((items, at)) => (Value::Array(items), at),
        },
        b'>' => match aggregate(1)? {
            None => return Ok(None),
            Some((data, at)) => {
                (Value::Push { kind: redis::PushKind::Other(String::new()), data }, at)
            }
        },
        b'|' => match aggregate(2)? {
            None => return Ok(None),
            Some((_, at)) => match parse(&data[at..], depth + 1)? {
                None => return Ok(None),
                Some((value, used)) => (value, at + used),
            },
        },
        b'_' => (Value::Nil, after),
        b'#' => match line {
            b"t" => (Value::Int(1), after),
            b"f" => (Value::Nil, after),
            _ => return Err(protocol("a boolean", line)),
        },
        b',' | b'(' => (Value::BulkString(line.to_vec()), after),
        b'=' => match blob(data, line, after)? {
            None => return Ok(None),
            // "txt:" or "mkd:" first: the format.
            Some((bytes, end)) => (
                Value::BulkString(bytes.unwrap_or_default().get(4..).unwrap_or_default().to_vec()),
                end,
            ),
        },
        b'!' => match blob(data, line, after)? {
            None => return Ok(None),
            Some((bytes, end)) => {
                let mut as_line = vec![b'-'];
                as_line.extend(bytes.unwrap_or_default().iter().map(|&b| {
                    if b == b'\r' || b == b'\n' {
                        b' '
                    } else {
                        b
                    }
                }));
                as_line.extend_from_slice(b"\r\n");
                (redis::parse_redis_value(&as_line)?, end)
            }
        },
        _ => return Err(protocol("a RESP reply", &data[..(after - 2).min(16)])),
    }))
}

/// The number on a header line.
pub(super) fn number(line: &[u8]) -> RedisResult<i64> {
    // As `str::parse::<i64>` reads it, without the UTF-8 check and its generality: a
    // fencing token is 16 digits, on the path of every fenced acquisition.
    let (negative, digits) = match line {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, line),
    };
    let mut n: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(protocol("a number", line));
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(d)))
            .ok_or_else(|| protocol("a number", line))?;
    }
    if digits.is_empty() {
        return Err(protocol("a number", line));
    }
    match (negative, i64::try_from(n)) {
        (false, Ok(v)) => Ok(v),
        (true, Ok(v)) => Ok(-v),
        (true, Err(_)) if n == 1 << 63 => Ok(i64::MIN),
        _ => Err(protocol("a number", line)),
    }
}

/// A length-prefixed string's bytes (`None`: a null) and where it ends.
type Blob<'a> = (Option<&'a [u8]>, usize);

/// A length-prefixed string whose header line `line` ends at `after`: its bytes
/// (`None`: a null) and where it ends.
#[inline(always)]
fn blob<'a>(data: &'a [u8], line: &[u8], after: usize) -> RedisResult<Option<Blob<'a>>> {
    match number(line)? {
        -1 => Ok(Some((None, after))),
        // Redis's own bound (proto-max-bulk-len) caps what a reply may make us hold.
        n if !(0..=MAX_BULK).contains(&n) => Err(protocol("a bulk length", line)),
        n => {
            let end = after
                .checked_add(n as usize)
                .and_then(|e| e.checked_add(2))
                .ok_or_else(|| protocol("a bulk length", line))?;
            if data.len() < end {
                return Ok(None);
            }
            if &data[end - 2..end] != b"\r\n" {
                return Err(protocol("the end of a bulk string", &data[end - 2..end]));
            }
            Ok(Some((Some(&data[after..end - 2]), end)))
        }
    }
}

/// How many values an aggregate of `n` (`n` pairs when `per` is 2) at `depth` holds,
/// when that is within the limits.
#[inline]
pub(super) fn declared(n: i64, per: usize, depth: usize, line: &[u8]) -> RedisResult<usize> {
    if !(0..=MAX_VALUES as i64).contains(&n) {
        return Err(protocol(&format!("an aggregate length of 0 to {MAX_VALUES} values"), line));
    }
    if depth >= MAX_DEPTH {
        return Err(refused(format!("aggregates nested at most {MAX_DEPTH} deep, got deeper")));
    }
    Ok(n as usize * per)
}

/// `n` values from `at`, and where they end.
fn items(
    data: &[u8],
    mut at: usize,
    n: usize,
    depth: usize,
) -> RedisResult<Option<(Vec<Value>, usize)>> {
    // Room for what the bytes at hand can hold (a value takes 3 at least), never
    // for what a length the server declared promises.
    let mut items = Vec::with_capacity(n.min((data.len() - at) / 3));
    for _ in 0..n {
        match parse(&data[at..], depth + 1)? {
            Some((item, used)) => {
                items.push(item);
                at += used;
            }
            None => return Ok(None),
        }
    }
    Ok(Some((items, at)))
}

/// A reply that breaks the protocol: what was expected, and (its first bytes) what came.
pub(super) fn protocol(what: &str, got: &[u8]) -> RedisError {
    let shown = String::from_utf8_lossy(&got[..got.len().min(32)]);
    let more = if got.len() > 32 { "…" } else { "" };
    refused(format!("expected {what}, got {shown:?}{more}"))
}

pub(super) fn refused(why: String) -> RedisError {
    RedisError::from((ErrorKind::Parse, "protocol error", why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(data: &[u8]) -> Value {
        let (v, used) = parse(data, 0).unwrap().unwrap();
        assert_eq!(used, data.len(), "{}", String::from_utf8_lossy(data));
        v
    }

    #[test]
    fn replies_read_as_redis_rs_reads_them() {
        for reply in [
            &b"+OK\r\n"[..],
            b"+PONG\r\n",
            b":42\r\n",
            b":-7\r\n",
            b"$5\r\nhe\r\no\r\n",
            b"$0\r\n\r\n",
            b"$-1\r\n",
            b"*-1\r\n",
            b"*0\r\n",
            b"*2\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n",
            b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\ng:x\r\n",
        ] {
            assert_eq!(
                whole(reply),
                redis::parse_redis_value(reply).unwrap(),
                "{}",
                String::from_utf8_lossy(reply)
            );
        }
    }

    #[test]
    fn error_replies_keep_redis_rs_kinds() {
        for (reply, kind) in [
            (&b"-NOSCRIPT No matching script.\r\n"[..], redis::ServerErrorKind::NoScript),
            (b"-MOVED 3999 127.0.0.1:6381\r\n", redis::ServerErrorKind::Moved),
            (
                b"-READONLY You can't write against a read only replica.\r\n",
                redis::ServerErrorKind::ReadOnly,
            ),
        ] {
            let err = whole(reply).extract_error().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Server(kind), "{}", String::from_utf8_lossy(reply));
        }
        let nested = whole(b"*2\r\n:1\r\n-ERR no\r\n");
        assert!(nested.extract_error().is_err());
    }

    #[test]
    fn resp3_replies_read_in_resp2_shapes() {
        for (resp3, resp2) in [
            (&b"_\r\n"[..], &b"$-1\r\n"[..]),
            (b"#t\r\n", b":1\r\n"),
            (b"#f\r\n", b"$-1\r\n"),
            (b",1.5\r\n", b"$3\r\n1.5\r\n"),
            (b"(12345678901234567890\r\n", b"$20\r\n12345678901234567890\r\n"),
            (b"=7\r\ntxt:abc\r\n", b"$3\r\nabc\r\n"),
            (b"%1\r\n$1\r\nk\r\n:2\r\n", b"*2\r\n$1\r\nk\r\n:2\r\n"),
            (b"~2\r\n:1\r\n:2\r\n", b"*2\r\n:1\r\n:2\r\n"),
            (b"|1\r\n+ttl\r\n:3\r\n:7\r\n", b":7\r\n"),
        ] {
            assert_eq!(whole(resp3), whole(resp2), "{}", String::from_utf8_lossy(resp3));
        }
        let err = whole(b"!21\r\nNOPERM no\r\npermission\r\n").extract_error().unwrap_err();
        assert_eq!(err.code(), Some("NOPERM"));
        match whole(b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\ng:x\r\n") {
            Value::Push { data, .. } => assert_eq!(data.len(), 3),
            other => panic!("not a push: {other:?}"),
        }
        for cut in 1..b"%1\r\n$1\r\nk\r\n:2\r\n".len() {
            assert!(
                parse(&b"%1\r\n$1\r\nk\r\n:2\r\n"[..cut], 0).unwrap().is_none(),
                "cut at {cut}"
            );
        }
        assert!(parse(b"#x\r\n", 0).is_err());
    }

    #[test]
    fn partial_replies_wait_for_more_and_garbage_is_refused() {
        let full = b"*2\r\n$3\r\nabc\r\n:5\r\n";
        for cut in 0..full.len() {
            assert!(parse(&full[..cut], 0).unwrap().is_none(), "cut at {cut}");
        }
        for bad in [
            &b"?x\r\n"[..],
            b":x\r\n",
            b"$-2\r\n",
            b"$3\r\nabcde\r\n",
            b"*-5\r\n",
            b"$9999999999\r\n",
        ] {
            assert!(parse(bad, 0).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let deep = "*1\r\n".repeat(MAX_DEPTH + 1) + ":1\r\n";
        assert!(parse(deep.as_bytes(), 0).is_err());
        assert!(parse(b"\r\n", 0).is_err());
        assert!(parse(b"*1048577\r\n", 0).is_err());
    }

    /// The header-line reader agrees with `str::parse::<i64>` on what it accepts and
    /// what it gives.
    #[test]
    fn numbers_read_as_str_parse_reads_them() {
        let mut cases: Vec<Vec<u8>> = [
            "0",
            "-0",
            "+0",
            "1",
            "-1",
            "+7",
            "42",
            "1795613806966963",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "00000000000000000000000000000000000000000001",
            "",
            "-",
            "+",
            "--1",
            "+-1",
            "1a",
            " 1",
            "1 ",
            "0x10",
            "١",
            "99999999999999999999999999999999999999999999",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 24) as usize;
            let alphabet = b"0123456789-+ a";
            cases.push(
                (0..len)
                    .map(|i| alphabet[((x >> (i % 60)) as usize + i) % alphabet.len()])
                    .collect(),
            );
        }
        for case in cases {
            let want = std::str::from_utf8(&case).ok().and_then(|s| s.parse::<i64>().ok());
            assert_eq!(number(&case).ok(), want, "{:?}", String::from_utf8_lossy(&case));
        }
    }
}
