//! Queue entries and the messages that answer them, on the client's side: the one
//! place their formats are written here (the scripts' side is
//! `src/kinds/lib/entry.lua` and `lib/stamp.lua`; `tests/core.rs` runs each side
//! against the other).
//!
//! An entry as sent: `+<ms>[~<cap>]:<lease ms>:<mark>:<channel length>:<channel><rest>`.
//! `<ms>` is how long its waiter still waits, and `<cap>`, when this thread knows a
//! lower bound of the server's clock, until when at the latest, on that clock; the
//! script queues it with until when instead (`<until>:…`), and answers with the entry
//! as queued, which later tries and the cancel send. The lease is the one its hold
//! gets ('0': none); the mark says who waits (`Mark`); the rest ends with the token,
//! whole, so that any bytes a caller chose for it read unambiguously.
//!
//! Messages on a waiter's channel: `g[<fencing token>]@<ms>:<token>`, the hold is
//! this waiter's since the server's time `ms`; `n<ms>:<token>`, look again in `ms`.

use crate::clock::Boot;
use crate::net::pool::Endpoint;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Who waits, as an entry's mark says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A writer of a `Lock`; `true`: it wants a fencing token.
    Writer(bool),
    /// A reader of a `Lock`.
    Reader,
    /// A semaphore's waiter, for this many permits.
    Permits(u32),
    /// A `MultiLock`'s slot group: its keys, each `<w|r><length>:<lock><length>:<queue>
    /// <length>:<fencing counter><length>:<readers>` (w: taken alone, r: a read
    /// share), come after the channel, before the token; `true`: it wants fencing
    /// tokens.
    Group(bool),
}

/// An entry, less its head (`head`): `lease_ms` is the lease as the scripts take it,
/// `keys` a group's key list (`Mark::Group` only, see there).
pub fn entry(lease_ms: &str, mark: Mark, channel: &str, keys: &[u8], token: &[u8]) -> Vec<u8> {
    let mut e = String::with_capacity(lease_ms.len() + channel.len() + 16);
    let _ = match mark {
        Mark::Writer(fenced) => write!(e, "{lease_ms}:{}", if fenced { '1' } else { '0' }),
        Mark::Reader => write!(e, "{lease_ms}:r"),
        Mark::Permits(n) => write!(e, "{lease_ms}:{n}"),
        Mark::Group(fenced) => {
            write!(e, "{lease_ms}:m{}{}", if fenced { '1' } else { '0' }, keys.len())
        }
    };
    let _ = write!(e, ":{}:{channel}", channel.len());
    let mut e = e.into_bytes();
    if matches!(mark, Mark::Group(_)) {
        e.extend_from_slice(keys);
    }
    e.extend_from_slice(token);
    e
}

/// One key of a group's list (`Mark::Group`), appended to `out`.
pub fn group_key(out: &mut Vec<u8>, read: bool, names: [&[u8]; 4]) {
    out.push(if read { b'r' } else { b'w' });
    for name in names {
        out.extend_from_slice(name.len().to_string().as_bytes());
        out.push(b':');
        out.extend_from_slice(name);
    }
}

/// The head of an entry as sent: `+<ms>:`, how long the waiter still waits, or
/// `+<ms>~<cap>:` when this thread knows a lower bound of the server's clock
/// (`Endpoint::server_clock_floor`): the cap, on the server's clock, is no later than
/// the deadline, so that a try that reaches the server late (held up on a slow or
/// partitioned link) still has the entry's time end by the deadline (`stamp`).
pub(crate) fn head(ep: &Endpoint, deadline: Instant) -> Vec<u8> {
    let now = Boot::now();
    let ms = deadline.saturating_duration_since(Instant::now()).as_millis();
    match ep.server_clock_floor(now) {
        Some(floor) => {
            format!("+{ms}~{}:", floor.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX / 2)))
                .into_bytes()
        }
        None => format!("+{ms}:").into_bytes(),
    }
}

