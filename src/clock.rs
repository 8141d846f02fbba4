//! The clock that lease bounds are kept on, and the drift taken off them.
//!
//! A hold is handed to PHP with a bound on when its lease ends, on this host's
//! clock (`lease_bound`; `grant_bound` for a hold a waiter was granted; a hold
//! past its bound is stale: `taken`, `fresh`). Rust's `Instant` is `CLOCK_MONOTONIC`,
//! which stops while the machine is suspended (a laptop's lid, a VM paused for a
//! snapshot or a migration), while Redis, elsewhere, goes on counting the lease: a
//! bound on `Instant` would still say "held" for a lock the server let go during the
//! suspension. `Boot` reads `CLOCK_BOOTTIME`, which counts the suspension too, so
//! every bound a hold is judged by (`getRemainingLifetime()`, whether a grant or a
//! try came in time, whether `synchronized()` may release without waiting) has
//! passed when the machine wakes after the lease. Waits and timeouts stay on
//! `Instant`: a wait that slept through a suspension is not wrong, only long.

use std::time::Duration;

/// An instant on `CLOCK_BOOTTIME`, in nanoseconds since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Boot(u64);

impl Boot {
    /// Now. `CLOCK_BOOTTIME` never fails on Linux for a valid pointer; were it to, the
    /// monotonic clock stands in (still a clock that never goes back).
    pub fn now() -> Boot {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
        if rc != 0 {
            // SAFETY: as above.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        }
        let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
        let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
        Boot(secs.saturating_mul(1_000_000_000).saturating_add(nanos))
    }

    /// This instant plus `d` (saturating: a bound that far away never comes).
    pub fn plus(self, d: Duration) -> Boot {
        Boot(self.0.saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)))
    }

    /// This instant less `d`, or the clock's start.
    pub fn minus(self, d: Duration) -> Boot {
        Boot(self.0.saturating_sub(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)))
    }

    /// How long from `earlier` to this instant; zero if `earlier` is later.
    pub fn since(self, earlier: Boot) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// How long from now until this instant; zero if it has passed.
    pub fn left(self) -> Duration {
        self.since(Boot::now())
    }
}

/// The monotonic clock in nanoseconds: a reading for durations within this process (a
/// hold's time), without `Instant`'s checked arithmetic, so that one is two readings
/// and a subtraction.
#[inline]
pub fn mono_nanos() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime(2) fills the timespec it is given; CLOCK_MONOTONIC exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// When a lease of `lease`, started by a command sent at `sent`, ends at the earliest
/// on this host's clock: Redis starts it later than `sent`, and the drift is taken off.
/// A lease shorter than the drift is over at once.
pub fn lease_end(sent: Boot, lease: Duration) -> Boot {
    sent.plus(lease.saturating_sub(drift(lease)))
}

/// Extra safety taken off a lease for the clock drift between this host and the
/// servers (and the time the caller needs to start): Redlock's rule, 1% of the lease
/// plus 2 ms, on every topology.
pub fn drift(lease: Duration) -> Duration {
    lease / 100 + Duration::from_millis(2)
}

/// When a hold's lease ends at the earliest, on this host's boot clock (`clock::Boot`,
/// which counts a suspended machine's sleep); `None`: it never ends (no expiry).
pub type Until = Option<Boot>;

/// The end of the lease of a hold that a try `sent` at that instant found taken (or
/// held already, when the script started the lease again).
pub fn lease_bound(sent: Boot, lease: Option<Duration>) -> Until {
    Some(lease_end(sent, lease?))
}

/// Whether a hold is past its bound: then it is no acquisition.
pub fn is_stale(until: Until) -> bool {
    stale_at(until, Boot::now())
}

/// Whether a hold is past its bound at `now`.
#[inline]
pub fn stale_at(until: Until, now: Boot) -> bool {
    until.is_some_and(|u| now >= u)
}

/// One exchange with a server that read its clock while it ran our command: the
/// command was sent at `sent` (here), and the server's clock read `server_ms` (ms)
/// while it ran, which was after `sent`. So the server's clock read no more than
/// `server_ms` at `sent`: the pair bounds, from below, when (here) any later
/// instant of the server's comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    pub sent: Boot,
    pub server_ms: i64,
}

/// The end of the lease of a hold granted at `granted` (ms, the server's clock) to a
/// waiter, from an exchange of the same wait with the server (`Exchange`): the
/// server's instant `x` came here no earlier than `sent + (x - server_ms)`, and the
/// key set at `granted` with `lease` expires there no earlier than `granted + lease`.
/// Drift is taken off for the lease and for the time between the exchange and the
/// grant (1% each), and 1 ms for the server's clock being read in whole ms. The grant
/// was made before it was `heard` (here), so its lease ends no later than a lease
/// after that: the bound never says more, whatever the server's clock did between the
/// exchange and the grant (stepped forward, it would have the grant's time promise the
/// step on top of the lease).
pub fn grant_bound(seen: Exchange, granted: i64, lease: Option<Duration>, heard: Boot) -> Until {
    let lease = lease?;
    let gap = u64::try_from(granted.saturating_sub(seen.server_ms)).unwrap_or(0);
    let margin = drift(lease) + Duration::from_millis(gap / 100) + Duration::from_millis(1);
    let ends_ms = i128::from(granted) + lease.as_millis() as i128 - i128::from(seen.server_ms);
    let ms = |n: i128| Duration::from_millis(u64::try_from(n).unwrap_or(u64::MAX));
    let ends =
        if ends_ms >= 0 { seen.sent.plus(ms(ends_ms)) } else { seen.sent.minus(ms(-ends_ms)) };
    Some(ends.minus(margin).min(lease_end(heard, lease)))
}

