//! How a fan-out's answers count: each node's reply or error, and when enough of them
//! decide the outcome.

use redis::Value;

/// Why a node gave no usable answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeError {
    /// Names the node and the cause.
    pub(crate) text: String,
    /// Whether the command may have reached the node.
    pub(crate) sent: bool,
    /// Not failed: its reply was not waited for, the outcome being decided without it.
    pub(crate) late: bool,
}

/// One node's answer to a fan-out.
pub(super) type Reply = std::result::Result<Value, NodeError>;

/// What a fan-out does beyond asking the nodes that are not skipped.
#[derive(Clone, Copy, Default)]
pub(super) struct Ask<'a> {
    /// A release or an undo: it also goes, unawaited, to a skipped node whose
    /// parked connection carries a `SET` of one of its keys and tokens.
    pub(super) cleanup: bool,
    /// The `SET` of this key and token: a node that leaves it unanswered remembers
    /// it (`Node::unsettled`).
    pub(super) sets: Option<(&'a [u8], &'a [u8])>,
}

/// How the nodes stand in a fan-out so far.
pub(super) struct Tally {
    pub(super) answered: usize,
    pub(super) failed: usize,
    pub(super) pending: usize,
}

pub(super) fn tally(slots: &[Option<Reply>]) -> Tally {
    let mut t = Tally { answered: 0, failed: 0, pending: 0 };
    for s in slots {
        match s {
            Some(Ok(_)) => t.answered += 1,
            Some(Err(_)) => t.failed += 1,
            None => t.pending += 1,
        }
    }
    t
}

/// How many nodes gave exactly `want`.
pub(super) fn count(slots: &[Option<Reply>], want: &Value) -> usize {
    slots.iter().filter(|s| matches!(s, Some(Ok(v)) if v == want)).count()
}
