//! Settings shared by php.ini directives and the per-object options array, each
//! value checked as it is set. The addresses in them are `dsn`'s; the constructor's
//! numbers and what a hold takes from the settings are `terms`'.
//!
//! Every setting has one name, used both as `redis_lock.<name>` in php.ini and
//! as a key of the options array; the array overrides the directive.

use crate::dsn::{parse_dsn, redact_dsn};
use crate::error::{LockError, Result};
use std::time::Duration;

/// A value as it arrives from PHP (an options array entry) or from php.ini.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// A PHP string (binary-safe).
    Str(Vec<u8>),
    /// A PHP int.
    Int(i64),
    /// A PHP float.
    Float(f64),
    /// A PHP bool.
    Bool(bool),
    /// PHP `null`.
    Null,
    /// A PHP list of strings.
    List(Vec<Vec<u8>>),
    /// Any other PHP type, by its name (`array`, `object`, ...).
    Other(&'static str),
}

impl OptValue {
    fn type_name(&self) -> &'static str {
        match self {
            OptValue::Str(_) => "string",
            OptValue::Int(_) => "int",
            OptValue::Float(_) => "float",
            OptValue::Bool(_) => "bool",
            OptValue::Null => "null",
            OptValue::List(_) => "array",
            OptValue::Other(t) => t,
        }
    }
}

/// Where a value came from, so that error messages name it the way the user wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The options array of `new Lock(...)`.
    Option,
    /// A `redis_lock.*` php.ini directive.
    Ini,
}

/// The settings that have a php.ini directive, with their defaults, in display order.
pub const DIRECTIVES: &[(&str, &str)] = &[
    ("dsn", DEFAULT_DSN),
    ("prefix", ""),
    ("connect_timeout", "0.5"),
    ("read_timeout", "0.5"),
    ("retry_delay", "0.002"),
    ("retry_delay_max", "0.05"),
    ("fair", "0"),
    ("auto_renew", "0"),
    ("auto_release", "1"),
    ("max_hold", "0"),
    ("fencing", "1"),
    ("servers", ""),
    ("sentinels", ""),
    ("service", ""),
    ("wait_replicas", "0"),
    ("durable", "0"),
    ("durable_aof", "0"),
    ("durable_timeout", "0.25"),
    ("cluster", ""),
    ("tls_ca_file", ""),
    ("tls_cert_file", ""),
    ("tls_key_file", ""),
    ("max_endpoints", "16"),
    ("owner_info", "0"),
    ("max_reply", "8388608"),
];

/// The default of `max_reply`: the largest reply a connection reads (a bulk string,
/// or a reply's bytes at once), 8 MiB. Lock replies are a few bytes; inspections and
/// listings stay far below it, but for keys of megabytes.
pub const DEFAULT_MAX_REPLY: usize = 8 * 1024 * 1024;

/// The bounds of `max_reply`: 64 KiB, and Redis's own `proto-max-bulk-len` (512 MiB).
pub const MAX_REPLY_LEAST: usize = 64 * 1024;
pub const MAX_REPLY_LIMIT: usize = 512 * 1024 * 1024;

/// The article's server.
pub const DEFAULT_DSN: &str = "redis://127.0.0.1:6379";

/// Largest duration (seconds) accepted anywhere: about 31 years. Beyond it Redis
/// would refuse the expiry and `Duration` arithmetic gains nothing.
pub(crate) const MAX_SECONDS: f64 = 1.0e9;

