//! `worker` and `worker-control`: FrankenPHP's worker mode, and its control under
//! another SAPI's name.

use super::{take, Server, Tap};
use crate::php::{self, eval, handled_request, handled_request_end, request, thread};
use std::sync::atomic::Ordering;

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
pub(super) fn worker(tap: &mut Tap, frankenphp: bool) {
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
