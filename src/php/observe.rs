//! What the binding shows of the core's observations: `inspect()`'s arrays, the
//! process's counters (`redis_lock_stats()`), listings (`redis_lock_scan()`), and
//! what `owner_info` records of the current request (the SAPI and the script).

use super::args::settings;
use crate::kinds::catalog;
use crate::kinds::lock::Inspection;
use crate::kinds::semaphore;
use crate::owner::Owner;
use crate::stats::{self, Figure};
use ext_php_rs::binary::Binary;
use ext_php_rs::binary_slice::BinarySlice;
use ext_php_rs::boxed::ZBox;
use ext_php_rs::error::Result as PhpConvResult;
use ext_php_rs::exception::PhpException;
use ext_php_rs::prelude::*;
use ext_php_rs::types::ZendHashTable;
use ext_php_rs::zend::SapiGlobals;
use std::ffi::CStr;

type Array = ZBox<ZendHashTable>;

/// The SAPI's name and the script of the current request: the request URI under a
/// web SAPI, the script's path under the CLI (`owner::Describe`).
pub fn describe() -> (String, String) {
    // SAFETY: the engine's SAPI module, set before any extension starts; its name
    // is a static C string.
    let module = unsafe { ext_php_rs::ffi::ext_php_rs_sapi_module().as_ref() };
    let sapi = module
        .and_then(|m| {
            (!m.name.is_null())
                .then(|| unsafe { CStr::from_ptr(m.name) }.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    if matches!(sapi.as_str(), "cli" | "phpdbg" | "embed") {
        let globals = SapiGlobals::get();
        return (sapi, globals.request_info().path_translated().unwrap_or("").to_string());
    }
    // The request's own REQUEST_URI, as the web server sent it (query included):
    // CGI and php-fpm put only the script's name in SG(request_info).request_uri.
    let name = c"REQUEST_URI";
    let uri = module.and_then(|m| m.getenv).and_then(|getenv| {
        // SAFETY: the SAPI's getenv, called during a request with a NUL-terminated
        // name; it returns a string the SAPI owns for the request, or NULL.
        let value = unsafe { getenv(name.as_ptr(), name.count_bytes()) };
        (!value.is_null()).then(|| unsafe { CStr::from_ptr(value) }.to_string_lossy().into_owned())
    });
    let uri = uri.or_else(|| {
        let globals = SapiGlobals::get();
        let info = globals.request_info();
        info.request_uri().or_else(|| info.path_translated()).map(str::to_string)
    });
    (sapi, uri.unwrap_or_default())
}

fn owner_array(o: &Owner) -> PhpConvResult<Array> {
    let mut a = ZendHashTable::with_capacity(5);
    a.insert("host", o.host.as_str())?;
    a.insert("pid", i64::from(o.pid))?;
    a.insert("sapi", o.sapi.as_str())?;
    a.insert("script", o.script.as_str())?;
    a.insert("since", o.since)?;
    Ok(a)
}

fn conv(e: ext_php_rs::error::Error) -> PhpException {
    PhpException::from_message(format!("redis-lock: could not build the array: {e}"))
}

/// `Lock::inspect()`'s array.
pub fn lock_array(i: &Inspection) -> PhpResult<Array> {
    let build = || -> PhpConvResult<Array> {
        let mut a = ZendHashTable::with_capacity(7);
        a.insert("state", i.state.name())?;
        a.insert("ttl", i.ttl)?;
        a.insert("readers", i64::try_from(i.readers).unwrap_or(i64::MAX))?;
        a.insert("waiters", i64::try_from(i.waiters).unwrap_or(i64::MAX))?;
        a.insert("fence", i.fence)?;
        a.insert("mine", i.mine)?;
        let recorded: Vec<&Owner> = i.owners.iter().flatten().collect();
        match i.state {
            crate::kinds::lock::State::Read if !recorded.is_empty() => {
                let mut list = ZendHashTable::with_capacity(recorded.len() as u32);
                for o in recorded {
                    list.push(owner_array(o)?)?;
                }
                a.insert("owner", list)?;
            }
            crate::kinds::lock::State::Write if !recorded.is_empty() => {
                a.insert("owner", owner_array(recorded[0])?)?
            }
            _ => a.insert("owner", ())?,
        }
        Ok(a)
    };
    build().map_err(conv)
}

/// `Semaphore::inspect()`'s array.
pub fn semaphore_array(i: &semaphore::Inspection) -> PhpResult<Array> {
    let build = || -> PhpConvResult<Array> {
        let mut a = ZendHashTable::with_capacity(4);
        a.insert("permits", i.permits)?;
        a.insert("available", i.available)?;
        let mut holders = ZendHashTable::with_capacity(i.holders.len() as u32);
        for h in &i.holders {
            let mut one = ZendHashTable::with_capacity(3);
            one.insert("weight", i64::from(h.weight))?;
            one.insert("ttl", h.ttl)?;
            match &h.owner {
                Some(o) => one.insert("owner", owner_array(o)?)?,
                None => one.insert("owner", ())?,
            }
            holders.push(one)?;
        }
        a.insert("holders", holders)?;
        a.insert("waiters", i64::try_from(i.waiters).unwrap_or(i64::MAX))?;
        Ok(a)
    };
    build().map_err(conv)
}

/// This process's lock statistics since it started (a php-fpm worker: since it was
/// forked) or since the last reset: acquired, contended (acquisitions that waited),
/// timeouts (waits that gave up), wait_seconds_total, wait_seconds_max,
/// handed_over (holds received from a release), released, renewals, lost (holds
/// found taken or expired under their holder), errors (LockException family
/// thrown), connects (connections opened, reconnects included), stale
/// (acquisitions that came too late to use, their lease possibly over: given up,
/// never returned), evicting_servers (servers found at connect able to evict
/// lock keys, each address once, also told with an E_WARNING), cad_releases and
/// cad_renewals (those done by the server's own DELIFEQ or DELEX and SET IFEQ, no
/// script: Valkey 9, Redis 8.4). Threads of one process share them.
///
/// @param bool $reset zero the counters after reading them
/// @return array<string, int|float>
#[php_function]
#[php(defaults(reset = false))]
pub fn redis_lock_stats(reset: bool) -> PhpResult<Array> {
    let build = || -> PhpConvResult<Array> {
        let mut a = ZendHashTable::with_capacity(stats::NAMES.len() as u32);
        for (name, figure) in stats::snapshot(reset) {
            match figure {
                Figure::Count(n) => a.insert(name, i64::try_from(n).unwrap_or(i64::MAX))?,
                Figure::Seconds(s) => a.insert(name, s)?,
            }
        }
        Ok(a)
    };
    build().map_err(conv)
}

/// Lists the locks and semaphores under the prefix whose name (without the prefix)
/// matches the glob $pattern, with a bounded SCAN of every master (on Cluster, each
/// one; with Redlock "servers", each server). Auxiliary keys (queues, counters,
/// readers, records) are left out; so is a lock whose own name has their shape
/// (`{x}:queue`).
///
/// @param array $options as for new Lock(): dsn, prefix, sentinels, cluster, tls_*…
/// @param ?string $pattern a SCAN MATCH glob applied after the prefix (null: "*")
/// @param int $limit at most this many names (1 to 1000000)
/// @return list<array{key: string, kind: string}> sorted by key; kind is "lock" or "semaphore"
/// @throws ValueError for bad options or a $limit out of range
/// @throws LockConnectionException when a server cannot be reached
#[php_function]
#[php(defaults(limit = 10000))]
pub fn redis_lock_scan(
    options: Option<&ZendHashTable>,
    pattern: Option<BinarySlice<u8>>,
    limit: i64,
) -> PhpResult<Array> {
    let _call = super::late::InCall::new();
    let settings = settings(options, "redis_lock_scan(): Argument #1 ($options)")?;
    let limit =
        usize::try_from(limit).ok().filter(|l| (1..=1_000_000).contains(l)).ok_or_else(|| {
            PhpException::from(crate::error::LockError::InvalidValue(format!(
            "redis_lock_scan(): Argument #3 ($limit) must be between 1 and 1000000, {limit} given"
        )))
        })?;
    let listing = catalog::scan(&settings, pattern.as_deref().copied().unwrap_or(b"*"), limit)?;
    let build = || -> PhpConvResult<Array> {
        let mut list = ZendHashTable::with_capacity(listing.entries.len() as u32);
        for (name, kind) in &listing.entries {
            let mut one = ZendHashTable::with_capacity(2);
            one.insert("key", Binary::from(name.clone()))?;
            one.insert("kind", kind.name())?;
            list.push(one)?;
        }
        Ok(list)
    };
    build().map_err(conv)
}

/// Registers the functions above.
pub fn functions(module: ModuleBuilder) -> ModuleBuilder {
    module.function(wrap_function!(redis_lock_stats)).function(wrap_function!(redis_lock_scan))
}
