//! What a failure means: whether it leaves a connection usable, and how it reads in
//! a message (never with a password: the address shown is `dsn::display_addr`'s,
//! and no server answer that quotes credentials is passed on).

use crate::net::tls;
use redis::{ConnectionAddr, ConnectionInfo, ErrorKind, RedisError};
use std::time::Duration;

/// Whether the connection can no longer be trusted after this error: anything but
/// a well-formed error reply from the server.
pub(super) fn breaks_connection(e: &RedisError) -> bool {
    !matches!(
        e.kind(),
        ErrorKind::Server(_) | ErrorKind::Extension | ErrorKind::UnexpectedReturnType
    )
}

/// NOAUTH (no password given) and WRONGPASS arrive as ordinary error replies. Before
/// AUTH, Redis also cuts off any command of more than 10 parts (our scripts' calls)
/// with "Protocol error: unauthenticated multibulk length".
pub(super) fn is_auth_refusal(e: &RedisError) -> bool {
    e.kind() == ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"))
        || e.detail().is_some_and(|d| d.contains("unauthenticated"))
}

/// What a failure to set up a connection to `info` means, when it is about TLS or
/// the settings rather than the network.
pub(crate) fn setup_failure(e: &RedisError, info: &ConnectionInfo) -> Option<String> {
    let tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
    tls::explain(e, tls).or_else(|| {
        (e.kind() == ErrorKind::InvalidClientConfig)
            .then(|| e.detail().unwrap_or("invalid TLS settings").to_string())
    })
}

/// `e`, a failure on a connection to `info` with these timeouts, in words.
pub(super) fn describe(
    e: &RedisError,
    info: &ConnectionInfo,
    connect_timeout: Duration,
    read_timeout: Duration,
) -> String {
    if let Some(why) = setup_failure(e, info) {
        why
    } else if e.is_timeout() {
        format!(
            "timed out (connect_timeout {} s, read_timeout {} s)",
            connect_timeout.as_secs_f64(),
            read_timeout.as_secs_f64()
        )
    } else if e.is_connection_refusal() {
        "connection refused".to_string()
    } else if e.detail().is_some_and(|d| d.contains("unauthenticated")) {
        "authentication refused (the server requires a password)".to_string()
    } else if is_auth_refusal(e) {
        format!("authentication refused ({})", e.detail().unwrap_or("bad credentials").trim())
    } else if e.is_connection_dropped() {
        format!("connection lost ({e})")
    } else {
        e.to_string()
    }
}

/// How `first_exchange_failure` begins when a plain connection was closed at its
/// first command.
const CLOSED_AT_FIRST: &str = "the server closed the connection on the first command";

/// Whether `e` is a plain connection closed at its first command: a TLS port, or a
/// server that is gone behind something that still accepts (a proxy, a load
/// balancer). Sentinel tells the two apart: a master it names that worked before.
pub(crate) fn closed_at_first(e: &RedisError) -> bool {
    e.kind() == ErrorKind::InvalidClientConfig
        && e.detail().is_some_and(|d| d.starts_with(CLOSED_AT_FIRST))
}

/// What a failed first exchange means when the two ends speak different protocols.
pub(super) fn first_exchange_failure(
    e: RedisError,
    info: &ConnectionInfo,
    connect_timeout: Duration,
) -> RedisError {
    let why = match info.addr() {
        // A TLS port closes the connection on a plain client's first bytes.
        ConnectionAddr::Tcp(..) if e.is_connection_dropped() && !e.is_timeout() => {
            format!("{CLOSED_AT_FIRST} ({e}): if this port expects TLS, use rediss://")
        }
        // A plain port reads a TLS hello as the start of a command, and waits for its end.
        ConnectionAddr::TcpTls { .. } if e.is_timeout() => format!(
            "no answer to the TLS handshake within connect_timeout ({} s): if this is a plain Redis port, use redis://",
            connect_timeout.as_secs_f64()
        ),
        _ => return e,
    };
    RedisError::from((ErrorKind::InvalidClientConfig, "first exchange", why))
}

/// What a passing state's error reply says, with what the state is.
pub(super) fn passing_state(e: &RedisError) -> String {
    let what = match e.code() {
        Some("LOADING") => "it is loading its dataset",
        Some("MASTERDOWN") => "it is a replica that lost its master",
        Some("READONLY") => "it is a replica (a failover under way?)",
        Some("BUSY") => "a script is still running",
        Some("TRYAGAIN") => "the slot is being migrated",
        Some("CLUSTERDOWN") => "the cluster is down",
        Some("NOREPLICAS") => "it has fewer good replicas than its min-replicas-to-write",
        _ => "a passing state",
    };
    format!("{what} ({} {})", e.code().unwrap_or(""), e.detail().unwrap_or("").trim())
}
