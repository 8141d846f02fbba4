//! The scenarios: each spawns PHP threads, looks at the server from outside with a
//! connection of its own, and prints what it checked. Here what they share (the TAP
//! lines, the server seen from outside, the PHP that takes a lock and reports on it);
//! each file beside this one holds a scenario or a few of a kind.

mod churn;
mod counter;
mod holds;
mod script;
mod worker;

use crate::php::{eval, request, thread};
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

/// Runs `scenario`: Some(all passed), or None when there is no such scenario.
pub fn run(scenario: &str, dsn: &str) -> Option<bool> {
    if scenario == "script" {
        // Its own servers: the script's caller started them.
        return Some(script::script());
    }
    let mut tap = Tap { failed: 0 };
    let mut server = Server::open(dsn);
    match scenario {
        "counter" => counter::counter(&mut tap, true),
        "counter-unlocked" => counter::counter(&mut tap, false),
        "request-end" => holds::request_end(&mut tap, &mut server),
        "fatal" => holds::fatal(&mut tap, &mut server),
        "watchdog" => holds::watchdog(&mut tap, &mut server),
        "churn" => churn::churn(&mut tap, &mut server),
        "fork" => holds::fork(&mut tap, &mut server),
        "worker" => worker::worker(&mut tap, true),
        "worker-control" => worker::worker(&mut tap, false),
        "eval" => {
            let code = std::env::var("CODE").unwrap_or_default();
            let out = thread(move || request(|| println!("eval: {}", eval(&code)))).join();
            println!("{out:?}");
        }
        _ => return None,
    }
    Some(tap.failed == 0)
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
