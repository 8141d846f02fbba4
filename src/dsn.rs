//! What a user writes as an address: parsing and checking a dsn, showing it in
//! messages without its credentials, and the same settings at another address (a
//! master a sentinel named, a node a cluster named).

use crate::error::{LockError, Result};
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

/// Replaces the user-info part of a dsn, so that no message ever shows a password.
pub fn redact_dsn(dsn: &str) -> String {
    let Some(scheme_end) = dsn.find("://") else {
        return dsn.to_string();
    };
    let rest = &dsn[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}://***@{}", &dsn[..scheme_end], &rest[at + 1..]),
        None => dsn.to_string(),
    }
}

/// Parses and checks a dsn. Errors are `InvalidValue` and never show the password.
pub fn parse_dsn(dsn: &str) -> Result<ConnectionInfo> {
    let bad =
        |why: &str| LockError::InvalidValue(format!("invalid dsn \"{}\": {why}", redact_dsn(dsn)));
    let scheme = dsn.split_once("://").map(|(s, _)| s).unwrap_or("");
    if !matches!(scheme, "redis" | "rediss" | "unix") {
        return Err(bad(
            "expected redis://[user:pass@]host[:port][/db], rediss://... or unix:///path/to.sock",
        ));
    }
    let info =
        dsn.into_connection_info().map_err(|e| bad(e.detail().unwrap_or_else(|| e.category())))?;
    if info.redis_settings().db() < 0 {
        return Err(bad("the database number must not be negative"));
    }
    match info.addr() {
        ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
            if host.is_empty() {
                return Err(bad("missing host"));
            }
            if *port == 0 {
                return Err(bad("port 0 is not a valid port"));
            }
        }
        ConnectionAddr::Unix(path) => {
            if path.as_os_str().is_empty() || path == std::path::Path::new("/") {
                return Err(bad("missing socket path"));
            }
        }
        _ => return Err(bad("unsupported address")),
    }
    Ok(info)
}

/// How an address is shown in messages: scheme, host and port or socket path, and
/// the database; never the credentials.
pub fn display_addr(info: &ConnectionInfo) -> String {
    let db = info.redis_settings().db();
    let base = match info.addr() {
        ConnectionAddr::Tcp(host, port) => format!("redis://{}:{port}", bracket(host)),
        ConnectionAddr::TcpTls { host, port, .. } => format!("rediss://{}:{port}", bracket(host)),
        ConnectionAddr::Unix(path) => format!("unix://{}", path.display()),
        _ => "redis".to_string(),
    };
    if db != 0 {
        format!("{base}/{db}")
    } else {
        base
    }
}

/// `info`'s settings (credentials, database, TLS or not) at another address: a
/// master a sentinel named, a node a cluster named.
pub fn info_at(info: &ConnectionInfo, host: &str, port: u16) -> ConnectionInfo {
    let (scheme, fragment) = match info.addr() {
        ConnectionAddr::TcpTls { insecure: true, .. } => ("rediss", "#insecure"),
        ConnectionAddr::TcpTls { .. } => ("rediss", ""),
        _ => ("redis", ""),
    };
    match format!("{scheme}://{}:{port}/{fragment}", bracket(host)).as_str().into_connection_info()
    {
        Ok(moved) => moved.set_redis_settings(info.redis_settings().clone()),
        Err(_) => info.clone(),
    }
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_dsns_parse() {
        for dsn in [
            "redis://127.0.0.1:6379",
            "redis://localhost",
            "redis://user:secret@10.0.0.1:6380/3",
            "redis://:secret@[::1]:6379",
            "rediss://cache.example:6380",
            "unix:///var/run/redis.sock",
        ] {
            parse_dsn(dsn).unwrap_or_else(|e| panic!("{dsn}: {e}"));
        }
        let info = parse_dsn("redis://u:p@h:7/2").unwrap();
        assert_eq!(display_addr(&info), "redis://h:7/2");
        assert_eq!(display_addr(&parse_dsn("redis://[::1]:1").unwrap()), "redis://[::1]:1");
    }

    #[test]
    fn bad_dsns_are_value_errors_without_password() {
        for dsn in [
            "",
            "127.0.0.1:6379",
            "http://h:1",
            "redis://",
            "redis://:hunter2@h:99999",
            "redis://:hunter2@h:1/notanumber",
            "redis://:hunter2@h:1/-1",
            "redis://h:0",
            "unix://",
        ] {
            match parse_dsn(dsn) {
                Err(LockError::InvalidValue(m)) => {
                    assert!(m.contains("invalid dsn"), "{m}");
                    assert!(!m.contains("hunter2"), "password leaked: {m}");
                }
                other => panic!("{dsn:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn redaction_hides_user_info_only() {
        assert_eq!(redact_dsn("redis://u:pw@h:1/0"), "redis://***@h:1/0");
        assert_eq!(redact_dsn("redis://h:1/0"), "redis://h:1/0");
        assert_eq!(redact_dsn("redis://:p@ss@h:1"), "redis://***@h:1");
    }

    #[test]
    fn another_address_keeps_credentials_and_tls() {
        let base = parse_dsn("rediss://user:pw@10.0.0.1:7000/#insecure").unwrap();
        let moved = info_at(&base, "10.0.0.2", 7001);
        assert!(
            matches!(moved.addr(), ConnectionAddr::TcpTls { host, port: 7001, insecure: true, .. } if host == "10.0.0.2")
        );
        assert_eq!(moved.redis_settings().username(), Some("user"));
        assert_eq!(moved.redis_settings().password(), Some("pw"));
        let plain = info_at(&parse_dsn("redis://127.0.0.1:7000").unwrap(), "::1", 7002);
        assert!(matches!(plain.addr(), ConnectionAddr::Tcp(host, 7002) if host == "::1"));
    }
}
