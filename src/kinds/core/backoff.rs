//! Pacing for a waiting acquire: exponential back-off with "decorrelated
//! jitter" (each pause is drawn between the base and three times the previous
//! one, capped), cut short so that no pause runs past the caller's deadline.
//!
//! The jitter keeps processes that started together from retrying in lockstep.
//! Its generator is seeded from the OS per wait, because a forked child would
//! otherwise repeat its parent's draws.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// The pauses of one blocking acquire.
pub struct Backoff {
    base: Duration,
    max: Duration,
    prev: Duration,
    rng: Option<StdRng>,
}

impl Backoff {
    /// A back-off whose pauses start at `base` and never exceed `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Backoff { base, max: max.max(base), prev: base, rng: None }
    }

    /// The longest pause.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The next pause, before the deadline is applied.
    pub fn next_delay(&mut self) -> Duration {
        let rng = self.rng.get_or_insert_with(StdRng::from_os_rng);
        let lo = self.base.as_micros() as u64;
        let hi = (self.prev.as_micros() as u64).saturating_mul(3).max(lo);
        let pick = Duration::from_micros(rng.random_range(lo..=hi));
        self.prev = pick.min(self.max);
        self.prev
    }

    /// When the next pause ends, or `deadline` if that comes first; `None` once the
    /// deadline has passed.
    pub fn pause_until(&mut self, deadline: Instant) -> Option<Instant> {
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        Some(now + self.next_delay().min(deadline - now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_stay_within_bounds_and_vary() {
        let mut b = Backoff::new(Duration::from_millis(2), Duration::from_millis(50));
        let delays: Vec<Duration> = (0..200).map(|_| b.next_delay()).collect();
        assert!(delays
            .iter()
            .all(|d| *d >= Duration::from_millis(2) && *d <= Duration::from_millis(50)));
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(distinct.len() > 20, "no jitter: {distinct:?}");
        // It does grow: the later pauses are longer than the base on average.
        let late: Duration = delays[100..].iter().sum();
        assert!(late > Duration::from_millis(2) * 100 * 3);
    }

    #[test]
    fn never_pauses_past_the_deadline() {
        let mut b = Backoff::new(Duration::from_millis(40), Duration::from_millis(40));
        let start = Instant::now();
        let deadline = start + Duration::from_millis(5);
        let at = b.pause_until(deadline).expect("a pause before the deadline");
        assert!(at <= deadline, "{:?} after the deadline", at - deadline);
        assert_eq!(b.pause_until(start), None);
    }
}
