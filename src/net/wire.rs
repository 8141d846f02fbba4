//! The command connection.
//!
//! Over plain TCP and Unix sockets it is a connection of our own: commands go out as
//! they were encoded (`resp`), and replies are read straight from the socket into a
//! buffer that is reused and never cleared. redis-rs's reader (combine's decoder)
//! zeroes up to 8 KiB of buffer before every `read()`; after the process slept
//! waiting for the reply those are cold cache lines, and on a lock cycle (two round
//! trips) they cost about 5% of the client's CPU. Over TLS, and for the wake
//! subscriber (pub/sub), the connection is redis-rs's.
//!
//! Replies are RESP2, the protocol a connection speaks until it sends `HELLO 3`,
//! which this one never does. An error reply is handed to redis-rs's own parser, so
//! that its kind (NOSCRIPT, MOVED, ASK, READONLY…) is exactly what redis-rs would give.

use redis::{ConnectionAddr, ConnectionInfo, ConnectionLike, ErrorKind, ProtocolVersion, RedisError, RedisResult, Value};
use crate::net::resp;
use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A connection to one server, for commands.
pub enum Connection {
    /// Plain TCP or a Unix socket, read by `Plain`.
    Plain(Plain),
    /// TLS: redis-rs's connection.
    Redis(redis::Connection),
}

impl Connection {
    /// Whether `info` gets a plain connection: not TLS, and RESP2.
    pub fn plain_for(info: &ConnectionInfo) -> bool {
        matches!(info.addr(), ConnectionAddr::Tcp(..) | ConnectionAddr::Unix(_))
            && info.redis_settings().protocol() == ProtocolVersion::RESP2
    }

    /// Sets how long a read may block (`None`: forever).
    pub fn set_read_timeout(&self, d: Option<Duration>) -> RedisResult<()> {
        match self {
            Connection::Plain(p) => p.stream.set_read_timeout(d).map_err(RedisError::from),
            Connection::Redis(c) => c.set_read_timeout(d),
        }
    }

    /// Sets how long a write may block (`None`: forever).
    pub fn set_write_timeout(&self, d: Option<Duration>) -> RedisResult<()> {
        match self {
            Connection::Plain(p) => p.stream.set_write_timeout(d).map_err(RedisError::from),
            Connection::Redis(c) => c.set_write_timeout(d),
        }
    }

    /// Sends an encoded command without reading its reply (`recv_response` does).
    pub fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        match self {
            Connection::Plain(p) => p.send(cmd),
            Connection::Redis(c) => c.send_packed_command(cmd),
        }
    }

    /// Reads one reply; an error reply is a `Value::ServerError`, as with redis-rs's
    /// `recv_response`, whatever the kind of connection.
    pub fn recv_response(&mut self) -> RedisResult<Value> {
        match self {
            Connection::Plain(p) => p.read_reply(),
            Connection::Redis(c) => c.recv_response(),
        }
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Connection::Plain(p) => {
                p.send(cmd)?;
                p.read_reply()
            }
            Connection::Redis(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands(&mut self, cmd: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        match self {
            Connection::Plain(p) => {
                p.send(cmd)?;
                let mut replies = Vec::with_capacity(count);
                // Every reply is read, so that none is left for the next command.
                for i in 0..offset + count {
                    let reply = p.read_reply()?;
                    if i >= offset {
                        replies.push(reply);
                    }
                }
                Ok(replies)
            }
            Connection::Redis(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Plain(p) => p.db,
            Connection::Redis(c) => c.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Connection::Plain(_) => matches!(self.req_packed_command(b"*1\r\n$4\r\nPING\r\n"), Ok(Value::SimpleString(ref s)) if s == "PONG"),
            Connection::Redis(c) => c.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Connection::Plain(p) => !p.broken,
            Connection::Redis(c) => c.is_open(),
        }
    }
}

thread_local! {
    static BUFFER: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(512));
}

/// Sends the command `parts` (its name first), written by hand (`resp`), and returns
/// the reply; an error reply is an `Err`, as with `Cmd::query`.
pub fn request(conn: &mut Connection, parts: &[&[u8]]) -> RedisResult<Value> {
    with_buffer(|buf| {
        resp::encode(buf, parts.len(), parts.iter().copied());
        send(conn, buf)
    })
}

/// Runs `f` with this thread's command buffer (a fresh one if it is in use already).
pub(crate) fn with_buffer<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => f(&mut buf),
        Err(_) => f(&mut Vec::new()),
    })
}

/// Sends an encoded command and reads its reply.
pub(crate) fn send(conn: &mut Connection, buf: &[u8]) -> RedisResult<Value> {
    conn.req_packed_command(buf)?.extract_error()
}


