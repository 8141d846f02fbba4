//! An option's value as it arrives from PHP, and the parsers that check one: each
//! option of `config` names its parser. Messages name the value the way the user
//! wrote it (`label`).

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

/// The bounds of `max_reply`: 64 KiB, and Redis's own `proto-max-bulk-len` (512 MiB).
pub const MAX_REPLY_LEAST: usize = 64 * 1024;
pub const MAX_REPLY_LIMIT: usize = 512 * 1024 * 1024;

/// Largest duration (seconds) accepted anywhere: about 31 years. Beyond it Redis
/// would refuse the expiry and `Duration` arithmetic gains nothing.
pub(crate) const MAX_SECONDS: f64 = 1.0e9;

/// A string that must be UTF-8 (a dsn, a service name).
pub(crate) fn utf8_value(label: &str, value: &OptValue, source: Source) -> Result<String> {
    String::from_utf8(string_value(label, value, source)?)
        .map_err(|_| LockError::InvalidValue(format!("{label} must be valid UTF-8")))
}

/// A cluster's seed nodes: a `dsn_list` whose dsns name no database, since a
/// cluster has only database 0.
pub(crate) fn cluster_seeds(label: &str, value: &OptValue, source: Source) -> Result<Vec<String>> {
    let seeds = dsn_list(label, value, source)?;
    for dsn in &seeds {
        if parse_dsn(dsn)?.redis_settings().db() != 0 {
            return Err(LockError::InvalidValue(format!(
                "{label}: \"{}\" names a database, but a cluster has only database 0",
                redact_dsn(dsn)
            )));
        }
    }
    Ok(seeds)
}

/// A file path; "" (or null in the options) for none.
pub(crate) fn path_value(label: &str, value: &OptValue, source: Source) -> Result<Option<String>> {
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

/// The name as the user wrote it: `option "name"` or `redis_lock.name`.
pub(crate) fn label(name: &str, source: Source) -> String {
    match source {
        Source::Option => format!("option \"{name}\""),
        Source::Ini => format!("redis_lock.{name}"),
    }
}

pub(crate) fn string_value(label: &str, value: &OptValue, source: Source) -> Result<Vec<u8>> {
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
pub(crate) fn dsn_list(label: &str, value: &OptValue, source: Source) -> Result<Vec<String>> {
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

/// A whole number from `MIN` to 1000.
pub(crate) fn count_value<const MIN: u32>(
    label: &str,
    value: &OptValue,
    source: Source,
) -> Result<u32> {
    let min = MIN;
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
pub(crate) fn bytes_value(label: &str, value: &OptValue, source: Source) -> Result<usize> {
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

pub(crate) fn bool_value(label: &str, value: &OptValue, source: Source) -> Result<bool> {
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
pub(crate) fn cap_seconds(
    label: &str,
    value: &OptValue,
    source: Source,
) -> Result<Option<Duration>> {
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

pub(crate) fn positive_seconds(label: &str, value: &OptValue, source: Source) -> Result<Duration> {
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
