//! A debug trace of durable checks and Sentinel discovery, for the nemesis (issue
//! 58: where a durable wait's time goes through a failover). Off unless the
//! environment names a file, `REDIS_LOCK_TRACE=/path`, read once per process: then
//! each durable check (`topology::renew::on_conn`) and each master a sentinel named
//! (`topology::sentinel`) appends one JSON line there, stamped on CLOCK_MONOTONIC
//! (PHP's `hrtime()`), with the process and the thread. A debug switch, not a
//! setting: it changes nothing the lock does.

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The trace file, if the environment names one (opened for appending at first use).
fn sink() -> Option<&'static Mutex<File>> {
    static SINK: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    SINK.get_or_init(|| {
        let path = std::env::var_os("REDIS_LOCK_TRACE")?;
        File::options().create(true).append(true).open(path).ok().map(Mutex::new)
    })
    .as_ref()
}

/// Whether the trace is on.
pub fn on() -> bool {
    sink().is_some()
}

/// Now on CLOCK_MONOTONIC, in nanoseconds: the clock PHP's `hrtime()` reads.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given, which lives on this stack.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
}

/// A JSON string of `s`.
pub fn json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Appends the event `ev` that began at `t0` (`now_ns`), with `fields` (a JSON
/// object's members, comma-separated, already encoded), as one line written whole.
pub fn write(ev: &str, t0: u64, fields: &str) {
    let Some(sink) = sink() else { return };
    // SAFETY: getpid and gettid take no arguments and cannot fail.
    let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
    let line = format!(
        "{{\"ev\":{},\"t\":{t0},\"dt_us\":{},\"pid\":{pid},\"tid\":{tid},{fields}}}\n",
        json(ev),
        now_ns().saturating_sub(t0) / 1000
    );
    if let Ok(mut f) = sink.lock() {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The address of the peer of socket `fd` ("127.0.0.1:6379"), or "?".
pub fn peer(fd: std::os::unix::io::RawFd) -> String {
    use std::os::unix::io::FromRawFd;
    // SAFETY: the socket stays owned by its connection: ManuallyDrop never closes it.
    let s = std::mem::ManuallyDrop::new(unsafe { std::net::TcpStream::from_raw_fd(fd) });
    s.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "?".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace line is JSON whatever a message holds: quotes, backslashes and control
    /// characters escaped.
    #[test]
    fn strings_are_json() {
        assert_eq!(json("plain"), "\"plain\"");
        assert_eq!(json("a \"b\" \\ c\n\u{1}"), "\"a \\\"b\\\" \\\\ c\\u000a\\u0001\"");
        assert_eq!(json("café"), "\"café\"");
    }
}
