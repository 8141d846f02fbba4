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
use crate::topology::landed::Landed;

impl<K: Kind> Holder<K> {
    /// Checks `token`'s hold on every part, as the hold taken now renews it
    /// (`Kind::held_as`), or after an extension as its renewal did (`Kind::renewed_as`:
    /// a reader's token is checked as a read share), to the lease `ms` ("0": none).
    /// `Yes` when every part was acknowledged as `d` asks; `Lost` when the token no
    /// longer held one (its lease ran out meanwhile, or the server lost it): nothing to
    /// undo. `Slow` when a part's master listed the replicas asked for as online but
    /// they did not acknowledge within `patience` more: the caller undoes it. Not
    /// acknowledged in time otherwise: `LockError::NotDurable`, and the caller undoes it.
    /// `patience`: how much longer each part's check may wait for replicas that are
    /// online but slow (`Route::confirm`).
    pub(super) fn confirm(
        &self,
        token: &[u8],
        ms: &[u8],
        d: &Durable,
        extending: bool,
        patience: std::time::Duration,
    ) -> Result<Landed> {
        for part in &self.parts {
            let held = if extending { self.kind.renewed_as(part) } else { self.kind.held_as(part) };
            let landed = held.route().confirm(&held.renew(token, ms).call(), d, patience)?;
            match landed {
                Landed::Yes => {}
                Landed::Lost => return Ok(Landed::Lost),
                // Slow replicas, online: undone, and not "not durable" (`acquire`).
                Landed::Slow(cause) => {
                    crate::stats::note(crate::stats::Counter::Undurable);
                    return Ok(Landed::Slow(cause));
                }
                Landed::Unsure(cause) => {
                    crate::stats::note(crate::stats::Counter::Undurable);
                    let addr = held.route().node().addr().to_string();
                    return Err(LockError::NotDurable { addr, what: self.c.what, cause });
                }
            }
        }
        crate::stats::note(crate::stats::Counter::DurableAcks);
        Ok(Landed::Yes)
    }
}
