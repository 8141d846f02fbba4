//! Whether a server can evict lock keys: asked as a connection to it is made, in the
//! same write as its `PING` (`endpoint::open`), and told once per process per address
//! (`stats::evicting`: the `evicting_servers` counter and an `E_WARNING`).
//!
//! A lock key carries a TTL, so a `volatile-*` policy can evict it as well as an
//! `allkeys-*` one: only `maxmemory-policy noeviction`, or `maxmemory 0` (no limit),
//! keeps it. The server is asked `CONFIG GET maxmemory maxmemory-policy`; refused (an
//! ACL without `CONFIG`, a renamed command), `INFO memory` on the same connection;
//! refused both, nothing is said. What a server refused is remembered per address and
//! user, so that a later connection asks only what it answers, in its first write; a
//! server found evicting, and told, is not asked again.
//!
//! The memory is the process's (threads share it) and starts empty in a forked child,
//! which counts and tells for itself, as `stats` does.

use crate::stats;
use redis::{ConnectionAddr, ConnectionInfo, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard};

/// What a server said of its memory limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// `maxmemory-policy` as the server named it, lower-cased; a character outside
    /// `[a-z0-9_-]` is shown as `?`, and no more than 64 are kept (it goes into a
    /// message).
    pub policy: String,
    /// `maxmemory`, in bytes; 0 is no limit.
    pub maxmemory: u64,
}

impl Memory {
    /// Whether a key with a TTL (a lock's) can be evicted: a limit, and any policy but
    /// `noeviction` (`volatile-*` evicts keys with a TTL, `allkeys-*` any key).
    pub fn can_evict(&self) -> bool {
        self.maxmemory > 0 && self.policy != "noeviction"
    }
}

/// Reads the reply to `CONFIG GET maxmemory maxmemory-policy`: names and values as a
/// flat array (RESP2, and RESP3's map as `reply` reads it) or as a map (RESP3 read by
/// redis-rs). `None` when it is anything else, or lacks either setting.
pub fn from_config(reply: &Value) -> Option<Memory> {
    let pairs: Vec<(&Value, &Value)> = match reply {
        Value::Array(items) if items.len() % 2 == 0 => {
            items.chunks_exact(2).map(|p| (&p[0], &p[1])).collect()
        }
        Value::Map(pairs) => pairs.iter().map(|(k, v)| (k, v)).collect(),
        _ => return None,
    };
    let (mut policy, mut maxmemory) = (None, None);
    for (name, value) in pairs {
        match text(name)?.to_ascii_lowercase().as_str() {
            "maxmemory-policy" => policy = Some(policy_name(&text(value)?)),
            "maxmemory" => maxmemory = Some(number(value)?),
            _ => {}
        }
    }
    Some(Memory { policy: policy?, maxmemory: maxmemory? })
}

/// Reads the reply to `INFO memory`: its `maxmemory:` and `maxmemory_policy:` lines.
/// `None` when it is not text, or lacks either line.
pub fn from_info(reply: &Value) -> Option<Memory> {
    let text = text(reply)?;
    let (mut policy, mut maxmemory) = (None, None);
    for line in text.lines() {
        match line.trim_end_matches('\r').split_once(':') {
            Some(("maxmemory_policy", v)) => policy = Some(policy_name(v)),
            Some(("maxmemory", v)) => maxmemory = Some(v.trim().parse().ok()?),
            _ => {}
        }
    }
    Some(Memory { policy: policy?, maxmemory: maxmemory? })
}

/// A reply's text: a bulk, simple or verbatim string.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        _ => None,
    }
}

/// A number of bytes: as text (what servers send), or an integer.
fn number(v: &Value) -> Option<u64> {
    match v {
        Value::Int(n) => u64::try_from(*n).ok(),
        v => text(v)?.trim().parse().ok(),
    }
}

/// A policy's name as `Memory::policy` keeps it.
fn policy_name(raw: &str) -> String {
    raw.trim()
        .chars()
        .take(64)
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-' | '_') => c,
            _ => '?',
        })
        .collect()
}

/// What a connection asks of its server's memory limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Question {
    Config,
    Info,
}

impl Question {
    /// The command, its name first.
    pub(super) fn command(self) -> &'static [&'static [u8]] {
        match self {
            Question::Config => &[b"CONFIG", b"GET", b"maxmemory", b"maxmemory-policy"],
            Question::Info => &[b"INFO", b"memory"],
        }
    }
}

/// One server, as a connection to it is made: its address (as messages show it, no
/// credentials, no database) and the user the connection speaks as.
pub(super) struct Server {
    addr: String,
    user: String,
}