/// Connection and retry settings for one `Lock`.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Where Redis is: `redis://`, `rediss://` or `unix://`.
    pub dsn: String,
    /// Prepended to every key.
    pub prefix: Vec<u8>,
    /// Bound on establishing a connection (TCP, TLS, AUTH, SELECT).
    pub connect_timeout: Duration,
    /// Bound on waiting for any one reply.
    pub read_timeout: Duration,
    /// First pause between two tries of a blocking `addLock()`.
    pub retry_delay: Duration,
    /// Longest pause between two tries.
    pub retry_delay_max: Duration,
    /// First come, first served: no try, not even `tryLock()`, takes the lock ahead
    /// of processes already waiting for it.
    pub fair: bool,
    /// Renew the lease from a background thread while the lock is held.
    pub auto_renew: bool,
    /// Release a lock still held when its object goes away or the request ends. Off,
    /// the lock outlives the object: its lease or a release by token ends it.
    pub auto_release: bool,
    /// How long auto-renewal may keep one acquisition alive; `None`: as long as it is held.
    pub max_hold: Option<Duration>,
    /// Allow fencing tokens (a per-key counter, incremented for holders that ask).
    pub fencing: bool,
    /// Independent masters for Redlock; empty: the one server of `dsn`.
    pub servers: Vec<String>,
    /// Sentinels that name the master of `service`; empty: no Sentinel.
    pub sentinels: Vec<String>,
    /// The service (master name) the sentinels monitor.
    pub service: String,
    /// Replicas that should acknowledge an acquisition (`WAIT`) before it returns;
    /// best effort: it never fails the acquisition.
    pub wait_replicas: u32,
    /// Durable grants: an acquisition, a hand-over or a renewal counts only once this
    /// many replicas acknowledged it (`WAIT`, `durable_aof`: `WAITAOF`) within
    /// `durable_timeout`; otherwise it is undone. 0: unless `durable_aof`, off.
    pub durable: u32,
    /// Durable grants count only once the master's own AOF has them on disk too
    /// (`WAITAOF`, Redis 7.2 or later).
    pub durable_aof: bool,
    /// How long a durable grant waits for its acknowledgements.
    pub durable_timeout: Duration,
    /// Seed nodes of a Redis Cluster; empty: no Cluster.
    pub cluster: Vec<String>,
    /// The CA and client certificate for every `rediss://` connection.
    pub tls: TlsFiles,
    /// How many endpoints (distinct servers and connection settings) keep an idle
    /// connection in this process; beyond it the least recently used are closed.
    pub max_endpoints: u32,
    /// Record who holds each hold (host, pid, SAPI, script, since) beside it, for
    /// `inspect()` and the `redis-lock` tool.
    pub owner_info: bool,
    /// The largest reply a connection reads, in bytes: a bulk string, or a reply's
    /// bytes at once (its memory is at most a few times this). A broken or hostile
    /// server cannot make a process hold more.
    pub max_reply: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            dsn: DEFAULT_DSN.to_string(),
            prefix: Vec::new(),
            connect_timeout: Duration::from_millis(500),
            read_timeout: Duration::from_millis(500),
            retry_delay: Duration::from_millis(2),
            retry_delay_max: Duration::from_millis(50),
            fair: false,
            auto_renew: false,
            auto_release: true,
            max_hold: None,
            fencing: true,
            servers: Vec::new(),
            sentinels: Vec::new(),
            service: String::new(),
            wait_replicas: 0,
            durable: 0,
            durable_aof: false,
            durable_timeout: Duration::from_millis(250),
            cluster: Vec::new(),
            tls: TlsFiles::default(),
            max_endpoints: 16,
            owner_info: false,
            max_reply: DEFAULT_MAX_REPLY,
        }
    }
}

