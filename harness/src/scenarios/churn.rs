//! `churn`: threads that come and go, and what they leave behind (connections, memory,
//! holds).

use super::{Server, Tap};
use crate::php::{eval, request, thread};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

/// Resident memory of this process, in KiB.
fn rss_kib() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// 1,000 requests in waves of 8 new threads, 5 requests each; every thread ends after
/// its wave. Connections and memory must not grow with the threads that came and went.
pub(super) fn churn(tap: &mut Tap, server: &mut Server) {
    const WAVES: usize = 25;
    const PER_WAVE: usize = 8;
    const REQUESTS: usize = 5;
    let served = Arc::new(AtomicUsize::new(0));
    let (mut most_alive, mut rss_early, mut rss_late, mut odd) = (0, 0, 0, Vec::new());
    let rss_before = rss_kib();
    for wave in 0..WAVES {
        let (ran, leave) =
            (Arc::new(Barrier::new(PER_WAVE + 1)), Arc::new(Barrier::new(PER_WAVE + 1)));
        let threads: Vec<_> = (0..PER_WAVE)
            .map(|i| {
                let (ran, leave, served) = (ran.clone(), leave.clone(), served.clone());
                thread(move || {
                    let mut outs = String::new();
                    for r in 0..REQUESTS {
                        // One in five forgets its lock: request end releases it.
                        outs += &request(|| {
                            eval(&format!(
                                "$l = new Lock('zts:churn:{}', 10, 10); $t = $l->addLock();
                                 if ($t === false) echo 'timed out';
                                 elseif ({} && !$l->releaseLock($t)) echo 'not released';",
                                (wave * PER_WAVE + i) % 4,
                                r != 0
                            ));
                        });
                        served.fetch_add(1, Ordering::Relaxed);
                    }
                    ran.wait();
                    leave.wait();
                    outs
                })
            })
            .collect();
        ran.wait();
        most_alive = most_alive.max(server.clients().0);
        leave.wait();
        for t in threads {
            let out = t.join().unwrap_or_else(|_| "panicked".into());
            if !out.is_empty() {
                odd.push(out);
            }
        }
        if wave == 4 {
            rss_early = rss_kib();
        }
        if wave == WAVES - 1 {
            rss_late = rss_kib();
        }
    }
    let (left, subscribers) = server.clients_down_to(0);
    let total = served.load(Ordering::Relaxed);
    tap.check(
        odd.is_empty() && total == WAVES * PER_WAVE * REQUESTS,
        &format!("{total} requests on {} threads that came and went", WAVES * PER_WAVE),
        odd.join("\n"),
    );
    tap.check(
        most_alive <= PER_WAVE,
        &format!("at most one connection per live thread ({most_alive} with {PER_WAVE} alive)"),
        "",
    );
    tap.check(
        left == 0,
        &format!("no command connection is left once the threads ended ({left})"),
        "",
    );
    tap.check(
        subscribers <= 1,
        &format!("at most one wake subscriber for the process ({subscribers})"),
        "",
    );
    let held: Vec<String> =
        (0..4).map(|k| format!("zts:churn:{k}")).filter(|k| server.settled(k)).collect();
    tap.check(held.is_empty(), "no lock is left held", held.join(" "));
    // The table of holds, as phpinfo() shows it, from a new thread.
    let entries = thread(|| {
        request(|| {
            eval(r#"ob_start(); phpinfo(INFO_MODULES); $i = strip_tags(ob_get_clean());
                    echo preg_match('/locks held by this process\D*(\d+)/', $i, $m) ? $m[1] : 'not shown';"#);
        })
    })
    .join()
    .unwrap_or_default();
    tap.check(entries == "0", &format!("no entry is left in the table of holds ({entries})"), "");
    let growth = rss_late as i64 - rss_early as i64;
    tap.check(growth < 4096, &format!("memory does not grow with threads that came and went (+{growth} KiB from 40 to 200 threads)"), "");
    println!("# figure: command connections: at most {most_alive} with {PER_WAVE} threads alive; {left} after 1,000 requests on 200 threads, and {subscribers} wake subscriber for the process");
    println!("# figure: resident memory {rss_before} KiB at start, {rss_early} KiB after 40 threads, {rss_late} KiB after 200");
    // Memory per live thread: 64 threads parked in an open request, without and then
    // with a lock cycle done (our share is the difference: a connection and its
    // buffers), alternated and repeated, as the allocator reuses what it freed.
    const PARKED: usize = 64;
    let mut per = [Vec::new(), Vec::new()];
    for round in 0..6 {
        let with_lock = round % 2 == 1;
        let (ran, leave) = (Arc::new(Barrier::new(PARKED + 1)), Arc::new(Barrier::new(PARKED + 1)));
        let before = rss_kib();
        let threads: Vec<_> = (0..PARKED)
            .map(|i| {
                let (ran, leave) = (ran.clone(), leave.clone());
                thread(move || {
                    request(|| {
                        if with_lock {
                            eval(&format!("$l = new Lock('zts:mem:{i}', 0, 10); $l->releaseLock($l->addLock());"));
                        } else {
                            eval("$x = 1;");
                        }
                        ran.wait();
                        leave.wait();
                    })
                })
            })
            .collect();
        ran.wait();
        per[usize::from(with_lock)].push((rss_kib() as i64 - before as i64) / PARKED as i64);
        leave.wait();
        for t in threads {
            let _ = t.join();
        }
    }
    println!("# figure: memory per live PHP thread (KiB, 3 rounds of {PARKED}): {:?} without the module's work, {:?} after a lock cycle", per[0], per[1]);
}
