//! The engine: started once per process, PHP threads, requests and code in them.

use ext_php_rs::builders::SapiBuilder;
use ext_php_rs::embed::{
    ext_php_rs_sapi_shutdown, ext_php_rs_sapi_startup, worker_request_shutdown,
    worker_request_startup, PhpThreadGuard, SapiModule,
};
use ext_php_rs::ffi;
use ext_php_rs::zend::try_catch;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::thread::JoinHandle;

thread_local! {
    /// What this thread's current request printed.
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// How many times the SAPI's own activate and deactivate hooks ran: a module that
/// wraps them must still call them.
pub static SAPI_ACTIVATIONS: AtomicUsize = AtomicUsize::new(0);
pub static SAPI_DEACTIVATIONS: AtomicUsize = AtomicUsize::new(0);

static MODULE: AtomicPtr<SapiModule> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn ub_write(s: *const c_char, len: usize) -> usize {
    // SAFETY: the engine hands a buffer of `len` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) };
    OUT.with(|o| o.borrow_mut().extend_from_slice(bytes));
    len
}

extern "C" fn log_message(msg: *const c_char, _syslog_type: c_int) {
    // SAFETY: a NUL-terminated message.
    let m = unsafe { CStr::from_ptr(msg) }.to_string_lossy();
    OUT.with(|o| o.borrow_mut().extend_from_slice(format!("[log] {m}\n").as_bytes()));
}

extern "C" fn activate() -> c_int {
    SAPI_ACTIVATIONS.fetch_add(1, Ordering::Relaxed);
    0
}

extern "C" fn deactivate() -> c_int {
    SAPI_DEACTIVATIONS.fetch_add(1, Ordering::Relaxed);
    0
}

/// Starts the engine with the module loaded and pointed at `dsn`.
pub fn start(sapi_name: &str, module: &str, dsn: &str) {
    let ini = format!(
        "extension={module}\nredis_lock.dsn={dsn}\ndisplay_errors=1\nhtml_errors=0\nlog_errors=0\n\
         memory_limit=128M\nmax_execution_time=0\n"
    );
    let sapi = SapiBuilder::new(sapi_name, "redis-lock ZTS harness")
        .ub_write_function(ub_write)
        .log_message_function(log_message)
        .activate_function(activate)
        .deactivate_function(deactivate)
        .php_ini_ignore(1)
        .build()
        .expect("the SAPI's strings have no NUL");
    let sapi = Box::into_raw(Box::new(sapi));
    MODULE.store(sapi, Ordering::Release);
    // SAFETY: the documented startup order, once, on the main thread; the module
    // lives until `stop`.
    unsafe {
        ext_php_rs_sapi_startup();
        ffi::sapi_startup(sapi);
        // sapi_startup clears ini_entries: they go in between, as PHP's own SAPIs do.
        (*sapi).ini_entries = CString::new(ini).expect("ini without NUL").into_raw();
        assert_eq!(
            ffi::php_module_startup(sapi, std::ptr::null_mut()),
            0,
            "php_module_startup failed"
        );
    }
    // Startup's warnings (a module that does not load) would otherwise go unseen.
    let said = take_output();
    if !said.is_empty() {
        eprintln!("{said}");
    }
}

/// Shuts the engine down, after every PHP thread has ended.
pub fn stop() {
    let sapi = MODULE.load(Ordering::Acquire);
    // SAFETY: the reverse of `start`, on the main thread, no PHP thread left.
    unsafe {
        ffi::php_module_shutdown();
        ffi::sapi_shutdown();
        ext_php_rs_sapi_shutdown();
        drop(CString::from_raw((*sapi).ini_entries));
        drop(Box::from_raw(sapi));
    }
}

/// A thread with PHP's per-thread state, freed when `f` returns.
pub fn thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    std::thread::spawn(move || {
        let _php = PhpThreadGuard::new();
        f()
    })
}

/// One request on this thread: startup, `steps`, shutdown (where the module's request
/// end runs). Returns what the request printed.
pub fn request(steps: impl FnOnce()) -> String {
    // SAFETY: a PHP thread (`thread`), outside any request.
    unsafe { ffi::php_request_startup() };
    steps();
    // SAFETY: the request started above.
    unsafe { ffi::php_request_shutdown(std::ptr::null_mut()) };
    take_output()
}

/// One handled request of FrankenPHP's loop inside one PHP request: its request
/// startup (`php_output_activate`, `sapi_activate`), `steps`, then its request
/// shutdown (`handled_request_end`). Returns what it printed.
pub fn handled_request(steps: impl FnOnce()) -> String {
    request_startup_only();
    steps();
    handled_request_end()
}

/// FrankenPHP's worker request startup alone: what `frankenphp_handle_request()`
/// does first, and all it does on the call that returns false.
pub fn request_startup_only() {
    worker_request_startup().expect("worker request startup");
}

/// FrankenPHP's worker request shutdown (`php_output_end_all`,
/// `php_output_deactivate`, `sapi_deactivate`): the end of a handled request, and
/// of the boot's dummy request at the script's first `frankenphp_handle_request()`.
/// Returns what the request printed.
pub fn handled_request_end() -> String {
    worker_request_shutdown();
    take_output()
}

/// What the current request printed so far, taken out.
pub fn take_output() -> String {
    OUT.with(|o| String::from_utf8_lossy(&std::mem::take(&mut *o.borrow_mut())).into_owned())
}

/// Runs PHP code in the current request; false when it ended in a fatal error (a
/// bailout), after which only the request's end may follow.
pub fn eval(code: &str) -> bool {
    let code = CString::new(code).expect("PHP code without NUL");
    try_catch(|| {
        // SAFETY: inside a request of this thread.
        unsafe {
            ffi::zend_eval_string(
                code.as_ptr().cast_mut(),
                std::ptr::null_mut(),
                c"harness".as_ptr().cast_mut(),
            )
        }
    })
    .is_ok()
}
