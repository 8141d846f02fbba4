//! The pool's metrics (`metrics::snapshot`) in Prometheus's text exposition format
//! (version 0.0.4): names prefixed `redis_lock_`, counters ending `_total`, times in
//! seconds, one `name` label for the lock's folded name.

use crate::metrics::{bounds, Count, Figures, Snapshot, BUCKETS, ERROR_KINDS};
use std::fmt::Write;

/// The counters, in the order they are written.
const COUNTERS: [(Count, &str, &str); 7] = [
    (Count::Acquired, "redis_lock_acquisitions_total", "Acquisitions that succeeded."),
    (Count::Waits, "redis_lock_waits_total", "Acquisitions that found the lock busy and waited."),
    (Count::Timeouts, "redis_lock_timeouts_total", "Waits that gave up at their deadline."),
    (
        Count::HandedOver,
        "redis_lock_handovers_total",
        "Holds received from a release, not taken by a try.",
    ),
    (Count::Released, "redis_lock_releases_total", "Releases that removed a hold."),
    (Count::Lost, "redis_lock_losses_total", "Holds found taken or expired under their holder."),
    (
        Count::Renewals,
        "redis_lock_renewals_total",
        "Leases renewed by the watchdog or an extension.",
    ),
];

/// A label value, escaped as the format asks; a name that is not UTF-8 is shown lossily.
fn label(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for ch in String::from_utf8_lossy(name).chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn head(out: &mut String, metric: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {metric} {help}");
    let _ = writeln!(out, "# TYPE {metric} {kind}");
}

fn histogram(
    out: &mut String,
    metric: &str,
    help: &str,
    names: &[(String, &Figures)],
    pick: fn(&Figures) -> &([u64; BUCKETS], f64),
) {
    head(out, metric, "histogram", help);
    let bounds = bounds();
    for (name, f) in names {
        let (buckets, sum) = pick(f);
        let mut total = 0u64;
        for (i, n) in buckets.iter().enumerate() {
            total += n;
            let le = if i < bounds.len() { bounds[i].to_string() } else { "+Inf".to_string() };
            let _ = writeln!(out, "{metric}_bucket{{name=\"{name}\",le=\"{le}\"}} {total}");
        }
        let _ = writeln!(out, "{metric}_sum{{name=\"{name}\"}} {sum}");
        let _ = writeln!(out, "{metric}_count{{name=\"{name}\"}} {total}");
    }
}

/// The text a scrape gets.
pub fn prometheus(s: &Snapshot) -> String {
    let names: Vec<(String, &Figures)> = s.names.iter().map(|f| (label(&f.name), f)).collect();
    let mut out = String::with_capacity(512 + names.len() * 2048);
    for (c, metric, help) in COUNTERS {
        head(&mut out, metric, "counter", help);
        for (name, f) in &names {
            let _ = writeln!(out, "{metric}{{name=\"{name}\"}} {}", f.counts[c as usize]);
        }
    }
    let metric = "redis_lock_errors_total";
    head(&mut out, metric, "counter", "Errors of the LockException family, by kind.");
    for (name, f) in &names {
        for (c, kind) in ERROR_KINDS {
            let _ = writeln!(
                out,
                "{metric}{{name=\"{name}\",kind=\"{kind}\"}} {}",
                f.counts[c as usize]
            );
        }
    }
    histogram(
        &mut out,
        "redis_lock_wait_seconds",
        "Time acquisitions waited: 0 for one that found the lock free; a wait that timed out too.",
        &names,
        |f| &f.wait,
    );
    histogram(
        &mut out,
        "redis_lock_hold_seconds",
        "How long holds lasted, to their release or loss.",
        &names,
        |f| &f.hold,
    );
    for (metric, help, pick) in [
        (
            "redis_lock_holds",
            "Holds in progress in the pool's processes.",
            (|f: &Figures| f.holding) as fn(&Figures) -> u64,
        ),
        ("redis_lock_waiting", "Waits in progress in the pool's processes.", |f: &Figures| {
            f.waiting
        }),
    ] {
        head(&mut out, metric, "gauge", help);
        for (name, f) in &names {
            let _ = writeln!(out, "{metric}{{name=\"{name}\"}} {}", pick(f));
        }
    }
    for (metric, help, value) in [
        (
            "redis_lock_metrics_names",
            "How many lock names the metrics tell apart; more count as (other).",
            s.capacity as u64,
        ),
        (
            "redis_lock_metrics_processes",
            "Processes of the pool with a lock object now.",
            s.processes as u64,
        ),
        (
            "redis_lock_metrics_untracked_objects_total",
            "Objects left out of the gauges: the table of objects was full.",
            s.untracked,
        ),
    ] {
        head(&mut out, metric, if metric.ends_with("_total") { "counter" } else { "gauge" }, help);
        let _ = writeln!(out, "{metric} {value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::COUNTS;

    #[test]
    fn renders_cumulative_buckets_and_escaped_names() {
        let mut wait = [0u64; BUCKETS];
        wait[0] = 3;
        wait[2] = 1;
        wait[BUCKETS - 1] = 1;
        let mut counts = [0u64; COUNTS];
        counts[Count::Acquired as usize] = 4;
        counts[Count::ErrServer as usize] = 2;
        let f = Figures {
            name: b"a\"b\\c".to_vec(),
            counts,
            wait: (wait, 20.5),
            hold: ([0; BUCKETS], 0.0),
            holding: 1,
            waiting: 0,
        };
        let text =
            prometheus(&Snapshot { names: vec![f], capacity: 10, untracked: 0, processes: 1 });
        assert!(text.contains("redis_lock_acquisitions_total{name=\"a\\\"b\\\\c\"} 4\n"), "{text}");
        assert!(text.contains("redis_lock_errors_total{name=\"a\\\"b\\\\c\",kind=\"server\"} 2\n"));
        assert!(
            text.contains("redis_lock_wait_seconds_bucket{name=\"a\\\"b\\\\c\",le=\"0.001\"} 3\n")
        );
        assert!(
            text.contains("redis_lock_wait_seconds_bucket{name=\"a\\\"b\\\\c\",le=\"0.002\"} 3\n")
        );
        assert!(
            text.contains("redis_lock_wait_seconds_bucket{name=\"a\\\"b\\\\c\",le=\"0.004\"} 4\n")
        );
        assert!(
            text.contains("redis_lock_wait_seconds_bucket{name=\"a\\\"b\\\\c\",le=\"+Inf\"} 5\n")
        );
        assert!(text.contains("redis_lock_wait_seconds_count{name=\"a\\\"b\\\\c\"} 5\n"));
        assert!(text.contains("redis_lock_wait_seconds_sum{name=\"a\\\"b\\\\c\"} 20.5\n"));
        assert!(text.contains("redis_lock_holds{name=\"a\\\"b\\\\c\"} 1\n"));
        assert!(text.contains("# TYPE redis_lock_hold_seconds histogram\n"));
    }
}
