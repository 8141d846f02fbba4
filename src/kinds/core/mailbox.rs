//! Messages for waits an event loop drives (`pending`), by token. Such waits share
//! their thread's command connection, and its wake channel, with each other: a read
//! made for any of them (a try, a release, another's listening) may bring another's
//! grant. Each message is routed as it is read (`wake::set_router`): into its wait's
//! box here, whose timer is made readable, so that its loop polls it. Messages for no
//! box are kept on the connection as before (a blocking wait's, or left over from
//! ended waits, which the next wait drops).
//!
//! One wait per token per thread: two waits of one token could not tell their grants
//! apart (`open` refuses the second).

use crate::kinds::core::entry;
use crate::net::wake;
use crate::ready;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::os::fd::RawFd;

/// Messages one box keeps at most (a wait reads its own at each poll).
const MAX_KEPT: usize = 16;

struct Slot {
    messages: VecDeque<Vec<u8>>,
    /// The wait's timer: armed at once when a message comes.
    timer: RawFd,
}

thread_local! {
    static BOXES: RefCell<HashMap<Vec<u8>, Slot>> = RefCell::new(HashMap::new());
}

/// Opens the box of `token`, whose wait's timer is `timer`; `false` when a wait of
/// the same token has one open on this thread.
pub(crate) fn open(token: &[u8], timer: RawFd) -> bool {
    let opened = BOXES
        .try_with(|b| {
            let mut boxes = b.borrow_mut();
            if boxes.contains_key(token) {
                return false;
            }
            boxes.insert(token.to_vec(), Slot { messages: VecDeque::new(), timer });
            true
        })
        .unwrap_or(false);
    if opened {
        wake::set_router(Some(route));
    }
    opened
}

/// Closes the box of `token`: its messages are dropped, and later ones are kept on
/// the connection (for the next wait to drop).
pub(crate) fn close(token: &[u8]) {
    let _ = BOXES.try_with(|b| {
        let mut boxes = b.borrow_mut();
        boxes.remove(token);
        if boxes.is_empty() {
            wake::set_router(None);
        }
    });
}

/// Whether `token` has a box open on this thread.
pub(crate) fn is_open(token: &[u8]) -> bool {
    BOXES.try_with(|b| b.borrow().contains_key(token)).unwrap_or(false)
}

/// The oldest message in `token`'s box.
pub(crate) fn take(token: &[u8]) -> Option<Vec<u8>> {
    BOXES
        .try_with(|b| b.borrow_mut().get_mut(token).and_then(|s| s.messages.pop_front()))
        .ok()
        .flatten()
}

/// The router (`wake::set_router`): a message whose token has a box goes into it.
fn route(payload: &[u8]) -> bool {
    let Some(token) = entry::token_of(payload) else { return false };
    BOXES
        .try_with(|b| {
            // Not while the box is borrowed (a read inside a box's own use): kept then.
            let Ok(mut boxes) = b.try_borrow_mut() else { return false };
            let Some(slot) = boxes.get_mut(token) else { return false };
            if slot.messages.len() >= MAX_KEPT {
                slot.messages.pop_front();
            }
            slot.messages.push_back(payload.to_vec());
            ready::wake(slot.timer);
            true
        })
        .unwrap_or(false)
}
