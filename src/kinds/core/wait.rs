//! One wait of an object for one of its parts, as `waiting` sees it: the kind's
//! scripts, run on that part.

use crate::error::Result;
use crate::hold::table::Part;
use crate::kinds::core::backoff::Backoff;
use crate::kinds::core::waiting::{Fences, Try, Waiter};
use crate::kinds::core::{Attempt, Holder, Kind};
use crate::topology::route::Route;
use std::time::{Duration, Instant};

/// The wait of `holder` for its part `part`, with `token`.
pub(super) struct PartWait<'a, K: Kind> {
    pub holder: &'a Holder<K>,
    pub part: usize,
    pub token: &'a [u8],
}

impl<K: Kind> Waiter for PartWait<'_, K> {
    fn route(&self) -> &Route {
        self.holder.parts[self.part].route()
    }

    fn entry(&self, channel: &str) -> Vec<u8> {
        let h = self.holder;
        h.kind.entry(&h.c, &h.parts[self.part], self.token, channel)
    }

    fn try_part(&self, entry: &[u8], again: bool, deadline: Instant) -> Result<Try> {
        let h = self.holder;
        h.kind.try_part(
            &h.c,
            &h.parts[self.part],
            &Attempt { token: self.token, sent: entry, again, deadline: Some(deadline) },
        )
    }

    fn cancel(&self, entry: &[u8]) -> Result<Option<Fences>> {
        let h = self.holder;
        h.kind.cancel(&h.c, &h.parts[self.part], self.token, entry)
    }

    fn backoff(&self) -> Backoff {
        let t = &self.holder.c.terms;
        Backoff::new(t.retry_delay, t.retry_delay_max)
    }

    fn lease(&self) -> Option<Duration> {
        self.holder.c.terms.lease
    }

    fn meter(&self) -> &crate::meter::Meter {
        &self.holder.c.meter
    }

    fn abandon(&self) {
        self.holder.abandon(self.part, self.token);
    }

    fn try_poll(&self, deadline: Instant) -> Result<Try> {
        let h = self.holder;
        h.kind.try_poll(&h.c, &h.parts[self.part], self.token, deadline)
    }
}
