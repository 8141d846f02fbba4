//! The `redis_lock.*` php.ini directives and the phpinfo() section.

use super::engine;
use crate::config::{OptValue, Settings, Source, DIRECTIVES, INI_DIRECTIVES};
use crate::error::Result;
use ext_php_rs::ffi::{zend_ini_entry, zend_string};
use ext_php_rs::flags::IniEntryPermission;
use ext_php_rs::zend::{IniEntryDef, IniEntryDefs, ModuleEntry};
use ext_php_rs::{info_table_end, info_table_row, info_table_start};
use std::cell::RefCell;
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

/// The directives' table, as the engine keeps it for the life of the process: one
/// entry per option `config` declares (`INI_DIRECTIVES`), then the end mark.
static INI_ENTRIES: IniEntryDefs<{ INI_DIRECTIVES.len() + 1 }> = IniEntryDefs::new(entries());

const fn entries() -> [IniEntryDef; INI_DIRECTIVES.len() + 1] {
    let mut table = [const { IniEntryDef::end() }; INI_DIRECTIVES.len() + 1];
    let mut i = 0;
    while i < INI_DIRECTIVES.len() {
        let (name, default) = INI_DIRECTIVES[i];
        table[i] = entry(name, default);
        i += 1;
    }
    table
}

/// A directive anyone may set, whose changes `settings()` hears of.
const fn entry(name: &'static CStr, default: &'static CStr) -> IniEntryDef {
    let mut def = IniEntryDef::new(name, default, IniEntryPermission::All);
    def.on_modify = Some(changed);
    def
}

/// Counts changes to any of the directives: php.ini at startup, `ini_set()`,
/// `ini_restore()`, `.user.ini`, php-fpm's pool values, and the engine putting
/// values back at request end all go through a directive's modify handler.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The modify handler: accepts every value (`settings()` validates them where it
/// can say which `Lock` they broke) and notes that one changed.
unsafe extern "C" fn changed(
    _entry: *mut zend_ini_entry,
    _new_value: *mut zend_string,
    _arg1: *mut c_void,
    _arg2: *mut c_void,
    _arg3: *mut c_void,
    _stage: c_int,
) -> c_int {
    GENERATION.fetch_add(1, Ordering::Relaxed);
    0 // SUCCESS: the engine stores the value
}

/// The pool-wide metrics' directives (`metrics`): read once, at module startup, when
/// the shared memory is mapped, so php.ini (or the web server's configuration) alone
/// sets them.
static METRICS_ENTRIES: IniEntryDefs<4> = IniEntryDefs::new([
    IniEntryDef::new(c"redis_lock.metrics", c"1", IniEntryPermission::System),
    IniEntryDef::new(c"redis_lock.metrics_names", c"256", IniEntryPermission::System),
    IniEntryDef::new(c"redis_lock.metrics_fold", c"digits", IniEntryPermission::System),
    IniEntryDef::end(),
]);

/// Registers the directives (module startup).
pub fn register(module_number: i32) {
    IniEntryDef::register(INI_ENTRIES.as_slice(), module_number);
    IniEntryDef::register(METRICS_ENTRIES.as_slice(), module_number);
}

/// Maps the pool-wide metrics as the directives say (module startup, before a
/// php-fpm master or an Apache parent forks its workers). A value it cannot use
/// leaves them off, with a warning in PHP's error log naming it.
pub fn setup_metrics() {
    let text = |name: &str, default: &str| {
        engine::ini_string(name, |v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_else(|| default.to_string())
    };
    let on = text("redis_lock.metrics", "1");
    if !matches!(on.trim().to_ascii_lowercase().as_str(), "1" | "on" | "yes" | "true") {
        return;
    }
    let names = text("redis_lock.metrics_names", "256");
    let setup = match (names.trim().parse::<usize>(), crate::fold::Fold::parse(&text("redis_lock.metrics_fold", "digits"))) {
        (Ok(n @ 1..=100_000), Ok(fold)) => crate::metrics::setup(n, fold),
        (Ok(_) | Err(_), Ok(_)) => Err(format!(
            "redis-lock: redis_lock.metrics_names must be a number from 1 to 100000, not \"{names}\"; the metrics are off"
        )),
        (_, Err(e)) => Err(format!("{e}; the metrics are off")),
    };
    if let Err(message) = setup {
        if let Ok(text) = std::ffi::CString::new(message.replace('\0', " ")) {
            engine::log_warning(&text);
        }
    }
}

/// The settings as php.ini (and ini_set) currently give them.
/// They are read from the engine again only after a directive changed: twenty
/// lookups were a quarter of a `new Lock`. Only a value that differs from its
/// default is copied and parsed.
pub fn settings() -> Result<Settings> {
    thread_local! {
        static LAST: RefCell<Option<(u64, Settings)>> = const { RefCell::new(None) };
    }
    let generation = GENERATION.load(Ordering::Relaxed);
    if let Some(s) = LAST
        .with_borrow(|last| last.as_ref().filter(|(g, _)| *g == generation).map(|(_, s)| s.clone()))
    {
        return Ok(s);
    }
    let s = read()?;
    LAST.set(Some((generation, s.clone())));
    Ok(s)
}

fn read() -> Result<Settings> {
    // The directives' full names, made once rather than on every read.
    static NAMES: LazyLock<Vec<String>> =
        LazyLock::new(|| DIRECTIVES.iter().map(|(name, _)| format!("redis_lock.{name}")).collect());
    let mut s = Settings::default();
    for ((name, default), full) in DIRECTIVES.iter().zip(NAMES.iter()) {
        let changed = engine::ini_string(full, |v| (v != default.as_bytes()).then(|| v.to_vec()));
        if let Some(Some(v)) = changed {
            s.set(name, &OptValue::Str(v), Source::Ini)?;
        }
    }
    Ok(s)
}

/// `phpinfo()` / `php --ri redis_lock`.
pub fn info(module: *mut ModuleEntry) {
    info_table_start!();
    info_table_row!("redis_lock support", "enabled");
    info_table_row!("version", env!("CARGO_PKG_VERSION"));
    info_table_row!(
        "redis protocol",
        "SET NX PX acquire, EVALSHA compare-and-delete release with hand-over"
    );
    info_table_row!("kinds", "Lock (exclusive, shared read locks), Semaphore (weighted permits)");
    info_table_row!("waiting", "FIFO queue, woken by pub/sub on a per-process channel");
    info_table_row!("tokens", "128-bit, OS CSPRNG, or chosen by the caller (1 to 256 bytes)");
    info_table_row!("fencing tokens", "per-key counter, incremented only for holders that ask");
    info_table_row!(
        "topologies",
        "one server, Redlock (servers), Sentinel (sentinels), Redis Cluster (cluster)"
    );
    info_table_row!(
        "tls",
        "rustls; trusts tls_ca_file, else the OS store, else built-in roots; client certificates"
    );
    info_table_row!(
        "watchdog",
        if crate::hold::table::watchdog_running() { "running" } else { "not started" }
    );
    info_table_row!("locks held by this process", crate::hold::table::count().to_string());
    info_table_end!();
    // The process's counters (`redis_lock_stats()`): per php-fpm worker, per CLI run.
    info_table_start!();
    info_table_row!(
        "statistics of this process",
        "since it started or the last redis_lock_stats(true)"
    );
    for (name, figure) in crate::stats::snapshot(false) {
        let shown = match figure {
            crate::stats::Figure::Count(n) => n.to_string(),
            crate::stats::Figure::Seconds(s) => format!("{s:.6}"),
        };
        info_table_row!(name, shown);
    }
    info_table_end!();
    engine::display_ini_entries(module);
}