impl Settings {
    /// Applies one named setting. Unknown names are a `ValueError`, wrong types a `TypeError`.
    pub fn set(&mut self, name: &str, value: &OptValue, source: Source) -> Result<()> {
        let label = label(name, source);
        match name {
            "dsn" => {
                let dsn = string_value(&label, value, source)?;
                // Parsed (and cached) by `pool::endpoint`, still at construction time.
                self.dsn = String::from_utf8(dsn)
                    .map_err(|_| LockError::InvalidValue(format!("{label} must be valid UTF-8")))?;
            }
            "prefix" => self.prefix = string_value(&label, value, source)?,
            "connect_timeout" => self.connect_timeout = positive_seconds(&label, value, source)?,
            "read_timeout" => self.read_timeout = positive_seconds(&label, value, source)?,
            "retry_delay" => self.retry_delay = positive_seconds(&label, value, source)?,
            "retry_delay_max" => self.retry_delay_max = positive_seconds(&label, value, source)?,
            "fair" => self.fair = bool_value(&label, value, source)?,
            "auto_renew" => self.auto_renew = bool_value(&label, value, source)?,
            "auto_release" => self.auto_release = bool_value(&label, value, source)?,
            "max_hold" => self.max_hold = cap_seconds(&label, value, source)?,
            "fencing" => self.fencing = bool_value(&label, value, source)?,
            "servers" => self.servers = dsn_list(&label, value, source)?,
            "sentinels" => self.sentinels = dsn_list(&label, value, source)?,
            "service" => {
                self.service = String::from_utf8(string_value(&label, value, source)?)
                    .map_err(|_| LockError::InvalidValue(format!("{label} must be valid UTF-8")))?
            }
            "wait_replicas" => self.wait_replicas = count_value(&label, value, source, 0)?,
            "durable" => self.durable = count_value(&label, value, source, 0)?,
            "durable_aof" => self.durable_aof = bool_value(&label, value, source)?,
            "durable_timeout" => self.durable_timeout = positive_seconds(&label, value, source)?,
            "cluster" => {
                let seeds = dsn_list(&label, value, source)?;
                for dsn in &seeds {
                    if parse_dsn(dsn)?.redis_settings().db() != 0 {
                        return Err(LockError::InvalidValue(format!(
                            "{label}: \"{}\" names a database, but a cluster has only database 0",
                            redact_dsn(dsn)
                        )));
                    }
                }
                self.cluster = seeds;
            }
            "tls_ca_file" => self.tls.ca_file = path_value(&label, value, source)?,
            "tls_cert_file" => self.tls.cert_file = path_value(&label, value, source)?,
            "tls_key_file" => self.tls.key_file = path_value(&label, value, source)?,
            "max_endpoints" => self.max_endpoints = count_value(&label, value, source, 1)?,
            "owner_info" => self.owner_info = bool_value(&label, value, source)?,
            "max_reply" => self.max_reply = bytes_value(&label, value, source)?,
            _ => {
                let known: Vec<&str> = DIRECTIVES.iter().map(|(n, _)| *n).collect();
                return Err(LockError::InvalidValue(format!(
                    "unknown option \"{}\"; known options are: {}",
                    String::from_utf8_lossy(name.as_bytes()),
                    known.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Checks the relations between settings, once all of them are applied.
    pub fn check(&self) -> Result<()> {
        if !self.sentinels.is_empty() && self.service.is_empty() {
            return Err(LockError::InvalidValue(
                "option \"sentinels\" needs option \"service\", the name of the master they monitor".to_string(),
            ));
        }
        let topologies: Vec<&str> = [
            ("servers", &self.servers),
            ("sentinels", &self.sentinels),
            ("cluster", &self.cluster),
        ]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(name, _)| name)
        .collect();
        if topologies.len() > 1 {
            return Err(LockError::InvalidValue(format!(
                "options \"{}\" each choose a topology (servers: Redlock, sentinels: Sentinel, cluster: Redis Cluster) and cannot be combined",
                topologies.join("\" and \"")
            )));
        }
        if self.tls.cert_file.is_some() != self.tls.key_file.is_some() {
            return Err(LockError::InvalidValue(
                "options \"tls_cert_file\" and \"tls_key_file\" go together: a client certificate needs its key".to_string(),
            ));
        }
        if (self.durable > 0 || self.durable_aof) && self.durable_timeout >= self.read_timeout {
            return Err(LockError::InvalidValue(format!(
                "durable_timeout ({} s) must be shorter than read_timeout ({} s): the acknowledgement is one reply",
                self.durable_timeout.as_secs_f64(),
                self.read_timeout.as_secs_f64()
            )));
        }
        if self.retry_delay_max < self.retry_delay {
            return Err(LockError::InvalidValue(format!(
                "retry_delay_max ({} s) must not be smaller than retry_delay ({} s)",
                self.retry_delay_max.as_secs_f64(),
                self.retry_delay.as_secs_f64()
            )));
        }
        Ok(())
    }
}

/// A file path; "" (or null in the options) for none.
fn path_value(label: &str, value: &OptValue, source: Source) -> Result<Option<String>> {
    if matches!(value, OptValue::Null) {
        return Ok(None);
    }
    let path = String::from_utf8(string_value(label, value, source)?)
        .map_err(|_| LockError::InvalidValue(format!("{label} must be a valid UTF-8 path")))?;
    if path.contains('\0') {
        return Err(LockError::InvalidValue(format!("{label} must not contain NUL bytes")));
    }
    Ok(Some(path).filter(|p| !p.is_empty()))
}

fn label(name: &str, source: Source) -> String {
    match source {
        Source::Option => format!("option \"{name}\""),
        Source::Ini => format!("redis_lock.{name}"),
    }
}

fn string_value(label: &str, value: &OptValue, source: Source) -> Result<Vec<u8>> {
    match value {
        OptValue::Str(s) => Ok(s.clone()),
        // php.ini values are always strings; the options array is typed.
        _ if source == Source::Ini => Err(LockError::InvalidValue(format!("{label} is invalid"))),
        other => Err(LockError::InvalidType(format!(
            "{label} must be of type string, {} given",
            other.type_name()
        ))),
    }
}

/// A list of dsns: an array of strings in the options, a comma-separated string in
/// php.ini ("" for none).
fn dsn_list(label: &str, value: &OptValue, source: Source) -> Result<Vec<String>> {
    let items: Vec<Vec<u8>> = match (value, source) {
        (OptValue::List(items), _) if !items.is_empty() => items.clone(),
        (OptValue::List(_), _) => {
            return Err(LockError::InvalidValue(format!("{label} must list at least one server")))
        }
        (OptValue::Str(s), Source::Ini) => s
            .split(|&b| b == b',')
            .map(|part| String::from_utf8_lossy(part).trim().as_bytes().to_vec())
            .filter(|part| !part.is_empty())
            .collect(),
        (other, _) => {
            return Err(LockError::InvalidType(format!(
                "{label} must be of type array (a list of dsn strings), {} given",
                other.type_name()
            )))
        }
    };
    items
        .into_iter()
        .map(|dsn| {
            let dsn = String::from_utf8(dsn).map_err(|_| {
                LockError::InvalidValue(format!("{label} must hold valid UTF-8 dsns"))
            })?;
            // Checked now, so that a bad entry is reported by name.
            parse_dsn(&dsn)?;
            Ok(dsn)
        })
        .collect()
}

/// A small non-negative count.
/// A whole number from `min` to 1000.
fn count_value(label: &str, value: &OptValue, source: Source, min: u32) -> Result<u32> {
    let n: i64 = match (value, source) {
        (OptValue::Int(i), _) => *i,
        (OptValue::Str(s), Source::Ini) => {
            String::from_utf8_lossy(s).trim().parse().map_err(|_| {
                LockError::InvalidValue(format!(
                    "{label} must be a whole number, \"{}\" given",
                    String::from_utf8_lossy(s)
                ))
            })?
        }
        (other, _) => {
            return Err(LockError::InvalidType(format!(
                "{label} must be of type int, {} given",
                other.type_name()
            )))
        }
    };
    u32::try_from(n).ok().filter(|n| (min..=1000).contains(n)).ok_or_else(|| {
        LockError::InvalidValue(format!("{label} must be between {min} and 1000, {n} given"))
    })
}

/// A size in bytes, as an int, or in php.ini also with a K, M or G suffix (as
/// `memory_limit`), between `MAX_REPLY_LEAST` and `MAX_REPLY_LIMIT`.
fn bytes_value(label: &str, value: &OptValue, source: Source) -> Result<usize> {
    let n: i64 = match (value, source) {
        (OptValue::Int(i), _) => *i,
        (OptValue::Str(s), Source::Ini) => {
            let text = String::from_utf8_lossy(s).trim().to_ascii_uppercase();
            let (digits, unit) = match text.char_indices().last() {
                Some((i, 'K')) => (&text[..i], 1 << 10),
                Some((i, 'M')) => (&text[..i], 1 << 20),
                Some((i, 'G')) => (&text[..i], 1 << 30),
                _ => (&text[..], 1),
            };
            digits.trim().parse::<i64>().ok().and_then(|d| d.checked_mul(unit)).ok_or_else(
                || {
                    LockError::InvalidValue(format!(
                        "{label} must be a size in bytes (8388608, 8M), \"{}\" given",
                        String::from_utf8_lossy(s)
                    ))
                },
            )?
        }
        (other, _) => {
            return Err(LockError::InvalidType(format!(
                "{label} must be of type int, {} given",
                other.type_name()
            )))
        }
    };
    usize::try_from(n).ok().filter(|n| (MAX_REPLY_LEAST..=MAX_REPLY_LIMIT).contains(n)).ok_or_else(|| {
        LockError::InvalidValue(format!("{label} must be between {MAX_REPLY_LEAST} and {MAX_REPLY_LIMIT} bytes (64K to 512M), {n} given"))
    })
}

fn bool_value(label: &str, value: &OptValue, source: Source) -> Result<bool> {
    match (value, source) {
        (OptValue::Bool(b), _) => Ok(*b),
        // php.ini spells booleans many ways; the engine's own parser accepts these.
        (OptValue::Str(s), Source::Ini) => {
            match String::from_utf8_lossy(s).trim().to_ascii_lowercase().as_str() {
                "1" | "on" | "yes" | "true" => Ok(true),
                "" | "0" | "off" | "no" | "false" | "none" => Ok(false),
                other => Err(LockError::InvalidValue(format!(
                    "{label} must be a boolean (On/Off), \"{other}\" given"
                ))),
            }
        }
        (other, _) => Err(LockError::InvalidType(format!(
            "{label} must be of type bool, {} given",
            other.type_name()
        ))),
    }
}

/// A duration where 0 means "no limit".
fn cap_seconds(label: &str, value: &OptValue, source: Source) -> Result<Option<Duration>> {
    let secs = seconds(label, value, source)?;
    if secs == 0.0 {
        return Ok(None);
    }
    if !secs.is_finite() || !(0.0..=MAX_SECONDS).contains(&secs) {
        return Err(LockError::InvalidValue(format!(
            "{label} must be a finite number of seconds, 0 (no limit) or greater, {secs} given"
        )));
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

fn positive_seconds(label: &str, value: &OptValue, source: Source) -> Result<Duration> {
    let secs = seconds(label, value, source)?;
    if !secs.is_finite() || secs <= 0.0 || secs > MAX_SECONDS {
        return Err(LockError::InvalidValue(format!(
            "{label} must be a finite number of seconds greater than 0, {secs} given"
        )));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn seconds(label: &str, value: &OptValue, source: Source) -> Result<f64> {
    Ok(match (value, source) {
        (OptValue::Int(i), _) => *i as f64,
        (OptValue::Float(f), _) => *f,
        (OptValue::Str(s), Source::Ini) => std::str::from_utf8(s)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .ok_or_else(|| {
                LockError::InvalidValue(format!(
                    "{label} must be a number of seconds, \"{}\" given",
                    String::from_utf8_lossy(s)
                ))
            })?,
        (other, _) => {
            return Err(LockError::InvalidType(format!(
                "{label} must be of type int|float, {} given",
                other.type_name()
            )))
        }
    })
}

/// The TLS files of a `Lock`'s settings. None set: the OS store, no client certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// CA certificates (PEM); when set, the only ones trusted.
    pub ca_file: Option<String>,
    /// The client certificate (PEM, leaf first), for servers with `tls-auth-clients yes`.
    pub cert_file: Option<String>,
    /// The client certificate's private key (PEM).
    pub key_file: Option<String>,
}

/// Tells these settings apart in the connection registry's keys, written straight
/// into the key (every `new Lock` looks its endpoint up).
impl std::fmt::Display for TlsFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn part(p: &Option<String>) -> &str {
            p.as_deref().unwrap_or("")
        }
        write!(
            f,
            "{}\u{0}{}\u{0}{}",
            part(&self.ca_file),
            part(&self.cert_file),
            part(&self.key_file)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_article_server_and_short_timeouts() {
        let s = Settings::default();
        assert_eq!(s.dsn, "redis://127.0.0.1:6379");
        assert!(s.connect_timeout + s.read_timeout <= Duration::from_secs(1));
        // The directive table and the struct agree.
        let mut from_table = Settings::default();
        for (name, value) in DIRECTIVES {
            from_table.set(name, &OptValue::Str(value.as_bytes().to_vec()), Source::Ini).unwrap();
        }
        assert_eq!(from_table, s);
    }

    #[test]
    fn options_are_typed() {
        let mut s = Settings::default();
        assert!(matches!(
            s.set("connect_timeout", &OptValue::Str(b"1".to_vec()), Source::Option),
            Err(LockError::InvalidType(_))
        ));
        assert!(matches!(
            s.set("dsn", &OptValue::Int(1), Source::Option),
            Err(LockError::InvalidType(_))
        ));
        assert!(matches!(
            s.set("nope", &OptValue::Int(1), Source::Option),
            Err(LockError::InvalidValue(_))
        ));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                s.set("read_timeout", &OptValue::Float(bad), Source::Option),
                Err(LockError::InvalidValue(_))
            ));
        }
        s.set("read_timeout", &OptValue::Int(2), Source::Option).unwrap();
        assert_eq!(s.read_timeout, Duration::from_secs(2));
        s.set("prefix", &OptValue::Str(b"app:\0".to_vec()), Source::Option).unwrap();
        assert_eq!(s.prefix, b"app:\0");
        s.set("retry_delay", &OptValue::Float(0.5), Source::Option).unwrap();
        assert!(s.check().is_err());
        assert!(matches!(
            s.set("fair", &OptValue::Int(1), Source::Option),
            Err(LockError::InvalidType(_))
        ));
        s.set("fair", &OptValue::Bool(true), Source::Option).unwrap();
        assert!(s.fair);
        s.set("fair", &OptValue::Str(b"Off".to_vec()), Source::Ini).unwrap();
        assert!(!s.fair);
        s.set("fair", &OptValue::Str(b"yes".to_vec()), Source::Ini).unwrap();
        assert!(s.fair);
        assert!(s.set("fair", &OptValue::Str(b"maybe".to_vec()), Source::Ini).is_err());
        s.set("max_hold", &OptValue::Float(2.5), Source::Option).unwrap();
        assert_eq!(s.max_hold, Some(Duration::from_millis(2500)));
        s.set("max_hold", &OptValue::Int(0), Source::Option).unwrap();
        assert_eq!(s.max_hold, None);
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                s.set("max_hold", &OptValue::Float(bad), Source::Option),
                Err(LockError::InvalidValue(_))
            ));
        }
        assert!(matches!(
            s.set("max_hold", &OptValue::Bool(true), Source::Option),
            Err(LockError::InvalidType(_))
        ));
        s.set("auto_renew", &OptValue::Str(b"on".to_vec()), Source::Ini).unwrap();
        assert!(s.auto_renew);
        s.set("fencing", &OptValue::Bool(false), Source::Option).unwrap();
        assert!(!s.fencing);
        s.set(
            "sentinels",
            &OptValue::Str(b"redis://127.0.0.1:26379, redis://127.0.0.1:26380".to_vec()),
            Source::Ini,
        )
        .unwrap();
        assert_eq!(s.sentinels.len(), 2);
        assert!(s.check().is_err(), "sentinels need a service");
        s.set("service", &OptValue::Str(b"mymaster".to_vec()), Source::Option).unwrap();
        s.set("retry_delay", &OptValue::Float(0.002), Source::Option).unwrap();
        s.check().unwrap();
        s.set("servers", &OptValue::List(vec![b"redis://127.0.0.1:7000".to_vec()]), Source::Option)
            .unwrap();
        assert!(s.check().is_err(), "Redlock and Sentinel are exclusive");
        s.servers.clear();
        s.set("wait_replicas", &OptValue::Int(2), Source::Option).unwrap();
        assert_eq!(s.wait_replicas, 2);
        assert!(matches!(
            s.set("wait_replicas", &OptValue::Int(-1), Source::Option),
            Err(LockError::InvalidValue(_))
        ));
        assert!(matches!(
            s.set("wait_replicas", &OptValue::Float(1.5), Source::Option),
            Err(LockError::InvalidType(_))
        ));
        assert!(matches!(
            s.set("sentinels", &OptValue::List(vec![b"nope".to_vec()]), Source::Option),
            Err(LockError::InvalidValue(_))
        ));
    }

    #[test]
    fn cluster_seeds_exclude_other_topologies_and_databases() {
        let mut s = Settings::default();
        s.set(
            "cluster",
            &OptValue::Str(b"redis://127.0.0.1:7000, redis://:pw@127.0.0.1:7001".to_vec()),
            Source::Ini,
        )
        .unwrap();
        assert_eq!(s.cluster.len(), 2);
        assert!(s.check().is_ok());
        s.set("servers", &OptValue::List(vec![b"redis://127.0.0.1:7000".to_vec()]), Source::Option)
            .unwrap();
        assert!(s.check().is_err(), "Redlock and Cluster are exclusive");
        s.servers.clear();
        s.set(
            "sentinels",
            &OptValue::List(vec![b"redis://127.0.0.1:26379".to_vec()]),
            Source::Option,
        )
        .unwrap();
        s.service = "m".to_string();
        assert!(s.check().is_err(), "Sentinel and Cluster are exclusive");
        let err = s.set(
            "cluster",
            &OptValue::List(vec![b"redis://:secret@127.0.0.1:7000/3".to_vec()]),
            Source::Option,
        );
        assert!(
            matches!(&err, Err(LockError::InvalidValue(m)) if m.contains("database") && !m.contains("secret")),
            "{err:?}"
        );
    }
}
