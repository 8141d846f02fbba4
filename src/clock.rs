//! The clock that lease bounds are kept on, and the drift taken off them.
//!
//! A hold is handed to PHP with a bound on when its lease ends, on this host's
//! clock (`wait::waiting::lease_bound`). Rust's `Instant` is `CLOCK_MONOTONIC`,
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

#[cfg(test)]
mod tests {
    use super::*;

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
