//! `counter` and `counter-unlocked`: many threads' requests around one lock.

use super::Tap;
use crate::php::{eval, request, thread};
use std::sync::Arc;
use std::time::Instant;

const THREADS: usize = 16;

/// 16 threads, 100 requests each, one lock around a read-increment-write of a file
/// that loses updates without it (`counter-unlocked` shows that it does).
pub(super) fn counter(tap: &mut Tap, locked: bool) {
    const REQUESTS: usize = 100;
    let file = std::env::temp_dir().join(format!("redis-lock-zts-counter.{}", std::process::id()));
    std::fs::write(&file, "0").expect("temp file");
    let code = format!(
        r#"$f = '{}';
        $l = new Lock('zts:counter', 30, 10);
        $t = {} ? $l->addLock() : 'none';
        if ($t === false) {{ echo "timed out\n"; return; }}
        $n = (int) file_get_contents($f);
        usleep(100);
        file_put_contents($f, $n + 1);
        if ({} && !$l->releaseLock($t)) echo "not released\n";"#,
        file.display(),
        locked,
        locked
    );
    let code = Arc::new(code);
    let start = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let code = code.clone();
            thread(move || {
                let mut odd = Vec::new();
                for _ in 0..REQUESTS {
                    let out = request(|| {
                        eval(&code);
                    });
                    if !out.is_empty() {
                        odd.push(out);
                    }
                }
                odd
            })
        })
        .collect();
    let odd: Vec<String> = threads.into_iter().flat_map(|t| t.join().unwrap_or_default()).collect();
    let elapsed = start.elapsed();
    let count: usize =
        std::fs::read_to_string(&file).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
    let _ = std::fs::remove_file(&file);
    let total = THREADS * REQUESTS;
    if locked {
        tap.check(odd.is_empty(), "every request took and released the lock", odd.join("\n"));
        tap.check(count == total, &format!("the counter is exact: {count} of {total}"), "");
        println!(
            "# figure: {total} locked requests on {THREADS} threads in {} ms",
            elapsed.as_millis()
        );
    } else {
        tap.check(
            count < total,
            &format!("control: without the lock the counter loses updates ({count} of {total})"),
            "",
        );
    }
}
