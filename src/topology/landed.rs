//! Did a token-checked write land: the one answer of every renewal, extension and
//! durable check, whatever the topology (one server, a quorum) and whoever asks (an
//! object, the watchdog).

use crate::net::resp;
use redis::Value;

/// What a token-checked renewal (a script answering 1 when the token still held what
/// it held, 0 when not), and a durable hold's acknowledgement after it, found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landed {
    /// It landed (on a quorum: on a majority within the lease's validity), and was
    /// acknowledged as asked.
    Yes,
    /// The token no longer holds it: nothing landed, and nothing is left to renew.
    Lost,
    /// Not confirmed: it may have landed, or not (a quorum without a majority in time,
    /// a durable hold not acknowledged in time). Why, for a message.
    Unsure(String),
    /// A durable check not acknowledged within the time it had, while its master listed
    /// the replicas asked for as online: slow, not missing (`renew::ride`). Why, for a
    /// message. Only an acquisition with time to wait asks for that (`Route::confirm`).
    Slow(String),
}

impl Landed {
    /// A renewal script's reply: 1 landed, another number lost, `None` for a reply of
    /// another shape.
    pub fn of_reply(reply: &Value) -> Option<Landed> {
        match resp::int(reply)? {
            1 => Some(Landed::Yes),
            _ => Some(Landed::Lost),
        }
    }
}
