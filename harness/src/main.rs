//! The module under threads, in one process: a thread-safe PHP engine started once,
//! under a SAPI of our own, then PHP threads that run requests against a real server.
//! Each scenario prints TAP lines and `# figure:` lines; `tools/test/test-zts.sh` runs them.
//!
//! Usage: redis-lock-zts-harness MODULE SCENARIO
//!   MODULE    the redis_lock module built against the same PHP
//!   SCENARIO  counter | counter-unlocked | request-end | fatal | watchdog | churn |
//!             fork | worker | worker-control; script (runs the file $SCRIPT on
//!             a thread per line of the file $ARGS: tools/nemesis/run.php --threads);
//!             or eval (runs $CODE in one request on one PHP thread and prints its
//!             output: for trying things out)
//! The server is REDIS_LOCK_TEST_DSN's (tools/test/with-redis.sh).

mod php;
mod scenarios;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(module), Some(scenario)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: {} MODULE SCENARIO", args[0]);
        return ExitCode::from(2);
    };
    let Ok(dsn) = std::env::var("REDIS_LOCK_TEST_DSN") else {
        eprintln!("REDIS_LOCK_TEST_DSN is not set: run under tools/test/with-redis.sh");
        return ExitCode::from(2);
    };
    // FrankenPHP's worker mode is recognised by the SAPI's name; the control runs the
    // same loop under another name.
    let sapi_name = if scenario == "worker" { "frankenphp" } else { "redis-lock-harness" };
    php::start(sapi_name, module, &dsn);
    let passed = scenarios::run(scenario, &dsn);
    php::stop();
    match passed {
        Some(true) => ExitCode::SUCCESS,
        Some(false) => ExitCode::FAILURE,
        None => {
            eprintln!("unknown scenario {scenario}");
            ExitCode::from(2)
        }
    }
}
