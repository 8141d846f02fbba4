//! Whose holds a thread's end releases, and who renews them: `request-end`, `fatal`,
//! `fork` and `watchdog`.

use super::{held_then_release, take, Server, Tap};
use crate::php::{self, eval, request, thread};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The blocked-signal masks (`SigBlk`) of this process's threads with this name.
fn threads_named(name: &str) -> Vec<u64> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    tasks
        .filter_map(Result::ok)
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .map(|t| {
            std::fs::read_to_string(t.path().join("status"))
                .ok()
                .and_then(|s| {
                    s.lines().find_map(|l| l.strip_prefix("SigBlk:").map(|m| m.trim().to_owned()))
                })
                .and_then(|m| u64::from_str_radix(&m, 16).ok())
                .unwrap_or(0)
        })
        .collect()
}

/// Thread A holds a lock in an open request while thread B's request ends with a lock
/// it never released: B's is released, A's is not.
pub(super) fn request_end(tap: &mut Tap, server: &mut Server) {
    let (taken, checked) = (Arc::new(Barrier::new(3)), Arc::new(Barrier::new(3)));
    let (t1, c1) = (taken.clone(), checked.clone());
    let a = thread(move || {
        request(|| {
            eval(&take("a", "zts:end:a", ""));
            t1.wait();
            c1.wait();
            eval(&held_then_release("a"));
        })
    });
    let (t2, c2) = (taken.clone(), checked.clone());
    let b = thread(move || {
        let out = request(|| {
            eval(&take("b", "zts:end:b", ""));
        });
        t2.wait();
        c2.wait();
        out
    });
    taken.wait();
    let (a_kept, b_gone) = (server.settled("zts:end:a"), !server.settled("zts:end:b"));
    checked.wait();
    let (a_out, b_out) = (a.join().unwrap_or_default(), b.join().unwrap_or_default());
    tap.check(b_out.is_empty(), "thread B took its lock", &b_out);
    tap.check(b_gone, "thread B's request end released B's lock", "");
    tap.check(a_kept, "thread B's request end left thread A's lock held", "");
    tap.check(a_out == "held released", "thread A still held its lock and released it", &a_out);
    tap.check(!server.settled("zts:end:a"), "nothing is left held", "");
}

/// Thread A dies of a fatal error while holding a lock; thread B holds one in an
/// open request meanwhile.
pub(super) fn fatal(tap: &mut Tap, server: &mut Server) {
    let (taken, checked) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let (t1, c1) = (taken.clone(), checked.clone());
    let b = thread(move || {
        request(|| {
            eval(&take("b", "zts:fatal:b", ""));
            t1.wait();
            c1.wait();
            eval(&held_then_release("b"));
        })
    });
    taken.wait();
    let a = thread(|| {
        let mut survived = true;
        let out = request(|| {
            eval(&take("a", "zts:fatal:a", ""));
            // Allowed memory size exhausted: a fatal error, the engine bails out.
            survived = eval(
                "ini_set('memory_limit', '16M'); $x = str_repeat('x', 64 << 20); echo 'survived';",
            );
        });
        (survived, out)
    });
    let (survived, a_out) = a.join().unwrap_or((true, String::new()));
    tap.check(
        !survived && a_out.contains("Allowed memory size"),
        "thread A died of a fatal error",
        &a_out,
    );
    tap.check(!server.settled("zts:fatal:a"), "its request end released thread A's lock", "");
    tap.check(server.settled("zts:fatal:b"), "thread B's lock stayed held", "");
    checked.wait();
    let b_out = b.join().unwrap_or_default();
    tap.check(b_out == "held released", "thread B still held its lock and released it", &b_out);
}

