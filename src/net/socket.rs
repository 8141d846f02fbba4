//! The byte stream under a connection: TCP, TLS (rustls's session over TCP) or a Unix
//! socket, made within a timeout, with the same reads and writes for all three.
//! Nothing here knows RESP.

use crate::config::TlsFiles;
use redis::{ConnectionAddr, ConnectionInfo, ErrorKind, RedisError, RedisResult};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::io::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A connected socket.
pub(super) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over TCP: rustls's session, read and written through its socket.
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    /// Connects to `info`'s address (TCP, TLS with `tls`'s files, or a Unix socket)
    /// within `timeout`; its read and write timeouts are what is left of it. The TLS
    /// handshake is made on the first exchange.
    pub(super) fn connect(
        info: &ConnectionInfo,
        tls: &TlsFiles,
        timeout: Duration,
    ) -> RedisResult<Stream> {
        let started = Instant::now();
        let stream = match info.addr() {
            ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
                let mut last = None;
                let mut found = None;
                for addr in (host.as_str(), *port).to_socket_addrs()? {
                    let left =
                        timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
                    match TcpStream::connect_timeout(&addr, left) {
                        Ok(s) => {
                            found = Some(s);
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                }
                let s = match found {
                    Some(s) => s,
                    None => {
                        return Err(last
                            .unwrap_or_else(|| {
                                io::Error::new(io::ErrorKind::NotFound, "the host has no address")
                            })
                            .into())
                    }
                };
                s.set_nodelay(true)?;
                match info.addr() {
                    ConnectionAddr::TcpTls { insecure, .. } => {
                        Stream::Tls(Box::new(tls_session(host, *insecure, tls, s)?))
                    }
                    _ => Stream::Tcp(s),
                }
            }
            ConnectionAddr::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
            // An address kind a later redis-rs adds: nothing here speaks it.
            _ => {
                return Err(RedisError::from((
                    ErrorKind::InvalidClientConfig,
                    "connection",
                    "an address of a kind this client cannot reach".to_string(),
                )))
            }
        };
        let left = timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
        stream.set_read_timeout(Some(left))?;
        stream.set_write_timeout(Some(left))?;
        Ok(stream)
    }

    pub(super) fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tls(s) => s.sock.set_read_timeout(d),
        }
    }

    pub(super) fn read_timeout(&self) -> io::Result<Option<Duration>> {
        match self {
            Stream::Tcp(s) => s.read_timeout(),
            Stream::Unix(s) => s.read_timeout(),
            Stream::Tls(s) => s.sock.read_timeout(),
        }
    }

    pub(super) fn set_write_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(d),
            Stream::Unix(s) => s.set_write_timeout(d),
            Stream::Tls(s) => s.sock.set_write_timeout(d),
        }
    }

    pub(super) fn set_nonblocking(&self, yes: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(yes),
            Stream::Unix(s) => s.set_nonblocking(yes),
            Stream::Tls(s) => s.sock.set_nonblocking(yes),
        }
    }

    pub(super) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }

    pub(super) fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
            // rustls's write keeps what the socket did not take: flush sends it all.
            Stream::Tls(s) => s.write_all(buf).and_then(|()| s.flush()),
        }
    }

    /// The socket, for `poll(2)`.
    pub(super) fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.sock.as_raw_fd(),
        }
    }

    pub(super) fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Whether rustls holds decrypted bytes not read yet, which `poll(2)` would not see.
    pub(super) fn buffered(&mut self) -> bool {
        match self {
            Stream::Tls(s) => {
                s.conn.process_new_packets().is_ok_and(|io| io.plaintext_bytes_to_read() > 0)
            }
            _ => false,
        }
    }

    /// Whether the peer has closed its side, or the socket failed, asked without waiting.
    pub(super) fn peer_closed(&self) -> bool {
        peer_closed(self.fd())
    }
}

/// A TLS session with `host` over the connected socket `sock`: SNI and the
/// certificate's name are the host's (an IP address is checked as one).
fn tls_session(
    host: &str,
    insecure: bool,
    tls: &TlsFiles,
    sock: TcpStream,
) -> RedisResult<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
    let invalid = |why: String| RedisError::from((ErrorKind::InvalidClientConfig, "TLS", why));
    let config = tls.client_config(insecure).map_err(invalid)?;
    // A bracketed IPv6 host from a DSN is named without its brackets.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = rustls::pki_types::ServerName::try_from(bare.to_string())
        .map_err(|_| invalid(format!("\"{host}\" is not a host name TLS can check")))?;
    let conn = rustls::ClientConnection::new(config, name)
        .map_err(|e| invalid(format!("TLS settings: {e}")))?;
    Ok(rustls::StreamOwned::new(conn, sock))
}

/// Whether the peer of socket `fd` has closed its side, or the socket failed, asked
/// without waiting. Linux says so with `POLLRDHUP` even when data is still unread.
#[cfg(target_os = "linux")]
fn peer_closed(fd: RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLRDHUP, revents: 0 };
    // SAFETY: one valid pollfd, for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r < 0 || p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

/// Elsewhere: a readable socket whose next read would return nothing (a peek) is
/// closed; one with data unread counts as open.
#[cfg(not(target_os = "linux"))]
fn peer_closed(fd: RawFd) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    if r < 0 || p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return true;
    }
    if p.revents & libc::POLLIN == 0 {
        return false;
    }
    let mut byte = 0u8;
    // SAFETY: a one-byte buffer that outlives the call.
    let n = unsafe {
        libc::recv(fd, (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT)
    };
    n == 0
}
