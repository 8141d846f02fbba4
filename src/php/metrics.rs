//! The pool's metrics in PHP: `redis_lock_metrics()` (an array, for code and tools)
//! and `redis_lock_metrics_text()` (what a Prometheus scrape reads).

use crate::metrics::{self, bounds, Count, Figures, ERROR_KINDS};
use ext_php_rs::boxed::ZBox;
use ext_php_rs::error::Result as PhpConvResult;
use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendHashTable;

type Array = ZBox<ZendHashTable>;

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn histogram(h: &([u64; metrics::BUCKETS], f64)) -> PhpConvResult<Array> {
    let (buckets, sum) = h;
    let bounds = bounds();
    let mut cumulative = ZendHashTable::with_capacity(buckets.len() as u32);
    let mut total = 0u64;
    for (i, n) in buckets.iter().enumerate() {
        total += n;
        let le = bounds.get(i).map_or_else(|| "+Inf".to_string(), f64::to_string);
        cumulative.insert(le.as_str(), int(total))?;
    }
    let mut a = ZendHashTable::with_capacity(3);
    a.insert("count", int(total))?;
    a.insert("sum", *sum)?;
    a.insert("buckets", cumulative)?;
    Ok(a)
}

fn name_array(f: &Figures) -> PhpConvResult<Array> {
    let c = |k: Count| int(f.counts[k as usize]);
    let mut a = ZendHashTable::with_capacity(12);
    a.insert("acquired", c(Count::Acquired))?;
    a.insert("waits", c(Count::Waits))?;
    a.insert("timeouts", c(Count::Timeouts))?;
    a.insert("handed_over", c(Count::HandedOver))?;
    a.insert("released", c(Count::Released))?;
    a.insert("lost", c(Count::Lost))?;
    a.insert("renewals", c(Count::Renewals))?;
    let mut errors = ZendHashTable::with_capacity(ERROR_KINDS.len() as u32);
    for (k, kind) in ERROR_KINDS {
        errors.insert(kind, c(k))?;
    }
    a.insert("errors", errors)?;
    a.insert("wait_seconds", histogram(&f.wait)?)?;
    a.insert("hold_seconds", histogram(&f.hold)?)?;
    a.insert("holds", int(f.holding))?;
    a.insert("waiting", int(f.waiting))?;
    Ok(a)
}

/// The lock metrics of the whole pool (every php-fpm worker, every Apache child,
/// every thread; a CLI process alone), per lock name (the key folded by
/// `redis_lock.metrics_fold`): acquired, waits, timeouts, handed_over, released,
/// lost, renewals, errors (by kind), wait_seconds and hold_seconds (count, sum,
/// cumulative buckets by upper bound), holds and waiting (in progress now). An empty
/// array when `redis_lock.metrics` is off.
///
/// @return array<string, array<string, mixed>>
#[php_function]
pub fn redis_lock_metrics() -> PhpResult<Array> {
    let build = || -> PhpConvResult<Array> {
        let Some(s) = metrics::snapshot() else { return Ok(ZendHashTable::new()) };
        let mut a = ZendHashTable::with_capacity(s.names.len() as u32);
        for f in &s.names {
            let name = String::from_utf8_lossy(&f.name).into_owned();
            a.insert(name.as_str(), name_array(f)?)?;
        }
        Ok(a)
    };
    build().map_err(|e| {
        PhpException::from_message(format!("redis-lock: could not build the array: {e}"))
    })
}

/// The same metrics in Prometheus's text format (0.0.4), for a scrape endpoint:
/// serve it with `Content-Type: text/plain; version=0.0.4`. Empty when
/// `redis_lock.metrics` is off.
#[php_function]
pub fn redis_lock_metrics_text() -> String {
    metrics::snapshot().map(|s| crate::exposition::prometheus(&s)).unwrap_or_default()
}

/// Starts this request's lock journal (its thread's, under ZTS), empty: from now to
/// the request's end, every acquisition is noted (`redis_lock_journal()`). For a
/// profiler; off, it costs nothing.
#[php_function]
pub fn redis_lock_journal_start() {
    crate::metrics::watch_journal();
    crate::journal::start();
}

/// This request's lock journal since `redis_lock_journal_start()`: one entry per
/// acquisition, in order: kind (lock, semaphore, MultiLock), name (the key as given),
/// at (when it ended, unix seconds), waited (seconds), outcome (acquired, busy, or the
/// error's kind: connection, unavailable, not_durable, server, other, lost, timeout),
/// handed_over (the hold came from a release), held (seconds the hold lasted, once it
/// ended; null while it lasts). Empty when the journal was not started.
///
/// @return list<array<string, mixed>>
#[php_function]
pub fn redis_lock_journal() -> PhpResult<Array> {
    use crate::journal::Outcome;
    let build = || -> PhpConvResult<Array> {
        let entries = crate::journal::entries();
        let mut list = ZendHashTable::with_capacity(entries.len() as u32);
        for e in entries {
            let mut a = ZendHashTable::with_capacity(7);
            a.insert("kind", e.what)?;
            a.insert("name", ext_php_rs::binary::Binary::from(e.name))?;
            a.insert("at", e.at)?;
            a.insert("waited", e.waited.as_secs_f64())?;
            let outcome = match e.outcome {
                Outcome::Acquired => "acquired",
                Outcome::Busy => "busy",
                Outcome::Failed(kind) => kind,
            };
            a.insert("outcome", outcome)?;
            a.insert("handed_over", e.handed_over)?;
            match e.held {
                Some(d) => a.insert("held", d.as_secs_f64())?,
                None => a.insert("held", ())?,
            }
            list.push(a)?;
        }
        Ok(list)
    };
    build().map_err(|e| {
        PhpException::from_message(format!("redis-lock: could not build the array: {e}"))
    })
}

pub fn functions(module: ModuleBuilder) -> ModuleBuilder {
    module
        .function(wrap_function!(redis_lock_metrics))
        .function(wrap_function!(redis_lock_metrics_text))
        .function(wrap_function!(redis_lock_journal_start))
        .function(wrap_function!(redis_lock_journal))
}
