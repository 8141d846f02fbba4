//! The `redis_lock.*` php.ini directives and the phpinfo() section.

use crate::config::{OptValue, Settings, Source, DIRECTIVES};
use crate::error::Result;
use ext_php_rs::flags::IniEntryPermission;
use ext_php_rs::zend::{IniEntryDef, IniEntryDefs, ModuleEntry};
use ext_php_rs::{info_table_end, info_table_row, info_table_start};
use std::ffi::{c_char, c_int, CStr};

extern "C" {
    fn zend_ini_string_ex(name: *const c_char, name_length: usize, orig: c_int, exists: *mut bool) -> *mut c_char;
    fn display_ini_entries(module: *mut ModuleEntry);
}

// Names and defaults repeat `config::DIRECTIVES` because the engine needs C strings
// in a static table; php-tests/003-ini.phpt keeps the two in step.
static INI_ENTRIES: IniEntryDefs<7> = IniEntryDefs::new([
    IniEntryDef::new(c"redis_lock.dsn", c"redis://127.0.0.1:6379", IniEntryPermission::All),
    IniEntryDef::new(c"redis_lock.prefix", c"", IniEntryPermission::All),
    IniEntryDef::new(c"redis_lock.connect_timeout", c"0.5", IniEntryPermission::All),
    IniEntryDef::new(c"redis_lock.read_timeout", c"0.5", IniEntryPermission::All),
    IniEntryDef::new(c"redis_lock.retry_delay", c"0.002", IniEntryPermission::All),
    IniEntryDef::new(c"redis_lock.retry_delay_max", c"0.05", IniEntryPermission::All),
    IniEntryDef::end(),
]);

/// Registers the directives (module startup).
pub fn register(module_number: i32) {
    IniEntryDef::register(INI_ENTRIES.as_slice(), module_number);
}

fn current(name: &str) -> Option<Vec<u8>> {
    let full = format!("redis_lock.{name}");
    let mut exists = false;
    // SAFETY: the engine copies nothing and returns a pointer into its own entry,
    // valid until the next ini change; we copy it out at once.
    let ptr = unsafe { zend_ini_string_ex(full.as_ptr().cast(), full.len(), 0, &mut exists) };
    if !exists || ptr.is_null() {
        return None;
    }
    Some(unsafe { CStr::from_ptr(ptr) }.to_bytes().to_vec())
}

/// The settings as php.ini (and ini_set) currently give them.
pub fn settings() -> Result<Settings> {
    let mut s = Settings::default();
    for (name, default) in DIRECTIVES {
        if let Some(v) = current(name) {
            if v != default.as_bytes() {
                s.set(name, &OptValue::Str(v), Source::Ini)?;
            }
        }
    }
    Ok(s)
}

/// `phpinfo()` / `php --ri redis_lock`.
pub fn info(module: *mut ModuleEntry) {
    info_table_start!();
    info_table_row!("redis_lock support", "enabled");
    info_table_row!("version", env!("CARGO_PKG_VERSION"));
    info_table_row!("redis protocol", "SET NX PX acquire, EVALSHA compare-and-delete release");
    info_table_row!("tokens", "128-bit, OS CSPRNG");
    info_table_end!();
    // SAFETY: `module` is the entry the engine passed to this info function.
    unsafe { display_ini_entries(module) };
}
