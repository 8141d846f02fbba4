//! Who holds a lock (`owner_info`): the host, pid, SAPI and script of the process
//! that acquired it, and when. It is written with the hold, by the script that
//! takes it (or by the waiter's queueing, for a hold handed over), beside the hold
//! in the same slot, and it expires with it. `inspect()` shows it; the token never.
//!
//! The SAPI and the script are the binding's to know: it installs `describe` at
//! module startup. The core fills in the host and the pid.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// What the binding knows of the current request: the SAPI's name and the script
/// (the request URI under a web SAPI, the script's path under the CLI).
pub type Describe = fn() -> (String, String);

static DESCRIBE: OnceLock<Describe> = OnceLock::new();

/// Installs the binding's `describe` (module startup; later calls are ignored).
pub fn install(describe: Describe) {
    let _ = DESCRIBE.set(describe);
}

/// One holder, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub host: String,
    pub pid: u32,
    pub sapi: String,
    pub script: String,
    /// Unix time, in seconds, of the acquisition (of the queueing, for a waiter).
    pub since: f64,
}

/// The record for an acquisition made now by this process: fields separated by NUL,
/// which none of them can contain (they come from C strings).
pub fn record() -> Vec<u8> {
    let (sapi, script) = DESCRIBE.get().map(|d| d()).unwrap_or_default();
    let since =
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let mut out = Vec::with_capacity(64 + script.len());
    for part in [
        host().as_bytes(),
        crate::fork_wiped::pid().to_string().as_bytes(),
        sapi.as_bytes(),
        script.as_bytes(),
    ] {
        out.extend(part.iter().filter(|&&b| b != 0));
        out.push(0);
    }
    out.extend_from_slice(format!("{since:.6}").as_bytes());
    out
}

/// Reads a record back; `None` for anything else (an empty field, another writer).
pub fn parse(raw: &[u8]) -> Option<Owner> {
    let text = String::from_utf8_lossy(raw);
    let mut parts = text.split('\0');
    let host = parts.next()?.to_string();
    let pid = parts.next()?.parse().ok()?;
    let sapi = parts.next()?.to_string();
    let script = parts.next()?.to_string();
    let since = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some(Owner { host, pid, sapi, script, since })
}

/// The host's name (`gethostname()`), read once per process: a host is renamed
/// rarely, and never while a request holds a lock.
fn host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most buf.len() bytes into buf.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc != 0 {
            return String::new();
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back() {
        let raw = record();
        let o = parse(&raw).expect("parses");
        assert_eq!(o.pid, std::process::id());
        assert!(!o.host.is_empty());
        assert!(o.since > 1.7e9);
        assert_eq!(parse(b"x"), None);
        assert_eq!(
            parse(b"h\x001\x00cli\x00/s.php\x001.5"),
            Some(Owner {
                host: "h".into(),
                pid: 1,
                sapi: "cli".into(),
                script: "/s.php".into(),
                since: 1.5
            })
        );
    }
}