/// The bound of a hold that a try sent at `sent` found taken (or its own, its lease
/// started again) on a lease of `lease`: `Some(bound)`, or `None` when the reply came
/// past it (a paused process): stale, counted, and no acquisition.
pub fn taken(sent: Boot, lease: Option<Duration>) -> Option<Until> {
    fresh(lease_bound(sent, lease))
}

/// `until`, or `None` when it has passed: stale, counted.
pub fn fresh(until: Until) -> Option<Until> {
    if is_stale(until) {
        crate::stats::note(crate::stats::Counter::Stale);
        return None;
    }
    Some(until)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_is_bounded_from_an_exchange_of_the_wait() {
        let now = Boot::now();
        let lease = Some(Duration::from_millis(500));
        // A try sent at `now` found the server's clock at 9_000 ms (it ran after it was
        // sent). Granted at 9_200: the lease ends 700 ms after `now` at the earliest,
        // less the drift (7 ms for the lease, 2 for the 200 ms between, 1 for rounding).
        let seen = Exchange { sent: now, server_ms: 9_000 };
        let heard = now.plus(Duration::from_millis(210));
        let until = grant_bound(seen, 9_200, lease, heard).unwrap();
        assert_eq!(until.since(now), Duration::from_millis(700 - 7 - 2 - 1));
        // The server's clock stepped 2 s forward between the exchange and the grant:
        // its grant says 11_200, but the grant was heard 210 ms after the try, so the
        // lease ends a lease after that at the latest (less the drift), not 2 s later.
        let stepped = grant_bound(seen, 11_200, lease, heard).unwrap();
        assert_eq!(stepped, lease_end(heard, Duration::from_millis(500)));
        assert_eq!(stepped.since(now), Duration::from_millis(210 + 500 - 7));
        // Granted long before the exchange (a paused waiter reads it late): past.
        let old = grant_bound(Exchange { sent: now, server_ms: 9_000 }, 8_000, lease, now).unwrap();
        assert!(old <= now, "a grant 1 s before the exchange, with a 0.5 s lease, has ended");
        assert!(is_stale(Some(old)));
        // No expiry: never stale.
        assert_eq!(grant_bound(seen, 1, None, now), None);
        assert!(!is_stale(None));
        // A try: from when it was sent.
        let sent = now.minus(Duration::from_millis(600));
        assert!(is_stale(lease_bound(sent, lease)), "sent 600 ms ago with a 500 ms lease");
        assert!(!is_stale(lease_bound(now, lease)));
    }

    /// Lead 8 of issue 47: a bound that must survive a suspended machine is kept on
    /// CLOCK_BOOTTIME, which counts the suspension, not on the monotonic clock
    /// (`Instant`), which stops. A suspension is what makes the two differ; a time
    /// namespace whose boot clock is set ahead (`unshare --time --boottime N`, which
    /// `make test-rust` runs this test in where the kernel lets it) makes them differ
    /// the same way, so there the test fails for bounds on the monotonic clock.
    #[test]
    fn boot_time_is_the_clock_that_counts_a_suspension() {
        let mut boot = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let mut mono = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let ours = Boot::now();
        // SAFETY: valid timespecs.
        unsafe {
            libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut boot);
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut mono);
        }
        let boot_ns = boot.tv_sec as u64 * 1_000_000_000 + boot.tv_nsec as u64;
        let mono_ns = mono.tv_sec as u64 * 1_000_000_000 + mono.tv_nsec as u64;
        assert!(
            ours.0 <= boot_ns && boot_ns - ours.0 < 1_000_000_000,
            "Boot::now() reads CLOCK_BOOTTIME"
        );
        assert!(boot_ns + 1_000_000 >= mono_ns, "boot time never lags the monotonic clock");
        if std::env::var_os("REDIS_LOCK_TEST_BOOT_AHEAD").is_some() {
            // Run in a namespace whose boot clock is a day ahead: a day "suspended".
            assert!(
                boot_ns > mono_ns + 80_000_000_000_000,
                "the namespace's boot clock is a day ahead"
            );
            let later = crate::clock::lease_end(ours, Duration::from_secs(10));
            assert!(
                later.0 > mono_ns + 80_000_000_000_000,
                "a lease bound is on the boot clock, not the monotonic one"
            );
        }
        let later = ours.plus(Duration::from_millis(5));
        assert_eq!(later.since(ours), Duration::from_millis(5));
        assert_eq!(ours.since(later), Duration::ZERO);
        assert_eq!(later.minus(Duration::from_millis(5)), ours);
        assert_eq!(Boot(3).minus(Duration::from_secs(1)), Boot(0));
        assert_eq!(drift(Duration::from_secs(10)), Duration::from_millis(102));
    }
}
