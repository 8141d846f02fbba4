//! The PHP binding: argument conversion, exceptions, INI entries, phpinfo and
//! module registration. All behaviour lives in the core.
//!
//! `class`, `semaphore` and `multi` are the three classes over the core's kinds;
//! `args` converts the arguments they share, `held` runs `synchronized()`, `late`
//! guards a method call (and warns of a loss learned late), `observe` shows what the
//! core observes (inspections, counters, listings), `ini` the directives,
//! `exceptions` the exception classes, `engine` and `worker` the engine's hooks.

mod args;
mod class;
mod engine;
mod exceptions;
mod held;
mod ini;
mod late;
mod metrics;
mod multi;
mod observe;
mod semaphore;
mod wait;
mod worker;

use ext_php_rs::prelude::*;
use ext_php_rs::zend::ModuleEntry;

pub use class::Lock;
pub use multi::MultiLock;
pub use semaphore::Semaphore;
pub use wait::LockWait;

extern "C" fn startup(_ty: i32, module_number: i32) -> i32 {
    // Registers the directives and maps the pool's metrics: no connection, no thread
    // (php-fpm forks after this, and its workers share the metrics' memory).
    ini::register(module_number);
    let _ = std::panic::catch_unwind(ini::setup_metrics);
    crate::owner::install(observe::describe);
    crate::stats::install_warn(late::warn, late::log);
    let _ = std::panic::catch_unwind(worker::install);
    if exceptions::register_all() {
        0
    } else {
        -1
    }
}

extern "C" fn request_shutdown(_ty: i32, _module_number: i32) -> i32 {
    // Whatever the script left held (it returned, called exit(), or died of a fatal
    // error) is released here. A forked child has no holds of its own to release.
    let _ = std::panic::catch_unwind(crate::kinds::core::release_all_held);
    let _ = std::panic::catch_unwind(crate::net::pool::settle_arrived);
    let _ = std::panic::catch_unwind(crate::journal::stop);
    0
}

extern "C" fn shutdown(_ty: i32, _module_number: i32) -> i32 {
    // Must not unwind into the engine. The watchdog goes first: it uses connections.
    let _ = std::panic::catch_unwind(worker::uninstall);
    let _ = std::panic::catch_unwind(crate::hold::table::shutdown);
    let _ = std::panic::catch_unwind(crate::net::wake::close_all);
    let _ = std::panic::catch_unwind(crate::net::pool::close_all);
    0
}

extern "C" fn info(module: *mut ModuleEntry) {
    let _ = std::panic::catch_unwind(|| ini::info(module));
}

/// The module entry PHP loads.
#[php_module]
#[php(startup = "startup")]
pub fn get_module(module: ModuleBuilder) -> ModuleBuilder {
    metrics::functions(observe::functions(module))
        .name("redis_lock")
        .version(env!("CARGO_PKG_VERSION"))
        .class::<Lock>()
        .class::<Semaphore>()
        .class::<MultiLock>()
        .class::<LockWait>()
        .request_shutdown_function(request_shutdown)
        .shutdown_function(shutdown)
        .info_function(info)
}
