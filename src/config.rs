//! The options, each declared once (`options!` below): its field in `Settings`, its
//! php.ini directive and default, and the parser that checks it. php.ini
//! directives and the per-object options array share them; the array overrides
//! the directive. Each value is checked as it is set (`values`), the relations
//! between them once all are set (`Settings::check`), which also chooses the
//! topology. The addresses in them are `dsn`'s; the constructor's numbers and what
//! a hold takes from the settings are `terms`'.
//!
//! Every setting has one name, used both as `redis_lock.<name>` in php.ini and
//! as a key of the options array. docs/configuration.md's table lists them, in
//! this order, with these defaults (a test below holds it to that), and gives each
//! its meaning, from which the installed redis_lock.ini is written
//! (tools/package/ini.php).

use crate::error::{LockError, Result};
pub(crate) use crate::values::MAX_SECONDS;
use crate::values::{
    bool_value, bytes_value, cap_seconds, cluster_seeds, count_value, dsn_list, label, path_value,
    positive_seconds, string_value, utf8_value,
};
pub use crate::values::{OptValue, Source, MAX_REPLY_LEAST, MAX_REPLY_LIMIT};
use std::ffi::CStr;
use std::sync::LazyLock;
use std::time::Duration;

/// Declares the options: each one's field (with its doc and visibility), its
/// default as php.ini writes it, and its parser, which checks a value and makes
/// the field's. From it come `Settings`, `DIRECTIVES`, `INI_DIRECTIVES`, the
/// defaults and `Settings::set`.
macro_rules! options {
    ($($(#[$doc:meta])* $vis:vis $name:ident: $ty:ty = $default:literal, $parse:expr;)*) => {
        /// The settings of one `Lock` (or `Semaphore`, `MultiLock`): one field per option.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Settings {
            $($(#[$doc])* $vis $name: $ty,)*
        }

        /// The settings that have a php.ini directive, with their defaults, in display order.
        pub const DIRECTIVES: &[(&str, &str)] = &[$((stringify!($name), $default)),*];

        /// The same as the engine registers them: `redis_lock.<name>` and the default,
        /// as the C strings its static table needs.
        pub const INI_DIRECTIVES: [(&CStr, &CStr); DIRECTIVES.len()] = [$((
            c_str(concat!("redis_lock.", stringify!($name), "\0")),
            c_str(concat!($default, "\0")),
        )),*];

        /// Each option's default as php.ini writes it, for the constants below.
        #[allow(non_upper_case_globals, dead_code)]
        mod default_text {
            $(pub(super) const $name: &str = $default;)*
        }

        impl Settings {
            /// Every field at its type's zero, before `Default` parses the declared texts.
            fn zero() -> Self {
                Settings { $($name: <$ty>::default(),)* }
            }

            /// Parses `value` into the option `name`; `None` when no option has that name.
            fn apply(
                &mut self,
                name: &str,
                label: &str,
                value: &OptValue,
                source: Source,
            ) -> Option<Result<()>> {
                match name {
                    $(stringify!($name) => Some($parse(label, value, source).map(|v| self.$name = v)),)*
                    _ => None,
                }
            }
        }
    };
}

options! {
    /// Where Redis is: `redis://`, `rediss://` or `unix://`. Parsed (and cached) by
    /// `pool::endpoint`, still at construction time.
    pub dsn: String = "redis://127.0.0.1:6379", utf8_value;
    /// Prepended to every key.
    pub prefix: Vec<u8> = "", string_value;
    /// Bound on establishing a connection (TCP, TLS, AUTH, SELECT).
    pub connect_timeout: Duration = "0.5", positive_seconds;
    /// Bound on waiting for any one reply.
    pub read_timeout: Duration = "0.5", positive_seconds;
    /// First pause between two tries of a blocking `addLock()`.
    pub retry_delay: Duration = "0.002", positive_seconds;
    /// Longest pause between two tries.
    pub retry_delay_max: Duration = "0.05", positive_seconds;
    /// First come, first served: no try, not even `tryLock()`, takes the lock ahead
    /// of processes already waiting for it.
    pub fair: bool = "0", bool_value;
    /// Renew the lease from a background thread while the lock is held.
    pub auto_renew: bool = "0", bool_value;
    /// Release a lock still held when its object goes away or the request ends. Off,
    /// the lock outlives the object: its lease or a release by token ends it.
    pub auto_release: bool = "1", bool_value;
    /// How long auto-renewal may keep one acquisition alive; `None`: as long as it is held.
    pub max_hold: Option<Duration> = "0", cap_seconds;
    /// Allow fencing tokens (a per-key counter, incremented for holders that ask).
    pub fencing: bool = "1", bool_value;
    /// Independent masters for Redlock. The four options that choose where keys
    /// live are read only by `check`, which makes them a `Topology`.
    servers: Vec<String> = "", dsn_list;
    /// Sentinels that name the master of `service`.
    sentinels: Vec<String> = "", dsn_list;
    /// The service (master name) the sentinels monitor.
    service: String = "", utf8_value;
    /// Replicas that should acknowledge an acquisition (`WAIT`) before it returns;
    /// best effort: it never fails the acquisition.
    pub wait_replicas: u32 = "0", count_value::<0>;
    /// Durable grants: an acquisition, a hand-over or a renewal counts only once this
    /// many replicas acknowledged it (`WAIT`, `durable_aof`: `WAITAOF`) within
    /// `durable_timeout`; otherwise it is undone. 0: unless `durable_aof`, off.
    pub durable: u32 = "0", count_value::<0>;
    /// Durable grants count only once the master's own AOF has them on disk too
    /// (`WAITAOF`, Redis 7.2 or later).
    pub durable_aof: bool = "0", bool_value;
    /// How long a durable grant waits for its acknowledgements: the reply that brings
    /// them may come that long after `read_timeout`.
    pub durable_timeout: Duration = "0.25", positive_seconds;
    /// Seed nodes of a Redis Cluster.
    cluster: Vec<String> = "", cluster_seeds;
    /// CA certificates (PEM) for `rediss://`; when set, the only ones trusted.
    pub tls_ca_file: Option<String> = "", path_value;
    /// The client certificate (PEM, leaf first), for servers with `tls-auth-clients yes`.
    pub tls_cert_file: Option<String> = "", path_value;
    /// The client certificate's private key (PEM).
    pub tls_key_file: Option<String> = "", path_value;
    /// How many endpoints (distinct servers and connection settings) keep an idle
    /// connection in this process; beyond it the least recently used are closed.
    pub max_endpoints: u32 = "16", count_value::<1>;
    /// Record who holds each hold (host, pid, SAPI, script, since) beside it, for
    /// `inspect()` and the `redis-lock` tool.
    pub owner_info: bool = "0", bool_value;
    /// The largest reply a connection reads, in bytes: a bulk string, or a reply's
    /// bytes at once (its memory is at most a few times this). A broken or hostile
    /// server cannot make a process hold more.
    pub max_reply: usize = "8388608", bytes_value;
}

/// The article's server.
pub const DEFAULT_DSN: &str = default_text::dsn;

/// The default of `max_reply`: the largest reply a connection reads (a bulk string,
/// or a reply's bytes at once), 8 MiB. Lock replies are a few bytes; inspections and
/// listings stay far below it, but for keys of megabytes.
pub const DEFAULT_MAX_REPLY: usize = decimal(default_text::max_reply);

/// A declared name or default as a C string; a NUL inside fails the build.
const fn c_str(text: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(text.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("an option's name or default holds a NUL"),
    }
}

/// A declared default's digits as a number; anything else fails the build.
const fn decimal(text: &str) -> usize {
    let (digits, mut n, mut i) = (text.as_bytes(), 0, 0);
    while i < digits.len() {
        assert!(digits[i].is_ascii_digit(), "not a whole number");
        n = n * 10 + (digits[i] - b'0') as usize;
        i += 1;
    }
    n
}

impl Default for Settings {
    /// The declared defaults, each parsed as php.ini's would be, once per process:
    /// so the defaults are exactly what the directives give when none is changed.
    fn default() -> Self {
        static DEFAULT: LazyLock<Settings> = LazyLock::new(|| {
            let mut s = Settings::zero();
            for (name, text) in DIRECTIVES {
                // `every_default_parses` holds each text to its parser: one that did
                // not would keep its type's zero rather than panic into PHP.
                let _ = s.set(name, &OptValue::Str(text.as_bytes().to_vec()), Source::Ini);
            }
            s
        });
        DEFAULT.clone()
    }
}

/// Where keys live, as the options chose it: the one server of `dsn`, a master its
/// sentinels name, a Redis Cluster, or a Redlock quorum. `Settings::check` chooses
/// it, once per object made; the routes match on it, never on the options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology<'a> {
    /// The one server of `dsn`.
    One,
    /// The master of `service`, which `sentinels` name (`dsn` gives its credentials).
    Sentinel { sentinels: &'a [String], service: &'a str },
    /// A Redis Cluster, found through these seed nodes (`cluster`).
    Cluster(&'a [String]),
    /// Independent masters, a majority of which holds each key (`servers`).
    Redlock(&'a [String]),
}

impl Settings {
    /// Applies one named setting. Unknown names are a `ValueError`, wrong types a `TypeError`.
    pub fn set(&mut self, name: &str, value: &OptValue, source: Source) -> Result<()> {
        let label = label(name, source);
        self.apply(name, &label, value, source).unwrap_or_else(|| {
            let known: Vec<&str> = DIRECTIVES.iter().map(|(n, _)| *n).collect();
            Err(LockError::InvalidValue(format!(
                "unknown option \"{}\"; known options are: {}",
                String::from_utf8_lossy(name.as_bytes()),
                known.join(", ")
            )))
        })
    }

    /// Checks the relations between settings, once all of them are applied, and
    /// chooses the topology they name.
    pub fn check(&self) -> Result<Topology<'_>> {
        if !self.sentinels.is_empty() && self.service.is_empty() {
            return Err(LockError::InvalidValue(
                "option \"sentinels\" needs option \"service\", the name of the master they monitor".to_string(),
            ));
        }
        let topology = match (&self.servers[..], &self.sentinels[..], &self.cluster[..]) {
            ([], [], []) => Topology::One,
            (servers, [], []) => Topology::Redlock(servers),
            ([], sentinels, []) => Topology::Sentinel { sentinels, service: &self.service },
            ([], [], seeds) => Topology::Cluster(seeds),
            (servers, sentinels, seeds) => {
                let chosen: Vec<&str> =
                    [("servers", servers), ("sentinels", sentinels), ("cluster", seeds)]
                        .into_iter()
                        .filter(|(_, list)| !list.is_empty())
                        .map(|(name, _)| name)
                        .collect();
                return Err(LockError::InvalidValue(format!(
                    "options \"{}\" each choose a topology (servers: Redlock, sentinels: Sentinel, cluster: Redis Cluster) and cannot be combined",
                    chosen.join("\" and \"")
                )));
            }
        };
        if self.tls_cert_file.is_some() != self.tls_key_file.is_some() {
            return Err(LockError::InvalidValue(
                "options \"tls_cert_file\" and \"tls_key_file\" go together: a client certificate needs its key".to_string(),
            ));
        }
        if self.retry_delay_max < self.retry_delay {
            return Err(LockError::InvalidValue(format!(
                "retry_delay_max ({} s) must not be smaller than retry_delay ({} s)",
                self.retry_delay_max.as_secs_f64(),
                self.retry_delay.as_secs_f64()
            )));
        }
        Ok(topology)
    }

    /// The TLS files, as a connection takes them.
    pub fn tls(&self) -> TlsFiles {
        TlsFiles {
            ca_file: self.tls_ca_file.clone(),
            cert_file: self.tls_cert_file.clone(),
            key_file: self.tls_key_file.clone(),
        }
    }
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
    fn defaults_are_the_declared_texts_parsed() {
        let mut s = Settings::zero();
        for (name, text) in DIRECTIVES {
            s.set(name, &OptValue::Str(text.as_bytes().to_vec()), Source::Ini).unwrap();
        }
        assert_eq!(s, Settings::default());
        assert_eq!(s.dsn, "redis://127.0.0.1:6379");
        assert!(s.connect_timeout + s.read_timeout <= Duration::from_secs(1));
        assert!(s.auto_release && s.fencing && !s.fair);
        assert_eq!((s.max_reply, s.max_endpoints, s.max_hold), (DEFAULT_MAX_REPLY, 16, None));
        assert_eq!(s.check().unwrap(), Topology::One);
        let names: Vec<&str> = INI_DIRECTIVES.iter().map(|(n, _)| n.to_str().unwrap()).collect();
        assert_eq!(names[0], "redis_lock.dsn");
        assert_eq!(INI_DIRECTIVES[0].1.to_str().unwrap(), DEFAULT_DSN);
        assert_eq!(names.len(), DIRECTIVES.len());
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
        assert!(matches!(
            s.check().unwrap(),
            Topology::Sentinel { sentinels, service: "mymaster" } if sentinels.len() == 2
        ));
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
        assert!(matches!(s.check().unwrap(), Topology::Cluster(seeds) if seeds.len() == 2));
        s.set("servers", &OptValue::List(vec![b"redis://127.0.0.1:7000".to_vec()]), Source::Option)
            .unwrap();
        assert!(s.check().is_err(), "Redlock and Cluster are exclusive");
        s.cluster.clear();
        assert!(matches!(s.check().unwrap(), Topology::Redlock(nodes) if nodes.len() == 1));
        s.cluster = vec!["redis://127.0.0.1:7000".to_string()];
        s.servers.clear();
        s.set(
            "sentinels",
            &OptValue::List(vec![b"redis://127.0.0.1:26379".to_vec()]),
            Source::Option,
        )
        .unwrap();
        s.service = "m".to_string();
        let both = "options \"sentinels\" and \"cluster\" each choose a topology (servers: Redlock, sentinels: Sentinel, cluster: Redis Cluster) and cannot be combined";
        assert!(matches!(s.check(), Err(LockError::InvalidValue(m)) if m == both));
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

    /// The options docs/configuration.md's table lists, in its order, each with its
    /// default as php.ini writes it. A row may name several options (`a`, `b`) that
    /// share a default; the default cell's last quoted value is the php.ini text
    /// (`""` or "none": empty), and a `true`/`false` before it must agree with it.
    fn documented() -> Vec<(String, String)> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
        let text = std::fs::read_to_string(path).unwrap();
        let rows = text.lines().skip_while(|l| !l.starts_with("| name | default |")).skip(2);
        let mut options = Vec::new();
        for row in rows.take_while(|l| l.starts_with('|')) {
            let cells: Vec<&str> = row.splitn(4, '|').map(str::trim).collect();
            let quoted: Vec<&str> = cells[2].split('`').skip(1).step_by(2).collect();
            let default = match quoted.last() {
                None if cells[2].starts_with("none") => "",
                Some(&"\"\"") => "",
                Some(text) => text,
                None => panic!("{row}: the default cell names no value"),
            };
            match quoted.first() {
                Some(&"true") => assert_eq!(default, "1", "{row}"),
                Some(&"false") => assert_eq!(default, "0", "{row}"),
                _ => {}
            }
            for name in cells[1].split(',') {
                let name = name.trim().strip_prefix('`').and_then(|n| n.strip_suffix('`'));
                options.push((name.unwrap_or("?").to_string(), default.to_string()));
            }
        }
        options
    }

    #[test]
    fn the_documented_table_is_the_declaration() {
        let declared: Vec<(String, String)> =
            DIRECTIVES.iter().map(|(n, d)| (n.to_string(), d.to_string())).collect();
        let documented = documented();
        let at = documented.iter().zip(&declared).take_while(|(d, o)| d == o).count();
        assert!(
            documented == declared,
            "docs/configuration.md's table must list the options declared in config.rs, in \
             their order, each with its default; at option {}, the docs have {:?}, the \
             declaration {:?}",
            at + 1,
            documented.get(at),
            declared.get(at)
        );
    }
}
