//! The PHP arguments every class takes: seconds (`$timeOut`, `$lockOut`), a token the
//! caller chose, the `$options` array over the php.ini settings, and a token as a
//! return value.

use super::ini;
use crate::config::{OptValue, Settings, Source};
use crate::error::LockError;
use crate::token::{self, Token};
use ext_php_rs::binary_slice::BinarySlice;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ArrayKey, ZendHashTable, Zval};

/// A float parameter in seconds (`$timeOut`, `$lockOut`), taken exactly as an `f64`
/// is. It exists for its default: ext-php-rs writes a parameter's default as stub
/// text on every call, and formatting the two floats was a tenth of a `new Lock`.
#[derive(Clone, Copy)]
pub struct Seconds(pub f64);

impl From<f64> for Seconds {
    fn from(s: f64) -> Self {
        Seconds(s)
    }
}

impl ext_php_rs::convert::FromZval<'_> for Seconds {
    const TYPE: ext_php_rs::flags::DataType = ext_php_rs::flags::DataType::Double;

    fn from_zval(zval: &Zval) -> Option<Self> {
        <f64 as ext_php_rs::convert::FromZval>::from_zval(zval).map(Seconds)
    }
}

impl ext_php_rs::convert::StubLiteral for Seconds {
    fn stub_literal(&self) -> String {
        // The text f64's own stub literal gives, without formatting the defaults.
        if self.0 == 0.0 {
            "0.0".into()
        } else if self.0 == 10.0 {
            "10.0".into()
        } else {
            self.0.stub_literal()
        }
    }
}

pub(super) fn token_zval(token: Option<Token>) -> Zval {
    let mut z = Zval::new();
    match token {
        // Binary-safe: a caller may have chosen any bytes.
        Some(t) => z.set_binary(t),
        None => z.set_bool(false),
    }
    z
}

/// A token the caller chose, checked (1 to 256 bytes); `label` names the argument.
pub(super) fn chosen<'a>(
    label: &str,
    token: Option<BinarySlice<'a, u8>>,
) -> PhpResult<Option<&'a [u8]>> {
    match token {
        Some(t) => {
            token::check_chosen(label, &t)?;
            Ok(Some(t.into()))
        }
        None => Ok(None),
    }
}

/// The php.ini settings, overridden by an `$options` array (`label` names it in errors).
pub(super) fn settings(options: Option<&ZendHashTable>, label: &str) -> PhpResult<Settings> {
    let mut settings = ini::settings()?;
    if let Some(options) = options {
        for (name, value) in options.iter() {
            let name = match &name {
                ArrayKey::String(s) => s.as_str(),
                ArrayKey::Str(s) => s,
                ArrayKey::ZendString(s) => s.as_str().unwrap_or("\u{fffd}"),
                ArrayKey::Long(i) => {
                    return Err(LockError::InvalidValue(format!(
                        "{label} must have string keys, {i} given"
                    ))
                    .into())
                }
            };
            settings.set(name, &option_value(value), Source::Option)?;
        }
    }
    Ok(settings)
}

fn option_value(z: &Zval) -> OptValue {
    if let Some(s) = z.zend_str() {
        OptValue::Str(s.as_bytes().to_vec())
    } else if let Some(i) = z.long() {
        OptValue::Int(i)
    } else if let Some(f) = z.double() {
        OptValue::Float(f)
    } else if let Some(b) = z.bool() {
        OptValue::Bool(b)
    } else if z.is_null() {
        OptValue::Null
    } else if let Some(list) = z.array() {
        // A list of strings (Redlock servers, sentinels, cluster seeds); anything else in it
        // is a type error.
        let items: Option<Vec<Vec<u8>>> =
            list.iter().map(|(_, v)| v.zend_str().map(|s| s.as_bytes().to_vec())).collect();
        match items {
            Some(items) => OptValue::List(items),
            None => OptValue::Other("array"),
        }
    } else if z.is_object() {
        OptValue::Other("object")
    } else {
        OptValue::Other("resource")
    }
}