impl Server {
    pub(super) fn of(info: &ConnectionInfo) -> Server {
        let addr = match info.addr() {
            ConnectionAddr::Tcp(host, port) => format!("redis://{}:{port}", bracket(host)),
            ConnectionAddr::TcpTls { host, port, .. } => {
                format!("rediss://{}:{port}", bracket(host))
            }
            ConnectionAddr::Unix(path) => format!("unix://{}", path.display()),
            _ => "redis".to_string(),
        };
        Server { addr, user: info.redis_settings().username().unwrap_or("default").to_string() }
    }

    /// What a new connection asks first: `CONFIG`, unless this server refused it to
    /// this user before (then `INFO`, unless refused too); nothing once it was found
    /// evicting and told.
    pub(super) fn question(&self) -> Option<Question> {
        let known = known();
        if known.evicting.get(&self.addr) == Some(&true) {
            return None;
        }
        match known.refused.get(&(self.addr.clone(), self.user.clone())) {
            None => Some(Question::Config),
            Some(Question::Config) => Some(Question::Info),
            Some(Question::Info) => None,
        }
    }

    /// The server answered `asked` with `reply`: an eviction found is told; an error
    /// is remembered when it will be the same next time (a refusal, not a passing
    /// state, nor the missing password that the caller's command will report). The
    /// question worth asking next on this connection, if any: `INFO` after an error
    /// to `CONFIG`.
    pub(super) fn answered(&self, asked: Question, reply: &Value) -> Option<Question> {
        if let Value::ServerError(e) = reply {
            if e.code() == "NOAUTH" {
                return None;
            }
            let reply = format!("{} {}", e.code(), e.details().unwrap_or(""));
            if !crate::error::passing_code(&reply) {
                let mut known = known();
                if known.refused.len() >= MAX_KNOWN {
                    known.refused.clear();
                }
                known.refused.insert((self.addr.clone(), self.user.clone()), asked);
            }
            return (asked == Question::Config).then_some(Question::Info);
        }
        let found = match asked {
            Question::Config => from_config(reply),
            Question::Info => from_info(reply),
        };
        if let Some(memory) = found.filter(Memory::can_evict) {
            self.evicting(&memory);
        }
        None
    }

    /// Tells that this server can evict: counted the first time, warned until told.
    fn evicting(&self, memory: &Memory) {
        let first = {
            let mut known = known();
            match known.evicting.get(&self.addr) {
                Some(true) => return,
                Some(false) => false,
                None if known.evicting.len() >= MAX_KNOWN => return,
                None => {
                    // Claimed before telling: another thread finding it meanwhile does not count it again.
                    known.evicting.insert(self.addr.clone(), false);
                    true
                }
            }
        };
        // Not under the lock: the warning runs PHP's error handler, which may connect.
        if stats::evicting(&self.addr, &memory.policy, memory.maxmemory, first) {
            known().evicting.insert(self.addr.clone(), true);
        }
    }
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// Servers remembered at most (each kind of memory): past it, refusals are forgotten
/// (and asked again), and a new evicting server is not told.
const MAX_KNOWN: usize = 1024;

/// What this process learnt of its servers.
#[derive(Default)]
struct Known {
    /// Per address and user, the last question the server refused.
    refused: HashMap<(String, String), Question>,
    /// Per address found evicting: whether it was told.
    evicting: HashMap<String, bool>,
}

/// This process's memory, with the pid that made it.
struct Shared {
    pid: u32,
    known: Mutex<Known>,
}

static CURRENT: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());

/// This process's memory, made on first use and again in a forked child: the
/// parent's mutex may have been held by another of its threads at the fork, and is
/// never locked in the child (as `hold::table` does).
fn known() -> MutexGuard<'static, Known> {
    let pid = crate::fork_wiped::pid();
    let current = CURRENT.load(Ordering::Acquire);
    // SAFETY: every pointer stored in CURRENT comes from Box::leak and is never freed.
    let shared = match unsafe { current.as_ref() } {
        Some(s) if s.pid == pid => s,
        _ => {
            let fresh: &'static Shared =
                Box::leak(Box::new(Shared { pid, known: Mutex::new(Known::default()) }));
            match CURRENT.compare_exchange(
                current,
                fresh as *const Shared as *mut Shared,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => fresh,
                // SAFETY: as above.
                Err(winner) => unsafe { winner.as_ref() }.unwrap_or(fresh),
            }
        }
    };
    shared.known.lock().unwrap_or_else(|p| p.into_inner())
}
