//! FrankenPHP's worker mode: many HTTP requests inside one PHP request.
//!
//! A worker script calls `frankenphp_handle_request()` in a loop; the engine's request
//! end (and so our RSHUTDOWN) comes only when the script ends. FrankenPHP starts and
//! ends each handled request (and the script's boot, its "dummy request", at the first
//! call) with the SAPI's `activate` and `deactivate` hooks instead, so under a SAPI
//! named `frankenphp` we wrap both, as dd-trace does: `activate` starts a handled
//! request in the table of holds, and `deactivate` releases what was taken during it,
//! the rule php-fpm users get at request end (`auto_release => false` holds stay, as
//! there). What the loop takes between handled requests lives until the script ends.
//!
//! Under any other SAPI nothing is wrapped: request end is RSHUTDOWN, as always.

use ext_php_rs::zend::SapiModule;
use std::ffi::{c_int, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

type Hook = unsafe extern "C" fn() -> c_int;

/// The SAPI whose requests are handled inside one PHP request.
const WORKER_SAPI: &CStr = c"frankenphp";

static PREVIOUS_ACTIVATE: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());
static PREVIOUS_DEACTIVATE: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// Wraps the SAPI's hooks when it is FrankenPHP (module startup, before any request).
pub fn install() {
    let mut module = SapiModule::get_mut();
    // SAFETY: the SAPI's name is a NUL-terminated string it keeps for the process.
    let is_worker_sapi =
        !module.name.is_null() && unsafe { CStr::from_ptr(module.name) } == WORKER_SAPI;
    let ours: Hook = activate;
    // A second startup must not chain ours to ours.
    if !is_worker_sapi || module.activate.is_some_and(|f| ptr::fn_addr_eq(f, ours)) {
        return;
    }
    PREVIOUS_ACTIVATE
        .store(module.activate.map_or(ptr::null_mut(), |f| f as *mut ()), Ordering::Release);
    PREVIOUS_DEACTIVATE
        .store(module.deactivate.map_or(ptr::null_mut(), |f| f as *mut ()), Ordering::Release);
    module.activate = Some(activate);
    module.deactivate = Some(deactivate);
}

/// Puts back what `install` replaced (module shutdown), unless another extension
/// wrapped ours since: then its chain must still reach ours, and ours the SAPI's.
pub fn uninstall() {
    let mut module = SapiModule::get_mut();
    let (ours_a, ours_d): (Hook, Hook) = (activate, deactivate);
    if module.activate.is_some_and(|f| ptr::fn_addr_eq(f, ours_a)) {
        module.activate = previous(&PREVIOUS_ACTIVATE);
    }
    if module.deactivate.is_some_and(|f| ptr::fn_addr_eq(f, ours_d)) {
        module.deactivate = previous(&PREVIOUS_DEACTIVATE);
    }
}

fn previous(slot: &AtomicPtr<()>) -> Option<Hook> {
    let f = slot.load(Ordering::Acquire);
    // SAFETY: the slot holds null or a `Hook` stored by `install`.
    (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut (), Hook>(f) })
}

unsafe extern "C" fn activate() -> c_int {
    let _ = std::panic::catch_unwind(crate::hold::table::begin_handled_request);
    // SAFETY: called as sapi_activate would call the SAPI's own hook.
    previous(&PREVIOUS_ACTIVATE).map_or(0, |f| unsafe { f() })
}

unsafe extern "C" fn deactivate() -> c_int {
    // Network only, no engine call: safe wherever the SAPI deactivates.
    let _ = std::panic::catch_unwind(crate::kinds::core::release_handled_request_held);
    // SAFETY: as in `activate`.
    previous(&PREVIOUS_DEACTIVATE).map_or(0, |f| unsafe { f() })
}