/// A plain socket and what has been read from it.
pub struct Plain {
    stream: Stream,
    /// `buf[start..end]` is read and not yet parsed; reads go into `buf[end..]`, which
    /// was zeroed once, when the buffer grew, and never again.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    db: i64,
    /// Set by an I/O or protocol error: the connection must not be used again.
    broken: bool,
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
        }
    }

    fn set_write_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(d),
            Stream::Unix(s) => s.set_write_timeout(d),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
        }
    }
}

/// The reply buffer's first size: a lock cycle's replies are a few bytes.
const FIRST_BUFFER: usize = 4096;

/// Longest bulk string accepted in a reply: Redis's default `proto-max-bulk-len`.
const MAX_BULK: i64 = 512 * 1024 * 1024;

/// Deepest nesting of arrays accepted in a reply (a guard against a hostile server).
const MAX_DEPTH: usize = 64;

impl Plain {
    /// Connects to `info` (plain TCP or a Unix socket) within `timeout`, then
    /// authenticates and selects its database as redis-rs does (`AUTH`, `SELECT`).
    pub fn connect(info: &ConnectionInfo, timeout: Duration) -> RedisResult<Plain> {
        let started = Instant::now();
        let stream = match info.addr() {
            ConnectionAddr::Tcp(host, port) => {
                let mut last = None;
                let mut found = None;
                for addr in (host.as_str(), *port).to_socket_addrs()? {
                    let left = timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
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
                    None => return Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "the host has no address")).into()),
                };
                s.set_nodelay(true)?;
                Stream::Tcp(s)
            }
            ConnectionAddr::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
            // TLS (and any address kind redis-rs adds) needs redis-rs's connection.
            _ => return Err(RedisError::from((ErrorKind::InvalidClientConfig, "plain connection", "not a plain address".to_string()))),
        };
        let left = timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
        stream.set_read_timeout(Some(left))?;
        stream.set_write_timeout(Some(left))?;
        let settings = info.redis_settings();
        let mut conn = Plain { stream, buf: vec![0; FIRST_BUFFER], start: 0, end: 0, db: settings.db(), broken: false };
        if let Some(password) = settings.password() {
            let mut auth: Vec<&[u8]> = vec![b"AUTH"];
            auth.extend(settings.username().map(str::as_bytes));
            auth.push(password.as_bytes());
            conn.request(&auth).map_err(auth_refused)?;
        }
        if settings.db() != 0 {
            conn.request(&[b"SELECT", settings.db().to_string().as_bytes()])?;
        }
        Ok(conn)
    }

    /// Sends one command and reads its reply; an error reply is an `Err`.
    fn request(&mut self, parts: &[&[u8]]) -> RedisResult<Value> {
        let mut buf = Vec::new();
        resp::encode(&mut buf, parts.len(), parts.iter().copied());
        self.send(&buf)?;
        self.read_reply()?.extract_error()
    }

    fn send(&mut self, cmd: &[u8]) -> RedisResult<()> {
        if self.broken {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the connection broke earlier").into());
        }
        self.stream.write_all(cmd).map_err(|e| self.broke(e))
    }

    /// Reads one whole reply; an error reply is a `Value::ServerError`, as redis-rs gives it.
    fn read_reply(&mut self) -> RedisResult<Value> {
        loop {
            match parse(&self.buf[self.start..self.end], 0) {
                Ok(Some((value, used))) => {
                    self.start += used;
                    if self.start == self.end {
                        (self.start, self.end) = (0, 0);
                    }
                    return Ok(value);
                }
                Ok(None) => self.fill()?,
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// Reads more of the reply into the buffer: into the room left at its end, after
    /// moving unparsed bytes to its start or growing it when there is none.
    fn fill(&mut self) -> RedisResult<()> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            } else {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        match self.stream.read(&mut self.buf[self.end..]) {
            Ok(0) => Err(self.broke(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection"))),
            Ok(n) => {
                self.end += n;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(self.broke(e)),
        }
    }

    fn broke(&mut self, e: io::Error) -> RedisError {
        self.broken = true;
        e.into()
    }
}

/// An `AUTH` refused by the server, as redis-rs reports it: the reply's text stays in
/// the detail, never the password.
fn auth_refused(e: RedisError) -> RedisError {
    match e.kind() {
        ErrorKind::Server(_) | ErrorKind::Extension => RedisError::from((
            ErrorKind::AuthenticationFailed,
            "Password authentication failed",
            e.detail().unwrap_or("refused").trim().to_string(),
        )),
        _ => e,
    }
}

/// Parses one RESP2 reply at the start of `data`: the value and how many bytes it
/// took, or `None` when `data` does not hold all of it yet.
fn parse(data: &[u8], depth: usize) -> RedisResult<Option<(Value, usize)>> {
    let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
    let (kind, line) = match data.split_first() {
        Some((&kind, _)) => (kind, &data[1..eol]),
        None => return Ok(None),
    };
    let after = eol + 2;
    let number = || -> RedisResult<i64> {
        std::str::from_utf8(line).ok().and_then(|s| s.parse().ok()).ok_or_else(|| protocol("a number", line))
    };
    Ok(Some(match kind {
        b'+' => {
            let text = String::from_utf8_lossy(line);
            (if text == "OK" { Value::Okay } else { Value::SimpleString(text.into_owned()) }, after)
        }
        // redis-rs's parser reads the error line, so that its kind is redis-rs's.
        b'-' => (redis::parse_redis_value(&data[..after])?, after),
        b':' => (Value::Int(number()?), after),
        b'$' => match number()? {
            -1 => (Value::Nil, after),
            // Redis's own bound (proto-max-bulk-len) caps what a reply may make us hold.
            n if !(0..=MAX_BULK).contains(&n) => return Err(protocol("a bulk length", line)),
            n => {
                let n = n as usize;
                let end = after.checked_add(n).and_then(|e| e.checked_add(2)).ok_or_else(|| protocol("a bulk length", line))?;
                if data.len() < end {
                    return Ok(None);
                }
                if &data[end - 2..end] != b"\r\n" {
                    return Err(protocol("the end of a bulk string", &data[end - 2..end]));
                }
                (Value::BulkString(data[after..end - 2].to_vec()), end)
            }
        },
        b'*' => match number()? {
            -1 => (Value::Nil, after),
            n if n < 0 || depth >= MAX_DEPTH => return Err(protocol("an array length", line)),
            n => {
                let mut items = Vec::with_capacity((n as usize).min(1024));
                let mut at = after;
                for _ in 0..n {
                    match parse(&data[at..], depth + 1)? {
                        Some((item, used)) => {
                            items.push(item);
                            at += used;
                        }
                        None => return Ok(None),
                    }
                }
                (Value::Array(items), at)
            }
        },
        _ => return Err(protocol("a RESP2 reply", &data[..eol.min(16)])),
    }))
}

fn protocol(what: &str, got: &[u8]) -> RedisError {
    RedisError::from((ErrorKind::Parse, "protocol error", format!("expected {what}, got {:?}", String::from_utf8_lossy(got))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(data: &[u8]) -> Value {
        let (v, used) = parse(data, 0).unwrap().unwrap();
        assert_eq!(used, data.len(), "{}", String::from_utf8_lossy(data));
        v
    }

    #[test]
    fn replies_read_as_redis_rs_reads_them() {
        for reply in [
            &b"+OK\r\n"[..],
            b"+PONG\r\n",
            b":42\r\n",
            b":-7\r\n",
            b"$5\r\nhe\r\no\r\n",
            b"$0\r\n\r\n",
            b"$-1\r\n",
            b"*-1\r\n",
            b"*0\r\n",
            b"*2\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n",
            b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\ng:x\r\n",
        ] {
            assert_eq!(whole(reply), redis::parse_redis_value(reply).unwrap(), "{}", String::from_utf8_lossy(reply));
        }
    }

    #[test]
    fn error_replies_keep_redis_rs_kinds() {
        for (reply, kind) in [
            (&b"-NOSCRIPT No matching script.\r\n"[..], redis::ServerErrorKind::NoScript),
            (b"-MOVED 3999 127.0.0.1:6381\r\n", redis::ServerErrorKind::Moved),
            (b"-READONLY You can't write against a read only replica.\r\n", redis::ServerErrorKind::ReadOnly),
        ] {
            let err = whole(reply).extract_error().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Server(kind), "{}", String::from_utf8_lossy(reply));
        }
        let nested = whole(b"*2\r\n:1\r\n-ERR no\r\n");
        assert!(nested.extract_error().is_err());
    }

    #[test]
    fn partial_replies_wait_for_more_and_garbage_is_refused() {
        let full = b"*2\r\n$3\r\nabc\r\n:5\r\n";
        for cut in 0..full.len() {
            assert!(parse(&full[..cut], 0).unwrap().is_none(), "cut at {cut}");
        }
        for bad in [&b"?x\r\n"[..], b":x\r\n", b"$-2\r\n", b"$3\r\nabcde\r\n", b"*-5\r\n", b"$9999999999\r\n"] {
            assert!(parse(bad, 0).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let deep = "*1\r\n".repeat(MAX_DEPTH + 1) + ":1\r\n";
        assert!(parse(deep.as_bytes(), 0).is_err());
    }
}
