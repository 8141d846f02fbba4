//! Durable grants (`durable`, `durable_aof`): a hold counts only once the replicas
//! (and the master's AOF) have it, so that a failover cannot promote a replica that
//! never saw it, nor let a master cut off from its replicas hand it out alone.
//!
//! Every hold is checked the same way, whatever its kind and however it came (a try
//! of its own, a hand-over written by the releaser, a renewal): its token-checked
//! renewal, which is a write of the checking connection's own, then `WAIT` (or
//! `WAITAOF`) on that connection, in one round trip (`Route::confirm`). A hold not
//! acknowledged in time is undone by the caller (`acquire`, `extend`).

use crate::error::{LockError, Result};
use crate::kinds::core::{Holder, Kind};
use crate::terms::Durable;
use crate::topology::route::Confirmed;

/// Why a hold was not made durable.
pub(super) enum Undurable {
    /// The token no longer held it when checked (its lease ran out meanwhile, or the
    /// server lost it): nothing to undo.
    Lost,
    /// Not acknowledged in time (`LockError::NotDurable`): to undo.
    Short(LockError),
}

impl<K: Kind> Holder<K> {
    /// Checks `token`'s hold on every part, as the hold taken now renews it
    /// (`Kind::held_as`), or after an extension as its renewal did (`Kind::renewed_as`:
    /// a reader's token is checked as a read share), to the lease `ms` ("0": none).
    /// `Ok(None)` when every part was acknowledged as `d` asks.
    pub(super) fn confirm(
        &self,
        token: &[u8],
        ms: &[u8],
        d: &Durable,
        extending: bool,
    ) -> Result<Option<Undurable>> {
        for part in &self.parts {
            let held = if extending { self.kind.renewed_as(part) } else { self.kind.held_as(part) };
            let mut outcome = Ok(Confirmed::Yes);
            held.renew(token, ms, &mut |call| outcome = held.route().confirm(call, d));
            match outcome? {
                Confirmed::Yes => {}
                Confirmed::Lost => return Ok(Some(Undurable::Lost)),
                Confirmed::Short(cause) => {
                    crate::stats::note(crate::stats::Counter::Undurable);
                    let addr = held.route().node().addr().to_string();
                    return Ok(Some(Undurable::Short(LockError::NotDurable {
                        addr,
                        what: self.c.what,
                        cause,
                    })));
                }
            }
        }
        crate::stats::note(crate::stats::Counter::DurableAcks);
        Ok(None)
    }
}