/// A message on the wake channel, for this wait's token.
#[derive(Debug, PartialEq)]
pub enum Message {
    /// `g[<fencing token>][@<ms>]:<token>`: the hold is this waiter's, with the
    /// fencing token when it asked for one, since the server's time `ms` when given.
    Grant(Option<i64>, Option<i64>),
    /// `n<ms>:<token>`: look again in `ms`.
    Notice(Duration),
}

/// The token a wake message is for (`g…:<token>`, `n<ms>:<token>`).
pub fn token_of(msg: &[u8]) -> Option<&[u8]> {
    let rest = msg.get(1..)?;
    let colon = rest.iter().position(|&b| b == b':')?;
    Some(&rest[colon + 1..])
}

/// `msg` read as a message for `token`; `None` for another token's, or another shape.
pub fn message(msg: &[u8], token: &[u8]) -> Option<Message> {
    let (&kind, rest) = msg.split_first()?;
    let colon = rest.iter().position(|&b| b == b':')?;
    if &rest[colon + 1..] != token {
        return None;
    }
    let head = &rest[..colon];
    let number = |digits: &[u8]| -> Option<u64> {
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    };
    match kind {
        b'g' => {
            let (fence, at) = match head.iter().position(|&b| b == b'@') {
                Some(i) => (&head[..i], Some(i64::try_from(number(&head[i + 1..])?).ok()?)),
                None => (head, None),
            };
            let fence =
                if fence.is_empty() { None } else { Some(i64::try_from(number(fence)?).ok()?) };
            Some(Message::Grant(fence, at))
        }
        b'n' => Some(Message::Notice(Duration::from_millis(number(head)?))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_messages_are_read_for_this_token_only() {
        let t = b"0123abcd";
        assert_eq!(message(b"g:0123abcd", t), Some(Message::Grant(None, None)));
        assert_eq!(message(b"g42:0123abcd", t), Some(Message::Grant(Some(42), None)));
        assert_eq!(
            message(b"g@1700000000123:0123abcd", t),
            Some(Message::Grant(None, Some(1_700_000_000_123)))
        );
        assert_eq!(message(b"g42@17:0123abcd", t), Some(Message::Grant(Some(42), Some(17))));
        assert_eq!(message(b"n5:0123abcd", t), Some(Message::Notice(Duration::from_millis(5))));
        for other in [
            &b"g:ffff0000"[..],
            b"gx:0123abcd",
            b"n:0123abcd",
            b"g:0123abcdef",
            b"g:0123",
            b"0123abcd",
            b"",
            b"g@:0123abcd",
            b"g4@x:0123abcd",
            b"g4@5@6:0123abcd",
            b"g+4:0123abcd",
            b"g99999999999999999999:0123abcd",
        ] {
            assert_eq!(message(other, t), None, "{}", String::from_utf8_lossy(other));
        }
        // A chosen token may hold the separators: it is compared whole, after the first colon.
        let odd = b"a:b=c\0";
        assert_eq!(message(b"g7:a:b=c\0", odd), Some(Message::Grant(Some(7), None)));
        assert_eq!(message(b"g:a:b=c", odd), None);
        // An earlier wait's grant whose token starts like this one's is not this one's.
        assert_eq!(message(b"g:x=7", b"x"), None);
    }

    #[test]
    fn entries_name_their_channel_and_end_with_the_token() {
        assert_eq!(entry("5000", Mark::Writer(true), "ch", b"", b"t:k"), b"5000:1:2:cht:k");
        assert_eq!(entry("0", Mark::Reader, "ch", b"", b"t"), b"0:r:2:cht");
        assert_eq!(entry("10", Mark::Permits(3), "c", b"", b"t"), b"10:3:1:ct");
        let mut keys = Vec::new();
        group_key(&mut keys, false, [b"a", b"a:q", b"a:f", b"a:r"]);
        assert_eq!(keys, b"w1:a3:a:q3:a:f3:a:r");
        assert_eq!(
            entry("7", Mark::Group(false), "c", &keys, b"t"),
            b"7:m019:1:cw1:a3:a:q3:a:f3:a:rt"
        );
    }
}
