//! A hold's terms: the constructor's numbers checked (`$timeOut`, `$lockOut`, an
//! extension's lease) and, with the settings, what every kind of hold takes from
//! them: how long it waits, its lease, and how it is kept once held.

use crate::config::{Settings, MAX_SECONDS};
use crate::error::{LockError, Result};
use std::time::Duration;

/// Validates `$lockOut` (seconds) and converts it to whole milliseconds for `PX`.
pub fn lock_out_ms(lock_out: f64) -> Result<u64> {
    lease_ms("Lock::__construct(): Argument #3 ($lockOut)", lock_out)
}

/// What every kind of hold takes from its constructor and its settings: how long it
/// waits, its lease, and how it is kept once held.
#[derive(Debug, Clone)]
pub struct Terms {
    /// The wait of a blocking acquisition (`$timeOut`).
    pub wait: Duration,
    /// The lease in ms, as the scripts take it ("0": no expiry).
    pub ttl_arg: String,
    /// The lease; `None`: the key never expires (`$lockOut = INF`).
    pub lease: Option<Duration>,
    pub retry_delay: Duration,
    pub retry_delay_max: Duration,
    pub fair: bool,
    pub auto_renew: bool,
    pub max_hold: Option<Duration>,
    /// Release when the object goes away or the request ends.
    pub auto_release: bool,
    /// The bound on one reply: a release is sent unawaited only while the lease has
    /// more than this left (`Claim::surely_held`).
    pub read_timeout: Duration,
    /// Durable grants (`durable`, `durable_aof`), if asked for.
    pub durable: Option<Durable>,
}

/// What a durable grant waits for: `replicas` replicas (`WAIT`), and with `aof` the
/// master's own AOF too (`WAITAOF`), within `timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Durable {
    pub replicas: u32,
    pub aof: bool,
    pub timeout: Duration,
}

impl Durable {
    /// The durability `settings` ask for, if any.
    pub fn of(settings: &Settings) -> Option<Durable> {
        (settings.durable > 0 || settings.durable_aof).then_some(Durable {
            replicas: settings.durable,
            aof: settings.durable_aof,
            timeout: settings.durable_timeout,
        })
    }
}

impl Terms {
    /// The terms of a hold with this wait and lease (`lease_ms` checked by the caller).
    pub fn new(settings: &Settings, wait: Duration, lease_ms: u64) -> Self {
        Terms {
            wait,
            ttl_arg: lease_ms.to_string(),
            lease: (lease_ms != NO_EXPIRY).then(|| Duration::from_millis(lease_ms)),
            retry_delay: settings.retry_delay,
            retry_delay_max: settings.retry_delay_max,
            fair: settings.fair,
            auto_renew: settings.auto_renew,
            max_hold: settings.max_hold,
            auto_release: settings.auto_release,
            read_timeout: settings.read_timeout,
            durable: Durable::of(settings),
        }
    }

    /// When a wait that starts at `start` ends (about 31 years at most, never an
    /// overflow).
    pub fn deadline(&self, start: std::time::Instant) -> std::time::Instant {
        start.checked_add(self.wait).unwrap_or(start + Duration::from_secs(86_400 * 365))
    }
}

/// The lease, in ms, of a key that never expires (`$lockOut = INF`).
pub const NO_EXPIRY: u64 = 0;

/// Validates a lease in seconds (`label` names the argument in messages) and converts
/// it to whole milliseconds; `INF` is `NO_EXPIRY`.
pub fn lease_ms(label: &str, lock_out: f64) -> Result<u64> {
    if lock_out == f64::INFINITY {
        return Ok(NO_EXPIRY);
    }
    if !lock_out.is_finite() || lock_out <= 0.0 || lock_out > MAX_SECONDS {
        return Err(LockError::InvalidValue(format!(
            "{label} must be a number of seconds greater than 0 (INF: no expiry), {lock_out} given"
        )));
    }
    let ms = (lock_out * 1000.0).round();
    if ms < 1.0 {
        return Err(LockError::InvalidValue(format!(
            "{label} must be at least 0.001 (one millisecond), {lock_out} given"
        )));
    }
    Ok(ms as u64)
}

/// The lease an extension sets: `lock_out` seconds (checked, `label` naming it), or
/// by default the object's own `lease` (None: no expiry), in ms (`NO_EXPIRY` for none).
pub fn extension_ms(label: &str, lock_out: Option<f64>, lease: Option<Duration>) -> Result<u64> {
    match lock_out {
        Some(secs) => lease_ms(label, secs),
        None => Ok(lease.map_or(NO_EXPIRY, |l| l.as_millis() as u64)),
    }
}

/// Validates `$timeOut` (seconds to keep retrying; 0 means one try).
pub fn time_out(time_out: f64) -> Result<Duration> {
    if !time_out.is_finite() || !(0.0..=MAX_SECONDS).contains(&time_out) {
        return Err(LockError::InvalidValue(format!(
            "Lock::__construct(): Argument #2 ($timeOut) must be a finite number of seconds, 0 or greater, {time_out} given"
        )));
    }
    Ok(Duration::from_secs_f64(time_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_out_and_time_out_bounds() {
        assert_eq!(lock_out_ms(10.0).unwrap(), 10_000);
        assert_eq!(lock_out_ms(0.0015).unwrap(), 2);
        assert_eq!(lock_out_ms(0.25).unwrap(), 250);
        assert_eq!(lock_out_ms(f64::INFINITY).unwrap(), NO_EXPIRY);
        for bad in [0.0, -1.0, 0.0004, f64::NAN, f64::NEG_INFINITY, 1e12] {
            assert!(lock_out_ms(bad).is_err(), "{bad}");
        }
        assert_eq!(time_out(0.0).unwrap(), Duration::ZERO);
        assert_eq!(time_out(1.5).unwrap(), Duration::from_millis(1500));
        for bad in [-0.001, f64::NAN, f64::NEG_INFINITY, f64::INFINITY] {
            assert!(time_out(bad).is_err(), "{bad}");
        }
    }
}
