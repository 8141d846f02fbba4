//! PHP engine symbols that ext-php-rs does not bind, found at run time.
//!
//! They are looked up with `dlsym` rather than linked, so the library still
//! loads outside PHP (`cargo php stubs` opens it to read its classes).

use ext_php_rs::ffi::zend_class_entry;
use ext_php_rs::zend::ModuleEntry;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

fn lookup(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the php binary.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

struct Symbols {
    ini_string: usize,
    display_ini: usize,
    runtime_exception: usize,
    log_err: usize,
    stream_from_fd: usize,
}

fn symbols() -> &'static Symbols {
    static SYMBOLS: OnceLock<Symbols> = OnceLock::new();
    SYMBOLS.get_or_init(|| Symbols {
        ini_string: lookup(c"zend_ini_string_ex") as usize,
        display_ini: lookup(c"display_ini_entries") as usize,
        runtime_exception: lookup(c"spl_ce_RuntimeException") as usize,
        log_err: lookup(c"php_log_err_with_severity") as usize,
        stream_from_fd: lookup(c"_php_stream_fopen_from_fd") as usize,
    })
}

type IniStringFn = unsafe extern "C" fn(*const c_char, usize, c_int, *mut bool) -> *mut c_char;
type DisplayIniFn = unsafe extern "C" fn(*mut ModuleEntry);

/// `read` applied to the current value of a php.ini directive (borrowed from the
/// engine, so nothing is copied unless `read` copies it); `None` when it does not exist.
pub fn ini_string<T>(name: &str, read: impl FnOnce(&[u8]) -> T) -> Option<T> {
    let f = symbols().ini_string;
    if f == 0 {
        return None;
    }
    // SAFETY: the symbol has zend_ini_string_ex's signature in PHP 8.x.
    let f: IniStringFn = unsafe { std::mem::transmute(f) };
    let mut exists = false;
    let ptr = unsafe { f(name.as_ptr().cast(), name.len(), 0, &mut exists) };
    if !exists || ptr.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string owned by the engine, read before any ini change.
    Some(read(unsafe { CStr::from_ptr(ptr) }.to_bytes()))
}

type LogErrFn = unsafe extern "C" fn(*const c_char, c_int);

/// Writes `message` to PHP's error log (`error_log`, or the SAPI's: stderr for the
/// CLI, the php-fpm log) with syslog's LOG_WARNING; whether there was a log to write
/// to.
pub fn log_warning(message: &CStr) -> bool {
    let f = symbols().log_err;
    if f == 0 {
        return false;
    }
    // SAFETY: php_log_err_with_severity(const char *, int) in PHP 8.x.
    let f: LogErrFn = unsafe { std::mem::transmute(f) };
    unsafe { f(message.as_ptr(), 4) };
    true
}

/// Prints the module's directives in phpinfo().
pub fn display_ini_entries(module: *mut ModuleEntry) {
    let f = symbols().display_ini;
    if f != 0 {
        // SAFETY: display_ini_entries(zend_module_entry *), given the engine's own entry.
        let f: DisplayIniFn = unsafe { std::mem::transmute(f) };
        unsafe { f(module) };
    }
}

/// SPL's `RuntimeException` class entry, set by SPL's startup, which runs before ours.
pub fn runtime_exception() -> Option<&'static zend_class_entry> {
    let slot = symbols().runtime_exception as *const *mut zend_class_entry;
    if slot.is_null() {
        return None;
    }
    // SAFETY: the address of SPL's `zend_class_entry *spl_ce_RuntimeException`.
    unsafe { (*slot).as_ref() }
}

/// `_php_stream_fopen_from_fd(fd, mode, persistent_id, zero_position)`, with the four
/// arguments a debug build of PHP adds (`STREAMS_DC`: the caller's file and line),
/// which a release build does not read.
type StreamFromFdFn = unsafe extern "C" fn(
    c_int,
    *const c_char,
    *const c_char,
    bool,
    *const c_char,
    u32,
    *const c_char,
    u32,
) -> *mut ext_php_rs::ffi::php_stream;

/// A PHP stream (a plain-file stream, as `fopen()` makes) over `fd`, which it owns
/// from now on and closes when PHP frees it (`fclose()`, or request end); `None`
/// (and `fd` closed) when PHP could not make one. Only inside a request, on its thread.
pub fn stream_from_fd(fd: c_int) -> Option<ext_php_rs::types::Zval> {
    let f = symbols().stream_from_fd;
    if f == 0 {
        // SAFETY: an fd the caller handed over.
        unsafe { libc::close(fd) };
        return None;
    }
    // SAFETY: the symbol has this signature in PHP 8.x (see the type's comment).
    let f: StreamFromFdFn = unsafe { std::mem::transmute(f) };
    let file = c"redis_lock";
    // SAFETY: a valid fd and NUL-terminated strings; the stream is checked for null.
    let stream = unsafe {
        f(fd, c"rb".as_ptr(), std::ptr::null(), false, file.as_ptr(), 0, file.as_ptr(), 0)
    };
    if stream.is_null() {
        // SAFETY: PHP did not take it.
        unsafe { libc::close(fd) };
        return None;
    }
    let mut zv = ext_php_rs::types::Zval::new();
    // SAFETY: php_stream_to_zval: the resource list holds the stream's one reference,
    // which the zval takes over; marked exposed, as PHP does for a stream it returns.
    unsafe {
        zv.set_resource((*stream).res);
        (*stream).set___exposed(1);
    }
    Some(zv)
}
