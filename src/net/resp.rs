//! Commands written in RESP by hand, into a buffer that is reused from call to call
//! (`wire::with_buffer` keeps one per thread and sends it).
//!
//! redis-rs's `Cmd` grows a fresh buffer argument by argument and copies it once
//! more to pack it; on a lock cycle of two commands that was a quarter of the
//! client's instructions. A command here is one pass over its arguments into a
//! buffer that already has the room.

use redis::Value;

/// Replaces the buffer's content with the command made of `count` parts.
pub(crate) fn encode<'a>(
    buf: &mut Vec<u8>,
    count: usize,
    parts: impl IntoIterator<Item = &'a [u8]>,
) {
    begin(buf, count);
    for part in parts {
        push_bulk(buf, part);
    }
}

/// Replaces the buffer's content with the header of a command of `count` parts.
pub(crate) fn begin(buf: &mut Vec<u8>, count: usize) {
    buf.clear();
    push_command(buf, count);
}

/// Appends the header of a command of `count` parts (the next of a pipeline).
pub(crate) fn push_command(buf: &mut Vec<u8>, count: usize) {
    push_header(buf, b'*', count, 0);
}

/// Appends one part of a command.
#[inline(always)]
pub(crate) fn push_bulk(buf: &mut Vec<u8>, part: &[u8]) {
    push_header(buf, b'$', part.len(), part.len() + 2);
    buf.extend_from_slice(part);
    buf.extend_from_slice(b"\r\n");
}

/// Appends `n` in decimal, as one part of a command.
pub(crate) fn push_bulk_number(buf: &mut Vec<u8>, n: usize) {
    let mut digits = [0u8; 20];
    let at = decimal(&mut digits, n);
    push_bulk(buf, &digits[at..]);
}

/// Appends `kind`, `n` in decimal and CRLF, with room for `more` bytes after
/// them. Nearly every count and length has one or two digits; writing those as a
/// fixed-size piece keeps a part to one capacity check and no `memcpy` call. Inlined
/// into each part's writer: a call's entry and exit were a fifth of its cost.
#[inline(always)]
fn push_header(buf: &mut Vec<u8>, kind: u8, n: usize, more: usize) {
    buf.reserve(23 + more);
    if n < 10 {
        buf.extend_from_slice(&[kind, b'0' + n as u8, b'\r', b'\n']);
    } else if n < 100 {
        buf.extend_from_slice(&[kind, b'0' + (n / 10) as u8, b'0' + (n % 10) as u8, b'\r', b'\n']);
    } else {
        let mut digits = [0u8; 20];
        let at = decimal(&mut digits, n);
        buf.push(kind);
        buf.extend_from_slice(&digits[at..]);
        buf.extend_from_slice(b"\r\n");
    }
}

/// Writes `n` in decimal at the end of `digits`; returns where it starts.
pub(crate) fn decimal(digits: &mut [u8; 20], mut n: usize) -> usize {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return at;
        }
    }
}

/// The reply as an integer, when it is one.
pub fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_encoded_as_redis_rs_encodes_them() {
        let parts: [&[u8]; 6] = [b"SET", b"k\r\n\0", b"0123456789abcdef", b"NX", b"PX", b"10000"];
        let mut buf = vec![b'x'; 3];
        encode(&mut buf, parts.len(), parts.iter().copied());
        let mut cmd = redis::cmd("SET");
        for p in &parts[1..] {
            cmd.arg(*p);
        }
        assert_eq!(buf, cmd.get_packed_command());
        encode(&mut buf, 1, [&b""[..]]);
        assert_eq!(buf, b"*1\r\n$0\r\n\r\n");
        begin(&mut buf, 2);
        push_bulk_number(&mut buf, 1234);
        push_bulk(&mut buf, b"x");
        assert_eq!(buf, redis::cmd("1234").arg("x").get_packed_command());
    }

    #[test]
    fn numbers_are_decimal() {
        for n in [0usize, 7, 10, 99, 100, 123_456_789, usize::MAX] {
            let mut buf = Vec::new();
            begin(&mut buf, n);
            assert_eq!(buf, format!("*{n}\r\n").as_bytes());
            push_bulk_number(&mut buf, n);
            assert_eq!(buf, format!("*{n}\r\n${}\r\n{n}\r\n", n.to_string().len()).as_bytes());
        }
    }
}
