//! The scenarios: each spawns PHP threads, looks at the server from outside with a
//! connection of its own, and prints what it checked.

use crate::php::{self, eval, handled_request, handled_request_end, request, thread};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The scenario's checks so far.
struct Tap {
    failed: usize,
}

impl Tap {
    fn check(&mut self, pass: bool, name: &str, detail: impl std::fmt::Display) {
        if pass {
            println!("ok - {name}");
        } else {
            self.failed += 1;
            println!("not ok - {name}");
            for line in detail.to_string().lines() {
                println!("    {line}");
            }
        }
    }
}

/// The server, seen from outside the module.
struct Server(redis::Connection);

impl Server {
    fn open(dsn: &str) -> Server {
        let client = redis::Client::open(dsn).expect("REDIS_LOCK_TEST_DSN is a redis:// address");
        Server(client.get_connection().expect("the test server answers"))
    }

    fn exists(&mut self, key: &str) -> bool {
        redis::cmd("EXISTS").arg(key).query::<i64>(&mut self.0).unwrap_or(0) == 1
    }

    /// Whether `key` exists once a release already sent has landed: releases at
    /// request end go without waiting for their answer, on the PHP thread's own
    /// connection, so this one may ask first. It looks again for up to half a second.
    fn settled(&mut self, key: &str) -> bool {
        let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
        while self.exists(key) {
            if std::time::Instant::now() > until {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        false
    }

    fn pttl(&mut self, key: &str) -> i64 {
        redis::cmd("PTTL").arg(key).query(&mut self.0).unwrap_or(-3)
    }

    /// Client connections other than this one: (command connections, subscribers).
    fn clients(&mut self) -> (usize, usize) {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut self.0).unwrap_or_default();
        let subscribed =
            |l: &&str| l.split(' ').any(|f| f.starts_with("flags=") && f.contains('P'));
        let subscribers = list.lines().filter(subscribed).count();
        (list.lines().count().saturating_sub(1 + subscribers), subscribers)
    }

    /// `clients()` once it has at most `n` command connections, or after 3 s (a closed
    /// socket takes the server a moment to notice).
    fn clients_down_to(&mut self, n: usize) -> (usize, usize) {
        let end = Instant::now() + Duration::from_secs(3);
        loop {
            let c = self.clients();
            if c.0 <= n || Instant::now() > end {
                return c;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

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

/// Runs `scenario`: Some(all passed), or None when there is no such scenario.
pub fn run(scenario: &str, dsn: &str) -> Option<bool> {
    if scenario == "script" {
        // Its own servers: the script's caller started them.
        return Some(script());
    }
    let mut tap = Tap { failed: 0 };
    let mut server = Server::open(dsn);
    match scenario {
        "counter" => counter(&mut tap, true),
        "counter-unlocked" => counter(&mut tap, false),
        "request-end" => request_end(&mut tap, &mut server),
        "fatal" => fatal(&mut tap, &mut server),
        "watchdog" => watchdog(&mut tap, &mut server),
        "churn" => churn(&mut tap, &mut server),
        "fork" => fork(&mut tap, &mut server),
        "worker" => worker(&mut tap, true),
        "worker-control" => worker(&mut tap, false),
        "eval" => {
            let code = std::env::var("CODE").unwrap_or_default();
            let out = thread(move || request(|| println!("eval: {}", eval(&code)))).join();
            println!("{out:?}");
        }
        _ => return None,
    }
    Some(tap.failed == 0)
}

const THREADS: usize = 16;

/// 16 threads, 100 requests each, one lock around a read-increment-write of a file
/// that loses updates without it (`counter-unlocked` shows that it does).
fn counter(tap: &mut Tap, locked: bool) {
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

/// Code that takes lock `key` into `$GLOBALS[name]`, its token into `$GLOBALS[name.'_t']`.
fn take(name: &str, key: &str, options: &str) -> String {
    format!(
        "$GLOBALS['{name}'] = new Lock('{key}', 0, 30{options}); $GLOBALS['{name}_t'] = $GLOBALS['{name}']->addLock();
         echo $GLOBALS['{name}_t'] === false ? \"{name}: not taken\n\" : '';"
    )
}

/// Code that reports whether `$GLOBALS[name]` still holds, then releases it.
fn held_then_release(name: &str) -> String {
    format!(
        "echo $GLOBALS['{name}']->isLocked() ? 'held' : 'lost', ' ',
              $GLOBALS['{name}']->releaseLock($GLOBALS['{name}_t']) ? 'released' : 'not released';"
    )
}

/// Thread A holds a lock in an open request while thread B's request ends with a lock
/// it never released: B's is released, A's is not.
fn request_end(tap: &mut Tap, server: &mut Server) {
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
fn fatal(tap: &mut Tap, server: &mut Server) {
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
fn watchdog(tap: &mut Tap, server: &mut Server) {
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

/// 1,000 requests in waves of 8 new threads, 5 requests each; every thread ends after
/// its wave. Connections and memory must not grow with the threads that came and went.
fn churn(tap: &mut Tap, server: &mut Server) {
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

/// Thread A holds a lock; thread B forks (pcntl_fork) in the middle of its request; the
/// child takes a lock of its own and ends its request. The parent's lock is untouched.
fn fork(tap: &mut Tap, server: &mut Server) {
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

/// FrankenPHP's worker mode, as its worker thread runs it: `php_request_startup`
/// and the worker script's boot (the "dummy request"), which FrankenPHP ends with
/// its request shutdown when the script first calls `frankenphp_handle_request()`;
/// then each handled request between a request startup (`sapi_activate`) and a
/// request shutdown (`sapi_deactivate`), objects and globals living on; then the
/// last call's startup, which returns false, and `php_request_shutdown`. 4 threads,
/// 3 handled requests each. Under the SAPI named `frankenphp`, the end of each of
/// those requests (the boot's included) releases what was taken during it, except
/// `auto_release => false`; a lock taken in the loop between handled requests lives
/// until the script ends. The control runs the same loop under another name.
fn worker(tap: &mut Tap, frankenphp: bool) {
    const WORKERS: usize = 4;
    const HANDLED: usize = 3;
    let threads: Vec<_> = (0..WORKERS)
        .map(|w| {
            thread(move || {
                let mut server = Server::open(&std::env::var("REDIS_LOCK_TEST_DSN").unwrap_or_default());
                // The control runs on the same server after the `auto_release => false`
                // locks of the first run: keys of its own.
                let key = |what: &str| format!("zts:{}:{w}:{what}", if frankenphp { "worker" } else { "control" });
                let mut outs = Vec::new();
                let last = request(|| {
                    eval(&format!(
                        "{}{}",
                        take("boot", &key("boot"), ""),
                        take("boot_keep", &key("boot_keep"), ", ['auto_release' => false]")
                    ));
                    outs.push(handled_request_end());
                    outs.push(format!("after boot: boot {} boot_keep {}", server.settled(&key("boot")), server.settled(&key("boot_keep"))));
                    for h in 1..=HANDLED {
                        let out = handled_request(|| {
                            let previous = if h > 1 {
                                "echo $GLOBALS['req']->releaseLock($GLOBALS['req_t']) ? 'previous released ' : 'previous gone ';"
                            } else {
                                ""
                            };
                            eval(&format!(
                                "{previous}{}{}",
                                take("req", &key(&format!("req:{h}")), ""),
                                take("keep", &key(&format!("keep:{h}")), ", ['auto_release' => false]")
                            ));
                        });
                        outs.push(out);
                        outs.push(format!(
                            "after {h}: req {} keep {}",
                            server.settled(&key(&format!("req:{h}"))),
                            server.settled(&key(&format!("keep:{h}")))
                        ));
                        // The loop's body, between handled requests.
                        if h == 1 {
                            eval(&take("between", &key("between"), ""));
                        }
                    }
                    outs.push(format!("after the loop: between {}", server.settled(&key("between"))));
                    php::request_startup_only();
                });
                outs.push(last);
                outs.push(format!("after the script: between {}", server.settled(&key("between"))));
                outs
            })
        })
        .collect();
    let outs: Vec<Vec<String>> =
        threads.into_iter().map(|t| t.join().unwrap_or_default()).collect();
    let expected: Vec<String> =
        ["".into(), format!("after boot: boot {} boot_keep true", !frankenphp)]
            .into_iter()
            .chain((1..=HANDLED).flat_map(|h| {
                [
                    match (h, frankenphp) {
                        (1, _) => String::new(),
                        (_, true) => "previous gone ".into(),
                        (_, false) => "previous released ".into(),
                    },
                    format!("after {h}: req {} keep true", !frankenphp),
                ]
            }))
            .chain([
                "after the loop: between true".into(),
                String::new(),
                "after the script: between false".into(),
            ])
            .collect();
    let right = outs.iter().filter(|o| **o == expected).count();
    if frankenphp {
        tap.check(right == WORKERS, &format!("each request's end (the boot's included) released what it took, kept auto_release => false and the loop's lock ({right} of {WORKERS} workers)"), format!("{outs:?}"));
        let (a, d) = (
            php::SAPI_ACTIVATIONS.load(Ordering::Relaxed),
            php::SAPI_DEACTIVATIONS.load(Ordering::Relaxed),
        );
        tap.check(
            a >= WORKERS * (HANDLED + 2) && d >= WORKERS * (HANDLED + 2),
            &format!("the SAPI's own hooks still ran ({a} activations, {d} deactivations)"),
            "",
        );
    } else {
        tap.check(right == WORKERS, &format!("control: under another SAPI's name nothing is released before the script ends ({right} of {WORKERS} workers)"), format!("{outs:?}"));
    }
}

/// `script`: the PHP file `$SCRIPT` on one PHP thread per line of the file `$ARGS`,
/// all at once, each in one request with `$argv = [$SCRIPT, that line]`. Tools that
/// want PHP threads rather than processes use it (the nemesis's `--threads`). When
/// every thread has ended, one line per thread: `thread N: ended|failed`, then what
/// it printed, indented. "failed" is a fatal error, an uncaught throwable or `exit`.
/// True when every thread ended.
fn script() -> bool {
    let (Ok(path), Ok(args)) = (std::env::var("SCRIPT"), std::env::var("ARGS")) else {
        println!(
            "not ok - script needs SCRIPT (a PHP file) and ARGS (a file, one argument per thread)"
        );
        return false;
    };
    let Ok(lines) = std::fs::read_to_string(&args) else {
        println!("not ok - script: cannot read ARGS {args}");
        return false;
    };
    let threads: Vec<_> = lines
        .lines()
        .filter(|l| !l.is_empty())
        .map(|arg| {
            // Both strings reach PHP as hex, so no quoting can break the code.
            let code = format!(
                "$argv = [hex2bin('{}'), hex2bin('{}')]; $argc = 2;
                 try {{ require $argv[0]; echo \"\\n#ended\\n\"; }}
                 catch (Throwable $e) {{ echo 'uncaught ', $e, \"\\n\"; }}",
                hex(&path),
                hex(arg)
            );
            thread(move || {
                let mut completed = false;
                let out = request(|| completed = eval(&code));
                (completed, out)
            })
        })
        .collect();
    let mut all = true;
    for (i, t) in threads.into_iter().enumerate() {
        let (completed, out) = t.join().unwrap_or((false, "the thread panicked".to_owned()));
        // The marker is printed only when the file ran to its end (`exit` unwinds past it).
        let ended = completed && out.trim_end().ends_with("#ended");
        let out = out.trim_end().trim_end_matches("#ended").trim_end();
        all &= ended;
        println!("thread {i}: {}", if ended { "ended" } else { "failed" });
        for line in out.lines() {
            println!("    {line}");
        }
    }
    all
}

/// Bytes as lowercase hex, for PHP's hex2bin().
fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}