/// Four threads hold auto-renewed locks with a 300 ms lease for 1.2 s, four leases.
pub(super) fn watchdog(tap: &mut Tap, server: &mut Server) {
    const HOLDERS: usize = 4;
    let (taken, done) = (Arc::new(Barrier::new(HOLDERS + 1)), Arc::new(Barrier::new(HOLDERS + 1)));
    let threads: Vec<_> = (0..HOLDERS)
        .map(|i| {
            let (taken, done) = (taken.clone(), done.clone());
            thread(move || {
                request(|| {
                    eval(&format!(
                        "$GLOBALS['w'] = new Lock('zts:dog:{i}', 0, 0.3, ['auto_renew' => true]);
                         $GLOBALS['w_t'] = $GLOBALS['w']->addLock();
                         echo $GLOBALS['w_t'] === false ? 'not taken ' : '';"
                    ));
                    taken.wait();
                    done.wait();
                    eval(&held_then_release("w"));
                })
            })
        })
        .collect();
    taken.wait();
    let start = Instant::now();
    let mut lowest = i64::MAX;
    while start.elapsed() < Duration::from_millis(1200) {
        for i in 0..HOLDERS {
            lowest = lowest.min(server.pttl(&format!("zts:dog:{i}")));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let dogs = threads_named("rl-watchdog");
    done.wait();
    let outs: Vec<String> = threads.into_iter().map(|t| t.join().unwrap_or_default()).collect();
    tap.check(
        lowest > 0,
        &format!("four threads' locks stayed held for 4 leases (lowest PTTL seen {lowest} ms)"),
        "",
    );
    tap.check(
        dogs.len() == 1,
        &format!("one watchdog thread renews them all ({} running)", dogs.len()),
        "",
    );
    // Every signal a process gets from outside (1 to 31, less SIGKILL and SIGSTOP,
    // which cannot be blocked) is blocked on it: PHP's own handlers never run there.
    let wanted = (1..=31u32).filter(|&s| s != 9 && s != 19).fold(0u64, |m, s| m | 1 << (s - 1));
    let mask = dogs.first().copied().unwrap_or(0);
    tap.check(
        mask & wanted == wanted,
        &format!("the watchdog thread blocks signals (SigBlk {mask:016x})"),
        "",
    );
    tap.check(
        outs.iter().all(|o| o == "held released"),
        "each thread still held its lock and released it",
        outs.join("\n"),
    );
}

/// Thread A holds a lock; thread B forks (pcntl_fork) in the middle of its request; the
/// child takes a lock of its own and ends its request. The parent's lock is untouched.
pub(super) fn fork(tap: &mut Tap, server: &mut Server) {
    let (taken, checked) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let (t1, c1) = (taken.clone(), checked.clone());
    let a = thread(move || {
        request(|| {
            eval(&take("a", "zts:fork:a", ""));
            t1.wait();
            c1.wait();
            eval(&held_then_release("a"));
        })
    });
    taken.wait();
    let parent = std::process::id();
    let b = thread(move || {
        request(|| {
            eval(&format!(
                "$pid = pcntl_fork();
                 if ($pid === 0) {{ {} }}
                 else {{ pcntl_waitpid($pid, $status); echo 'child exit ', pcntl_wexitstatus($status); }}",
                take("c", "zts:fork:child", "")
            ));
            // SAFETY: getpid and _exit are async-signal-safe; the child ends its request
            // first, as a forked PHP child does.
            if unsafe { libc::getpid() } as u32 != parent {
                let out = php::take_output();
                // SAFETY: as above, inside this request.
                unsafe { ext_php_rs::ffi::php_request_shutdown(std::ptr::null_mut()) };
                unsafe { libc::_exit(if out.is_empty() { 0 } else { 3 }) };
            }
        })
    });
    let b_out = b.join().unwrap_or_default();
    tap.check(
        b_out == "child exit 0",
        "the forked child took a lock of its own and ended its request",
        &b_out,
    );
    tap.check(
        !server.settled("zts:fork:child"),
        "the child's request end released the child's lock",
        "",
    );
    tap.check(
        server.settled("zts:fork:a"),
        "the child's request end left the parent's other thread's lock held",
        "",
    );
    checked.wait();
    let a_out = a.join().unwrap_or_default();
    tap.check(a_out == "held released", "thread A still held its lock and released it", &a_out);
}
