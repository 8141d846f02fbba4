//! The command connection.
//!
//! Over plain TCP and Unix sockets it is a connection of our own: commands go out as
//! they were encoded (`resp`), and replies are read straight from the socket into a
//! buffer that is reused and never cleared. redis-rs's reader (combine's decoder)
//! zeroes up to 8 KiB of buffer before every `read()`; after the process slept
//! waiting for the reply those are cold cache lines, and on a lock cycle (two round
//! trips) they cost about 5% of the client's CPU. TLS is rustls's session over the
//! same socket, under the same reader, so a TLS connection listens for grants too.
//! The wake subscriber (pub/sub), and a DSN that asks for RESP3 from the start
//! (`?protocol=resp3`), use redis-rs's connection.
//!
//! A connection speaks RESP2 until a waiter needs it to listen (`listen_on`): it then
//! switches to RESP3 (`HELLO 3`), where push messages and replies share the socket,
//! and subscribes on it, so that a process that waited still holds one connection.
//! RESP3 replies are read into the shapes RESP2 gives (a map as a flat array, a
//! double as its text, a Lua `false` as nil), so nothing above knows which protocol
//! a connection speaks; push messages are kept aside for the waiter (`next_push`),
//! never taken for a reply. An error reply is handed to redis-rs's own parser, so
//! that its kind (NOSCRIPT, MOVED, ASK, READONLY…) is exactly what redis-rs would give.
//!
//! A command may also be sent without waiting for its reply (`send_unawaited`: the
//! release that ends `synchronized()`): the reply is read and put aside at the
//! connection's next use, before that use's own reply, or before it closes.

use redis::{ConnectionAddr, ConnectionInfo, ConnectionLike, ErrorKind, ProtocolVersion, RedisError, RedisResult, Value};
use crate::config::TlsFiles;
use crate::net::resp;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::io::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A connection to one server, for commands.
pub enum Connection {
    /// TCP, TLS or a Unix socket, read by `Plain`.
    Plain(Plain),
    /// redis-rs's connection, with the replies it still owes.
    Redis(RedisRs),
}

/// redis-rs's connection, and the replies to unawaited commands it still owes.
pub struct RedisRs {
    conn: redis::Connection,
    pending: Owed,
    /// As `Plain::serial`.
    serial: u64,
}

impl RedisRs {
    /// Reads (and puts aside) the replies owed to unawaited commands.
    fn settle(&mut self) -> RedisResult<()> {
        while self.pending.any() {
            let reply = self.conn.recv_response()?;
            self.pending.came(&reply);
        }
        Ok(())
    }
}

impl From<redis::Connection> for Connection {
    fn from(conn: redis::Connection) -> Self {
        Connection::Redis(RedisRs { conn, pending: Owed::default(), serial: next_serial() })
    }
}

impl Connection {
    /// Whether `info` gets a connection of our own (TCP, TLS or a Unix socket): any
    /// whose settings ask for RESP2, the protocol it starts in.
    pub fn plain_for(info: &ConnectionInfo) -> bool {
        matches!(info.addr(), ConnectionAddr::Tcp(..) | ConnectionAddr::TcpTls { .. } | ConnectionAddr::Unix(_))
            && info.redis_settings().protocol() == ProtocolVersion::RESP2
    }

    /// The connection's serial (`Plain::serial`): no two connections share one.
    pub fn serial(&self) -> u64 {
        match self {
            Connection::Plain(p) => p.serial(),
            Connection::Redis(c) => c.serial,
        }
    }

    /// Whether the server closed it, as far as is known without waiting
    /// (`Plain::hung_up`; for redis-rs's, whether it found it closed).
    pub fn hung_up(&self) -> bool {
        match self {
            Connection::Plain(p) => p.hung_up(),
            Connection::Redis(c) => !c.conn.is_open(),
        }
    }

    /// Sets how long a read may block (`None`: forever).
    pub fn set_read_timeout(&self, d: Option<Duration>) -> RedisResult<()> {
        match self {
            Connection::Plain(p) => p.stream.set_read_timeout(d).map_err(RedisError::from),
            Connection::Redis(c) => c.conn.set_read_timeout(d),
        }
    }

    /// Sets how long a write may block (`None`: forever).
    pub fn set_write_timeout(&self, d: Option<Duration>) -> RedisResult<()> {
        match self {
            Connection::Plain(p) => p.stream.set_write_timeout(d).map_err(RedisError::from),
            Connection::Redis(c) => c.conn.set_write_timeout(d),
        }
    }

    /// Sends an encoded command without reading its reply (`recv_response` does).
    pub fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        match self {
            Connection::Plain(p) => p.send(cmd),
            Connection::Redis(c) => c.conn.send_packed_command(cmd),
        }
    }

    /// Sends an encoded command whose reply nobody waits for: it is read and put
    /// aside at the connection's next use, or before it closes, and checked against
    /// `watch` then, if given. Its outcome is not known to the caller; a connection
    /// lost before the reply came means what a crash means.
    pub fn send_unawaited(&mut self, cmd: &[u8], watch: Option<Watch>) -> RedisResult<()> {
        match self {
            Connection::Plain(p) => p.send(cmd)?,
            Connection::Redis(c) => {
                c.settle()?;
                c.conn.send_packed_command(cmd)?;
            }
        }
        match self {
            Connection::Plain(p) => p.pending.push(watch),
            Connection::Redis(c) => c.pending.push(watch),
        }
        Ok(())
    }

    /// Reads one reply (after those owed to unawaited commands); an error reply is a
    /// `Value::ServerError`, as with redis-rs's `recv_response`, whatever the kind of
    /// connection.
    pub fn recv_response(&mut self) -> RedisResult<Value> {
        match self {
            Connection::Plain(p) => p.read_reply(),
            Connection::Redis(c) => {
                c.settle()?;
                c.conn.recv_response()
            }
        }
    }

    /// Reads, without blocking, the replies owed to unawaited commands that have
    /// arrived (request end: the next request finds a clean connection sooner).
    pub fn settle_arrived(&mut self) {
        if let Connection::Plain(p) = self {
            p.settle_arrived();
        }
    }

    /// Reads the replies still owed to unawaited commands, blocking (before the
    /// connection closes: see `Plain`'s drop, which does it for a plain one).
    pub fn settle_all(&mut self) {
        if let Connection::Redis(c) = self {
            let _ = c.settle();
        }
    }

    /// redis-rs's connection, for the wake subscriber (which reads it as pub/sub).
    pub fn into_redis(self) -> Option<redis::Connection> {
        match self {
            Connection::Redis(c) => Some(c.conn),
            Connection::Plain(_) => None,
        }
    }

    /// The plain connection, for what only it can do (listen for pushes).
    pub fn plain(&mut self) -> Option<&mut Plain> {
        match self {
            Connection::Plain(p) => Some(p),
            Connection::Redis(_) => None,
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
            Connection::Redis(c) => {
                c.conn.send_packed_command(cmd)?;
                c.settle()?;
                c.conn.recv_response()
            }
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
            Connection::Redis(c) => {
                c.settle()?;
                c.conn.req_packed_commands(cmd, offset, count)
            }
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Plain(p) => p.db,
            Connection::Redis(c) => c.conn.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Connection::Plain(_) => matches!(self.req_packed_command(b"*1\r\n$4\r\nPING\r\n"), Ok(Value::SimpleString(ref s)) if s == "PONG"),
            Connection::Redis(c) => c.conn.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Connection::Plain(p) => !p.broken,
            Connection::Redis(c) => c.conn.is_open(),
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
    /// Replies owed to commands sent unawaited (`send_unawaited`), read first.
    pending: Owed,
    /// Whether it speaks RESP3 (`HELLO 3` answered): `None` until asked.
    resp3: Option<bool>,
    /// The channels it is subscribed to, and whether each is sharded (`SSUBSCRIBE`).
    channels: Vec<(String, bool)>,
    /// Messages on those channels (channel, payload), read while reading replies,
    /// oldest first.
    pushes: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// The random part of its channels' names, once it has one (`wake`'s to choose).
    pub wake_id: Option<String>,
    /// Which of its channels waits use now: a channel that a wait left in doubt is
    /// retired, and the next wait subscribes the next one (`pool::retire`).
    pub wake_generation: u64,
    /// This connection among every one the process made (`serial`).
    serial: u64,
    /// The largest reply it reads: a longer one is a protocol error (`max_reply`).
    max_reply: usize,
}

/// What a reply owed to an unawaited command must show for the hold it released to
/// have lasted until then: an integer of at least `at_least` (a release script's
/// count of what it released). Less, read while the hold's lease still surely lasted
/// (`by`), means the hold was gone before its release ran: forced, evicted, forgotten
/// or lost to a failover under the work. It is counted as lost when the reply is read
/// (`stats::lost_late`). Read after `by`, it may only mean that the release itself
/// came after the lease (held up on the way), which cost the work nothing: not counted.
#[derive(Debug, Clone)]
pub struct Watch {
    /// What was released ("lock", "semaphore", "MultiLock"), for the message.
    pub what: &'static str,
    /// Its name as given.
    pub name: Vec<u8>,
    pub at_least: i64,
    /// Until when the hold's lease surely lasted, as the releaser counted it; `None`:
    /// it never ended.
    pub by: Option<crate::clock::Boot>,
}

impl Watch {
    /// Whether `reply`, read now, shows the hold lost under its work (see `Watch`).
    pub fn lost(&self, reply: &Value) -> bool {
        matches!(reply, Value::Int(n) if *n < self.at_least) && self.by.is_none_or(|by| crate::clock::Boot::now() < by)
    }
}

/// Replies owed to commands sent unawaited, oldest first, each with what to check
/// in it, if anything.
#[derive(Debug, Default)]
struct Owed(VecDeque<Option<Watch>>);

impl Owed {
    #[inline(always)]
    fn any(&self) -> bool {
        !self.0.is_empty()
    }

    fn push(&mut self, watch: Option<Watch>) {
        self.0.push_back(watch);
    }

    /// The oldest owed reply has come: checked against its watch.
    fn came(&mut self, reply: &Value) {
        if let Some(Some(w)) = self.0.pop_front() {
            if w.lost(reply) {
                crate::stats::lost_late(w.what, &w.name);
            }
        }
    }
}

/// A serial number for a new connection (`Plain::serial`): never one given before.
fn next_serial() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
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
    let n = unsafe { libc::recv(fd, (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    n == 0
}

/// What listening brought (`Plain::next_push`).
pub enum Heard {
    /// A message on one of the connection's channels.
    Message(Vec<u8>),
    /// Nothing within the time given.
    Nothing,
    /// The server dropped a subscription (a cluster slot moved away).
    Unsubscribed,
}

/// Messages kept for a waiter at most: more are stale ones nobody reads.
const MAX_PUSHES: usize = 16;

/// Channels one connection stays subscribed to at most (sharded ones are per slot).
const MAX_CHANNELS: usize = 16;

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over TCP: rustls's session, read and written through its socket.
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tls(s) => s.sock.set_read_timeout(d),
        }
    }

    fn read_timeout(&self) -> io::Result<Option<Duration>> {
        match self {
            Stream::Tcp(s) => s.read_timeout(),
            Stream::Unix(s) => s.read_timeout(),
            Stream::Tls(s) => s.sock.read_timeout(),
        }
    }

    fn set_write_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(d),
            Stream::Unix(s) => s.set_write_timeout(d),
            Stream::Tls(s) => s.sock.set_write_timeout(d),
        }
    }

    fn set_nonblocking(&self, yes: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(yes),
            Stream::Unix(s) => s.set_nonblocking(yes),
            Stream::Tls(s) => s.sock.set_nonblocking(yes),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
            // rustls's write keeps what the socket did not take: flush sends it all.
            Stream::Tls(s) => s.write_all(buf).and_then(|()| s.flush()),
        }
    }
}

/// A TLS session with `host` over the connected socket `sock`: SNI and the
/// certificate's name are the host's (an IP address is checked as one).
fn tls_session(host: &str, insecure: bool, tls: &TlsFiles, sock: TcpStream) -> RedisResult<rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
    let invalid = |why: String| RedisError::from((ErrorKind::InvalidClientConfig, "TLS", why));
    let config = tls.client_config(insecure).map_err(invalid)?;
    // A bracketed IPv6 host from a DSN is named without its brackets.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = rustls::pki_types::ServerName::try_from(bare.to_string()).map_err(|_| invalid(format!("\"{host}\" is not a host name TLS can check")))?;
    let conn = rustls::ClientConnection::new(config, name).map_err(|e| invalid(format!("TLS settings: {e}")))?;
    Ok(rustls::StreamOwned::new(conn, sock))
}

/// The reply buffer's first size: a lock cycle's replies are a few bytes.
const FIRST_BUFFER: usize = 4096;

/// Longest bulk string any reply may have: Redis's default `proto-max-bulk-len`. A
/// connection's own bound is `max_reply` (the setting), at most this.
const MAX_BULK: i64 = crate::config::MAX_REPLY_LIMIT as i64;

/// Deepest nesting of aggregates accepted in a reply (no reply of ours nests more
/// than two deep); deeper is a protocol error, before any recursion goes further.
const MAX_DEPTH: usize = 64;

/// Longest line (a header, a simple string or error) waited for: one still without
/// its CRLF past this is refused. Redis's own bound on an inline command.
const MAX_LINE: usize = 64 * 1024;

/// Most values one reply may hold, all levels counted, and one aggregate may
/// declare: each costs a `Value` (56 bytes) however few bytes it came in.
const MAX_VALUES: usize = 1 << 20;


impl Plain {
    /// Connects to `info` (TCP, TLS with `tls`'s files, or a Unix socket) within
    /// `timeout`, then authenticates and selects its database as redis-rs does
    /// (`AUTH`, `SELECT`). The TLS handshake is made on the first exchange.
    /// `max_reply` bounds what one reply may make it hold (see `DEFAULT_MAX_REPLY`).
    pub fn connect(info: &ConnectionInfo, tls: &TlsFiles, timeout: Duration, max_reply: usize) -> RedisResult<Plain> {
        let started = Instant::now();
        let stream = match info.addr() {
            ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
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
                match info.addr() {
                    ConnectionAddr::TcpTls { insecure, .. } => Stream::Tls(Box::new(tls_session(host, *insecure, tls, s)?)),
                    _ => Stream::Tcp(s),
                }
            }
            ConnectionAddr::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
            // Any address kind redis-rs adds needs redis-rs's connection.
            _ => return Err(RedisError::from((ErrorKind::InvalidClientConfig, "plain connection", "not a plain address".to_string()))),
        };
        let left = timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
        stream.set_read_timeout(Some(left))?;
        stream.set_write_timeout(Some(left))?;
        let settings = info.redis_settings();
        let mut conn = Plain {
            stream,
            buf: vec![0; FIRST_BUFFER],
            start: 0,
            end: 0,
            db: settings.db(),
            broken: false,
            pending: Owed::default(),
            resp3: None,
            channels: Vec::new(),
            pushes: VecDeque::new(),
            max_reply: max_reply.clamp(FIRST_BUFFER, MAX_BULK as usize),
            wake_id: None,
            wake_generation: 0,
            serial: next_serial(),
        };
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

    /// Whether rustls holds decrypted bytes that were not read yet: `poll(2)` on `fd`
    /// would not see them, so a caller that polls reads this connection first.
    pub fn buffered(&mut self) -> bool {
        match &mut self.stream {
            Stream::Tls(s) => s.conn.process_new_packets().is_ok_and(|io| io.plaintext_bytes_to_read() > 0),
            _ => false,
        }
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

    /// Reads one whole reply; an error reply is a `Value::ServerError`, as redis-rs
    /// gives it. Replies owed to unawaited commands come first and are put aside;
    /// push messages are kept for `next_push`.
    #[inline(always)]
    fn read_reply(&mut self) -> RedisResult<Value> {
        // The path of every command, written out: no frame passed through, the value
        // matched where it was parsed. A reply in pieces, and a push message, go on
        // in `read_reply_rest`.
        loop {
            match parse(&self.buf[self.start..self.end], 0) {
                Ok(Some((value, used))) => {
                    self.consumed(used);
                    match value {
                        value @ Value::Push { .. } => return self.read_reply_rest(Ok(value)),
                        value if self.pending.any() => self.pending.came(&value),
                        value => return Ok(value),
                    }
                }
                // Nothing read yet: the path of every command, one read away.
                Ok(None) if self.start == self.end => self.fill().map_err(|e| self.broke(e))?,
                Ok(None) => {
                    let value = self.complete();
                    return self.read_reply_rest(value);
                }
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// Which connection this is: no two connections of the process share a serial,
    /// so a hold that remembers it can tell later whether it is still the same one.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// Whether the server has closed its side, or the socket failed, as far as the
    /// kernel knows now (`peer_closed`: a `poll` that does not wait; on Linux a reply
    /// not read yet does not hide a close). A server that restarted closed every
    /// connection it had.
    pub fn hung_up(&self) -> bool {
        if self.broken {
            return true;
        }
        peer_closed(self.fd())
    }

    /// The socket, for a caller that waits on several connections at once (`poll(2)`).
    pub fn fd(&self) -> RawFd {
        match &self.stream {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.sock.as_raw_fd(),
        }
    }

    /// The reply awaited, if all of it has come; `None` when it has not yet. Replies
    /// owed to earlier commands are put aside first, push messages kept, as
    /// `read_reply` does. With `read`, the socket is read once first: only when
    /// `poll(2)` said it is readable, so that this never blocks.
    pub fn try_reply(&mut self, mut read: bool) -> RedisResult<Option<Value>> {
        loop {
            match parse(&self.buf[self.start..self.end], 0) {
                Ok(Some((value, used))) => {
                    self.consumed(used);
                    match value {
                        Value::Push { data, .. } => self.keep(data),
                        value if self.pending.any() => self.pending.came(&value),
                        value => return Ok(Some(value)),
                    }
                }
                Ok(None) if read => {
                    read = false;
                    self.fill_ready().map_err(|e| self.broke(e))?;
                }
                Ok(None) => return Ok(None),
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// `read_reply` past its fast path, from the frame `next` it read: push messages
    /// are kept, for no longer than the read timeout (`pushed`), and owed replies
    /// put aside, until the reply.
    #[cold]
    #[inline(never)]
    fn read_reply_rest(&mut self, mut next: RedisResult<Value>) -> RedisResult<Value> {
        let mut pushes = None;
        loop {
            match next? {
                Value::Push { data, .. } => {
                    self.keep(data);
                    self.pushed(&mut pushes)?;
                }
                value if self.pending.any() => self.pending.came(&value),
                value => return Ok(value),
            }
            next = self.next_value();
        }
    }

    /// Reads the next reply or push message, blocking as long as the read timeout lets it.
    fn next_value(&mut self) -> RedisResult<Value> {
        loop {
            match parse(&self.buf[self.start..self.end], 0) {
                Ok(Some((value, used))) => {
                    self.consumed(used);
                    return Ok(value);
                }
                Ok(None) if self.start == self.end => self.fill().map_err(|e| self.broke(e))?,
                Ok(None) => return self.complete(),
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// Reads the rest of a frame that has begun in the buffer, and parses it. Each
    /// read is checked only for what it brought (`Scan`), and the frame must be whole
    /// within the read timeout in all: a server that trickles it, or stops half-way,
    /// holds a read no longer than one that sends nothing.
    #[cold]
    #[inline(never)]
    fn complete(&mut self) -> RedisResult<Value> {
        let budget = self.stream.read_timeout().map_err(|e| self.broke(e))?;
        let started = Instant::now();
        let mut scan = Scan::new(self.max_reply);
        let whole: RedisResult<()> = loop {
            match scan.whole(&self.buf[self.start..self.end]) {
                Ok(true) => break Ok(()),
                Ok(false) => {}
                Err(e) => break Err(e),
            }
            if let Some(budget) = budget {
                let left = budget.saturating_sub(started.elapsed());
                if left.is_zero() {
                    break Err(io::Error::new(io::ErrorKind::TimedOut, "the reply did not end within read_timeout").into());
                }
                if let Err(e) = self.stream.set_read_timeout(Some(left)) {
                    break Err(e.into());
                }
            }
            if let Err(e) = self.fill() {
                break Err(e.into());
            }
        };
        let reset = match budget {
            Some(_) => self.stream.set_read_timeout(budget).map_err(RedisError::from),
            None => Ok(()),
        };
        let parsed = whole.and(reset).and_then(|()| match parse(&self.buf[self.start..self.end], 0) {
            Ok(Some(frame)) => Ok(frame),
            Ok(None) => Err(refused("a whole reply, which the scan saw and the parse did not".to_string())),
            Err(e) => Err(e),
        });
        match parsed {
            Ok((value, used)) => {
                self.consumed(used);
                Ok(value)
            }
            Err(e) => {
                self.broken = true;
                Err(e)
            }
        }
    }

    /// Another push message came while a reply is awaited. They are kept while
    /// they come, but not for longer than the read timeout from the first: a
    /// server could send them without end and never the reply.
    #[cold]
    fn pushed(&mut self, since: &mut Option<(Instant, Option<Duration>)>) -> RedisResult<()> {
        let stream = &self.stream;
        let (first, budget) = *since.get_or_insert_with(|| (Instant::now(), stream.read_timeout().ok().flatten()));
        if budget.is_some_and(|b| first.elapsed() >= b) {
            self.broken = true;
            return Err(io::Error::new(io::ErrorKind::TimedOut, "push messages, and no reply, for read_timeout").into());
        }
        Ok(())
    }

    /// `used` bytes of the buffer are parsed.
    #[inline]
    fn consumed(&mut self, used: usize) {
        self.start += used;
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
    }

    /// Reads the next reply or push message, blocking as long as the read timeout lets it.
    fn read_frame(&mut self) -> RedisResult<Frame> {
        Ok(Frame::of(self.next_value()?))
    }

    /// The next whole frame already read, if there is one. `scan` is how far a
    /// frame still arriving was checked: the caller keeps it from one read to the next.
    fn parse_next(&mut self, scan: &mut Scan) -> RedisResult<Option<Frame>> {
        let data = &self.buf[self.start..self.end];
        let parsed = match scan.whole(data) {
            Ok(false) => return Ok(None),
            Ok(true) => parse(data, 0),
            Err(e) => Err(e),
        };
        match parsed {
            Ok(Some((value, used))) => {
                self.consumed(used);
                *scan = Scan::new(self.max_reply);
                Ok(Some(Frame::of(value)))
            }
            Ok(None) => {
                self.broken = true;
                Err(refused("a whole reply, which the scan saw and the parse did not".to_string()))
            }
            Err(e) => {
                self.broken = true;
                Err(e)
            }
        }
    }

    /// Largest the reply buffer grows: one bulk string of `max_reply` bytes and its header.
    fn max_buffer(&self) -> usize {
        self.max_reply + MAX_LINE
    }

    /// Reads more into the buffer: into the room left at its end, after moving
    /// unparsed bytes to its start or growing it when there is none.
    #[inline(always)]
    fn fill(&mut self) -> io::Result<()> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            } else if self.buf.len() < self.max_buffer() {
                self.buf.resize((self.buf.len() * 2).min(self.max_buffer()), 0);
            } else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a reply longer than max_reply ({} bytes)", self.max_reply),
                ));
            }
        }
        match self.stream.read(&mut self.buf[self.end..]) {
            Ok(0) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection")),
            Ok(n) => {
                self.end += n;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// One read of what has come, after `poll(2)` said the socket is readable. TLS
    /// reads without blocking then: a readable socket may hold only part of a record,
    /// or a record with nothing for us (a session ticket), and a blocking read would
    /// wait on past it for the rest.
    fn fill_ready(&mut self) -> io::Result<()> {
        if !matches!(self.stream, Stream::Tls(_)) {
            return self.fill();
        }
        self.stream.set_nonblocking(true)?;
        let read = self.fill();
        self.stream.set_nonblocking(false)?;
        match read {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            other => other,
        }
    }

    fn broke(&mut self, e: io::Error) -> RedisError {
        self.broken = true;
        e.into()
    }

    /// A push message: a message on one of its channels is kept for the waiter (the
    /// oldest dropped beyond `MAX_PUSHES`); an unsubscription forgets the channel.
    fn keep(&mut self, push: Vec<Value>) {
        let text = |v: Option<&Value>| match v {
            Some(Value::BulkString(b)) => Some(b.clone()),
            _ => None,
        };
        let kind = text(push.first()).unwrap_or_default();
        match &kind[..] {
            b"message" | b"smessage" => {
                if let (Some(channel), Some(payload)) = (text(push.get(1)), text(push.get(2))) {
                    if self.pushes.len() >= MAX_PUSHES {
                        self.pushes.pop_front();
                    }
                    self.pushes.push_back((channel, payload));
                }
            }
            b"unsubscribe" | b"sunsubscribe" => {
                if let Some(channel) = text(push.get(1)) {
                    self.channels.retain(|(c, _)| c.as_bytes() != channel);
                }
            }
            _ => {}
        }
    }

    /// Reads, without blocking, the replies owed to unawaited commands that have come.
    fn settle_arrived(&mut self) {
        if self.pending.any() {
            self.read_arrived();
        }
    }

    /// Reads, without blocking, what has come: replies owed to unawaited commands,
    /// and push messages (kept).
    fn read_arrived(&mut self) {
        if self.broken || self.stream.set_nonblocking(true).is_err() {
            return;
        }
        let mut scan = Scan::new(self.max_reply);
        loop {
            match self.parse_next(&mut scan) {
                Ok(Some(Frame::Push(push))) => self.keep(push),
                Ok(Some(Frame::Reply(v))) if self.pending.any() => self.pending.came(&v),
                Ok(Some(Frame::Reply(_))) => {
                    // Nothing was asked: the connection is out of step.
                    self.broken = true;
                    break;
                }
                Ok(None) => match self.fill() {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        self.broke(e);
                        break;
                    }
                },
                Err(_) => break,
            }
        }
        if self.stream.set_nonblocking(false).is_err() {
            self.broken = true;
        }
    }

    /// Whether the connection speaks RESP3, switching it on first use (`HELLO 3`, one
    /// round trip once in the connection's life). A server that refuses (Redis before
    /// 6, a proxy) keeps RESP2.
    pub fn resp3(&mut self) -> RedisResult<bool> {
        if let Some(yes) = self.resp3 {
            return Ok(yes);
        }
        let yes = match self.request(&[b"HELLO", b"3"]) {
            Ok(_) => true,
            Err(e) if matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension) => false,
            Err(e) => return Err(e),
        };
        self.resp3 = Some(yes);
        Ok(yes)
    }

    /// Whether the connection listens on `channel`.
    pub fn listens(&self, channel: &str) -> bool {
        self.channels.iter().any(|(c, _)| c == channel)
    }

    /// Subscribes the connection (in RESP3) to `channel`, with `SSUBSCRIBE` when
    /// `sharded`. `Ok(false)`: the server refused (an ACL without the channel or the
    /// command, a server without sharded pub/sub). Beyond `MAX_CHANNELS` the oldest
    /// subscription is dropped in the same write.
    pub fn subscribe(&mut self, channel: &str, sharded: bool) -> RedisResult<bool> {
        if self.listens(channel) {
            return Ok(true);
        }
        let verb: &[u8] = if sharded { b"SSUBSCRIBE" } else { b"SUBSCRIBE" };
        let mut buf = Vec::new();
        resp::encode(&mut buf, 2, [verb, channel.as_bytes()]);
        let mut dropped = None;
        if self.channels.len() >= MAX_CHANNELS {
            let (old, old_sharded) = self.channels.remove(0);
            let verb: &[u8] = if old_sharded { b"SUNSUBSCRIBE" } else { b"UNSUBSCRIBE" };
            let mut more = Vec::new();
            resp::encode(&mut more, 2, [verb, old.as_bytes()]);
            buf.extend_from_slice(&more);
            dropped = Some(old);
        }
        self.send(&buf)?;
        // The confirmations are push messages; a refusal is an error reply.
        let want: &[u8] = if sharded { b"ssubscribe" } else { b"subscribe" };
        let mut subscribed = None;
        let mut waiting_unsubscribe = dropped.is_some();
        let mut pushes = None;
        while subscribed.is_none() || waiting_unsubscribe {
            match self.read_frame()? {
                Frame::Reply(v) if self.pending.any() => self.pending.came(&v),
                Frame::Reply(v) => {
                    if subscribed.is_none() {
                        subscribed = Some(false);
                        if v.extract_error().is_ok() {
                            self.broken = true;
                            return Err(protocol("a subscription", b"a reply"));
                        }
                    } else {
                        // The unsubscription's refusal: nothing more comes for it.
                        waiting_unsubscribe = false;
                    }
                }
                Frame::Push(push) => {
                    let kind = match push.first() {
                        Some(Value::BulkString(k)) => k.clone(),
                        _ => Vec::new(),
                    };
                    let names = |c: &str| matches!(push.get(1), Some(Value::BulkString(n)) if n == c.as_bytes());
                    if kind == want && names(channel) {
                        subscribed = Some(true);
                    } else if dropped.as_deref().is_some_and(|d| names(d) && kind.ends_with(b"unsubscribe")) {
                        waiting_unsubscribe = false;
                    } else {
                        self.keep(push);
                        self.pushed(&mut pushes)?;
                    }
                }
            }
        }
        let yes = subscribed == Some(true);
        if yes {
            self.channels.push((channel.to_string(), sharded));
        }
        Ok(yes)
    }

    /// Unsubscribes the connection from `channel` without waiting: in RESP3 the
    /// confirmation is a push message, read and dropped whenever it comes. Commands
    /// sent after it run after it, so no message on `channel` is published to this
    /// connection once they have run.
    pub fn unsubscribe(&mut self, channel: &str) -> RedisResult<()> {
        let Some(at) = self.channels.iter().position(|(c, _)| c == channel) else { return Ok(()) };
        let (_, sharded) = self.channels.remove(at);
        self.pushes.retain(|(c, _)| c != channel.as_bytes());
        let verb: &[u8] = if sharded { b"SUNSUBSCRIBE" } else { b"UNSUBSCRIBE" };
        let mut buf = Vec::new();
        resp::encode(&mut buf, 2, [verb, channel.as_bytes()]);
        self.send(&buf)
    }

    /// Waits up to `timeout` for a message on `channel`; messages on other channels
    /// are dropped (they were for waits that have ended). An error means the
    /// connection broke.
    pub fn next_push(&mut self, channel: &str, timeout: Duration) -> RedisResult<Heard> {
        if let Some(msg) = self.kept_for(channel) {
            return Ok(Heard::Message(msg));
        }
        let until = Instant::now() + timeout;
        let mut scan = Scan::new(self.max_reply);
        loop {
            if !self.listens(channel) {
                return Ok(Heard::Unsubscribed);
            }
            let read = match self.parse_next(&mut scan)? {
                Some(Frame::Push(push)) => {
                    self.keep(push);
                    if let Some(msg) = self.kept_for(channel) {
                        return Ok(Heard::Message(msg));
                    }
                    true
                }
                Some(Frame::Reply(v)) if self.pending.any() => {
                    self.pending.came(&v);
                    true
                }
                Some(Frame::Reply(_)) => {
                    self.broken = true;
                    return Err(protocol("a push message", b"a reply nobody asked for"));
                }
                None => false,
            };
            // Checked after every frame too: pushes that are no message could come without end.
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Heard::Nothing);
            }
            if read {
                continue;
            }
            self.stream.set_read_timeout(Some(left)).map_err(|e| self.broke(e))?;
            let filled = self.fill();
            match filled {
                Ok(()) => {}
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => return Ok(Heard::Nothing),
                Err(e) => return Err(self.broke(e)),
            }
        }
    }

    /// Forgets the messages that have come so far, read or not (a new wait starts:
    /// they were for earlier ones).
    pub fn forget_pushes(&mut self) {
        self.read_arrived();
        self.pushes.clear();
    }

    /// The oldest kept message on `channel`, dropping those before it on other channels.
    fn kept_for(&mut self, channel: &str) -> Option<Vec<u8>> {
        while let Some((c, msg)) = self.pushes.pop_front() {
            if c == channel.as_bytes() {
                return Some(msg);
            }
        }
        None
    }
}

impl Drop for Plain {
    /// Reads the replies still owed before the socket closes: closing with a reply
    /// unread resets the connection, and the server might drop a command it has not
    /// run yet (an unawaited release).
    fn drop(&mut self) {
        let mut pushes = None;
        while self.pending.any() && !self.broken {
            match self.read_frame() {
                Ok(Frame::Reply(v)) => self.pending.came(&v),
                Ok(Frame::Push(_)) => {
                    if self.pushed(&mut pushes).is_err() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
    }
}

/// One thing read from a connection.
enum Frame {
    /// The reply to a command.
    Reply(Value),
    /// A push message (RESP3): its parts.
    Push(Vec<Value>),
}

impl Frame {
    fn of(value: Value) -> Frame {
        match value {
            Value::Push { data, .. } => Frame::Push(data),
            value => Frame::Reply(value),
        }
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

/// Parses one reply (or RESP3 push message) at the start of `data`: the value and
/// how many bytes it took, or `None` when `data` does not hold all of it yet. RESP3's
/// own types are read into the shapes RESP2 gives the same reply (`parse_resp3`).
fn parse(data: &[u8], depth: usize) -> RedisResult<Option<(Value, usize)>> {
    let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
    let (kind, line) = match data.split_first() {
        // A line that is only CRLF has no type: `_` refuses it.
        Some((&kind, _)) => (kind, data.get(1..eol).unwrap_or_default()),
        None => return Ok(None),
    };
    let after = eol + 2;
    let number = || -> RedisResult<i64> { number(line) };
    Ok(Some(match kind {
        b'+' => {
            let text = String::from_utf8_lossy(line);
            (if text == "OK" { Value::Okay } else { Value::SimpleString(text.into_owned()) }, after)
        }
        // redis-rs's parser reads the error line, so that its kind is redis-rs's.
        b'-' => (redis::parse_redis_value(&data[..after])?, after),
        b':' => (Value::Int(number()?), after),
        b'$' => match blob(data, line, after)? {
            None => return Ok(None),
            Some((bytes, end)) => (bytes.map_or(Value::Nil, |b| Value::BulkString(b.to_vec())), end),
        },
        b'*' => match number()? {
            -1 => (Value::Nil, after),
            n => match items(data, after, declared(n, 1, depth, line)?, depth)? {
                None => return Ok(None),
                Some((items, at)) => (Value::Array(items), at),
            },
        },
        _ => return parse_resp3(data, kind, line, after, depth),
    }))
}

/// RESP3's own types, after `parse` read the header line: a map or a set as a flat
/// array, a double, a big number or a verbatim string as a bulk string, null as nil,
/// and a boolean as Lua's conversion to RESP2 gives it (true is 1, false is nil). An
/// attribute is skipped; a push message is a `Value::Push`.
#[cold]
fn parse_resp3(data: &[u8], kind: u8, line: &[u8], after: usize, depth: usize) -> RedisResult<Option<(Value, usize)>> {
    // `n` values (`n` pairs when `per` is 2) after the header.
    let aggregate = |per: usize| -> RedisResult<Option<(Vec<Value>, usize)>> { items(data, after, declared(number(line)?, per, depth, line)?, depth) };
    Ok(Some(match kind {
        b'~' if line == b"-1" => (Value::Nil, after),
        b'~' | b'%' => match aggregate(if kind == b'%' { 2 } else { 1 })? {
            None => return Ok(None),
            Some((items, at)) => (Value::Array(items), at),
        },
        b'>' => match aggregate(1)? {
            None => return Ok(None),
            Some((data, at)) => (Value::Push { kind: redis::PushKind::Other(String::new()), data }, at),
        },
        b'|' => match aggregate(2)? {
            None => return Ok(None),
            Some((_, at)) => match parse(&data[at..], depth + 1)? {
                None => return Ok(None),
                Some((value, used)) => (value, at + used),
            },
        },
        b'_' => (Value::Nil, after),
        b'#' => match line {
            b"t" => (Value::Int(1), after),
            b"f" => (Value::Nil, after),
            _ => return Err(protocol("a boolean", line)),
        },
        b',' | b'(' => (Value::BulkString(line.to_vec()), after),
        b'=' => match blob(data, line, after)? {
            None => return Ok(None),
            // "txt:" or "mkd:" first: the format.
            Some((bytes, end)) => (Value::BulkString(bytes.unwrap_or_default().get(4..).unwrap_or_default().to_vec()), end),
        },
        b'!' => match blob(data, line, after)? {
            None => return Ok(None),
            Some((bytes, end)) => {
                let mut as_line = vec![b'-'];
                as_line.extend(bytes.unwrap_or_default().iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
                as_line.extend_from_slice(b"\r\n");
                (redis::parse_redis_value(&as_line)?, end)
            }
        },
        _ => return Err(protocol("a RESP reply", &data[..(after - 2).min(16)])),
    }))
}

/// The number on a header line.
fn number(line: &[u8]) -> RedisResult<i64> {
    // As `str::parse::<i64>` reads it, without the UTF-8 check and its generality: a
    // fencing token is 16 digits, on the path of every fenced acquisition.
    let (negative, digits) = match line {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, line),
    };
    let mut n: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(protocol("a number", line));
        }
        n = n.checked_mul(10).and_then(|n| n.checked_add(u64::from(d))).ok_or_else(|| protocol("a number", line))?;
    }
    if digits.is_empty() {
        return Err(protocol("a number", line));
    }
    match (negative, i64::try_from(n)) {
        (false, Ok(v)) => Ok(v),
        (true, Ok(v)) => Ok(-v),
        (true, Err(_)) if n == 1 << 63 => Ok(i64::MIN),
        _ => Err(protocol("a number", line)),
    }
}

/// A length-prefixed string whose header line `line` ends at `after`: its bytes
/// (`None`: a null) and where it ends.
#[inline(always)]
fn blob<'a>(data: &'a [u8], line: &[u8], after: usize) -> RedisResult<Option<(Option<&'a [u8]>, usize)>> {
    match number(line)? {
        -1 => Ok(Some((None, after))),
        // Redis's own bound (proto-max-bulk-len) caps what a reply may make us hold.
        n if !(0..=MAX_BULK).contains(&n) => Err(protocol("a bulk length", line)),
        n => {
            let end = after.checked_add(n as usize).and_then(|e| e.checked_add(2)).ok_or_else(|| protocol("a bulk length", line))?;
            if data.len() < end {
                return Ok(None);
            }
            if &data[end - 2..end] != b"\r\n" {
                return Err(protocol("the end of a bulk string", &data[end - 2..end]));
            }
            Ok(Some((Some(&data[after..end - 2]), end)))
        }
    }
}

/// How many values an aggregate of `n` (`n` pairs when `per` is 2) at `depth` holds,
/// when that is within the limits.
#[inline]
fn declared(n: i64, per: usize, depth: usize, line: &[u8]) -> RedisResult<usize> {
    if !(0..=MAX_VALUES as i64).contains(&n) {
        return Err(protocol(&format!("an aggregate length of 0 to {MAX_VALUES} values"), line));
    }
    if depth >= MAX_DEPTH {
        return Err(refused(format!("aggregates nested at most {MAX_DEPTH} deep, got deeper")));
    }
    Ok(n as usize * per)
}

/// `n` values from `at`, and where they end.
fn items(data: &[u8], mut at: usize, n: usize, depth: usize) -> RedisResult<Option<(Vec<Value>, usize)>> {
    // Room for what the bytes at hand can hold (a value takes 3 at least), never
    // for what a length the server declared promises.
    let mut items = Vec::with_capacity(n.min((data.len() - at) / 3));
    for _ in 0..n {
        match parse(&data[at..], depth + 1)? {
            Some((item, used)) => {
                items.push(item);
                at += used;
            }
            None => return Ok(None),
        }
    }
    Ok(Some((items, at)))
}

/// A reply that breaks the protocol: what was expected, and (its first bytes) what came.
fn protocol(what: &str, got: &[u8]) -> RedisError {
    let shown = String::from_utf8_lossy(&got[..got.len().min(32)]);
    let more = if got.len() > 32 { "…" } else { "" };
    refused(format!("expected {what}, got {shown:?}{more}"))
}

fn refused(why: String) -> RedisError {
    RedisError::from((ErrorKind::Parse, "protocol error", why))
}

/// How far a frame still arriving has been checked, so that each read is checked
/// only for what it brought: a reply that comes in many pieces costs one pass over
/// it, not one per piece, and allocates nothing. It finds where values end and
/// holds them to the limits (`MAX_LINE`, `MAX_BULK`, `MAX_VALUES`, `MAX_DEPTH`, the
/// types and lengths `parse` takes); `parse` reads the frame once it is whole.
struct Scan {
    /// Where the next header starts, from the frame's first byte.
    at: usize,
    /// Values begun so far, every level counted.
    values: usize,
    /// How many values each open aggregate still owes, outermost first; `owed[0]`
    /// is the frame itself (one value).
    owed: [usize; MAX_DEPTH + 1],
    /// How many of `owed` are open.
    open: usize,
    /// How far past `at` the search for the end of a line got (a line may come in
    /// many reads too).
    searched: usize,
    /// The longest bulk string accepted: the connection's `max_reply`.
    max_bulk: i64,
}

impl Scan {
    fn new(max_bulk: usize) -> Scan {
        let mut owed = [0; MAX_DEPTH + 1];
        owed[0] = 1;
        Scan { at: 0, values: 0, owed, open: 1, searched: 0, max_bulk: i64::try_from(max_bulk).unwrap_or(MAX_BULK).min(MAX_BULK) }
    }

    /// Whether `data` (the frame's bytes so far, from its first) holds the whole frame.
    fn whole(&mut self, data: &[u8]) -> RedisResult<bool> {
        while self.open > 0 {
            let rest = &data[self.at..];
            let window = &rest[..rest.len().min(MAX_LINE + 2)];
            // From the last byte searched: it may be the CR of a CRLF split between reads.
            let from = self.searched.saturating_sub(1).min(window.len());
            let Some(eol) = window[from..].windows(2).position(|w| w == b"\r\n").map(|i| from + i) else {
                if window.len() == MAX_LINE + 2 {
                    return Err(refused(format!("a line of at most {MAX_LINE} bytes, got a longer one")));
                }
                self.searched = window.len();
                return Ok(false);
            };
            let (kind, line) = (rest[0], rest.get(1..eol).unwrap_or_default());
            let mut end = eol + 2;
            let mut opens = 0;
            match kind {
                b'+' | b'-' | b':' | b'_' | b'#' | b',' | b'(' => {}
                b'$' | b'=' | b'!' => match number(line)? {
                    -1 => {}
                    n if !(0..=self.max_bulk).contains(&n) => {
                        return Err(protocol(&format!("a bulk length of at most max_reply ({} bytes)", self.max_bulk), line))
                    }
                    n => {
                        end += n as usize + 2;
                        if rest.len() < end {
                            return Ok(false);
                        }
                    }
                },
                b'*' | b'~' | b'%' | b'>' | b'|' => {
                    let n = number(line)?;
                    let null = (kind == b'*' && n == -1) || (kind == b'~' && line == b"-1");
                    if !null {
                        opens = declared(n, if matches!(kind, b'%' | b'|') { 2 } else { 1 }, self.open - 1, line)?;
                        // An attribute is followed by the value it annotates, at its depth.
                        opens += usize::from(kind == b'|');
                    }
                }
                _ => return Err(protocol("a RESP reply", &rest[..eol])),
            }
            self.at += end;
            self.searched = 0;
            self.values += 1;
            if self.values > MAX_VALUES {
                return Err(refused(format!("a reply of at most {MAX_VALUES} values, got more")));
            }
            if opens > 0 {
                self.owed[self.open] = opens;
                self.open += 1;
                continue;
            }
            // A value ended: so does each aggregate it was the last of.
            while self.open > 0 {
                self.owed[self.open - 1] -= 1;
                if self.owed[self.open - 1] > 0 {
                    break;
                }
                self.open -= 1;
            }
        }
        Ok(true)
    }
}

/// The generator the socket-level property test (`tests/hostile_replies.rs`) uses too.
#[cfg(test)]
#[path = "../../tests/support/resp_gen.rs"]
mod resp_gen;

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
    fn resp3_replies_read_in_resp2_shapes() {
        for (resp3, resp2) in [
            (&b"_\r\n"[..], &b"$-1\r\n"[..]),
            (b"#t\r\n", b":1\r\n"),
            (b"#f\r\n", b"$-1\r\n"),
            (b",1.5\r\n", b"$3\r\n1.5\r\n"),
            (b"(12345678901234567890\r\n", b"$20\r\n12345678901234567890\r\n"),
            (b"=7\r\ntxt:abc\r\n", b"$3\r\nabc\r\n"),
            (b"%1\r\n$1\r\nk\r\n:2\r\n", b"*2\r\n$1\r\nk\r\n:2\r\n"),
            (b"~2\r\n:1\r\n:2\r\n", b"*2\r\n:1\r\n:2\r\n"),
            (b"|1\r\n+ttl\r\n:3\r\n:7\r\n", b":7\r\n"),
        ] {
            assert_eq!(whole(resp3), whole(resp2), "{}", String::from_utf8_lossy(resp3));
        }
        let err = whole(b"!21\r\nNOPERM no\r\npermission\r\n").extract_error().unwrap_err();
        assert_eq!(err.code(), Some("NOPERM"));
        match whole(b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\ng:x\r\n") {
            Value::Push { data, .. } => assert_eq!(data.len(), 3),
            other => panic!("not a push: {other:?}"),
        }
        for cut in 1..b"%1\r\n$1\r\nk\r\n:2\r\n".len() {
            assert!(parse(&b"%1\r\n$1\r\nk\r\n:2\r\n"[..cut], 0).unwrap().is_none(), "cut at {cut}");
        }
        assert!(parse(b"#x\r\n", 0).is_err());
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
        assert!(parse(b"\r\n", 0).is_err());
        assert!(parse(b"*1048577\r\n", 0).is_err());
    }

    /// Feeds `data` to a fresh `Scan` in pieces of random sizes, as reads would bring it.
    fn scanned(data: &[u8], rng: &mut rand::rngs::StdRng) -> (RedisResult<bool>, usize) {
        use rand::Rng;
        let mut scan = Scan::new(MAX_BULK as usize);
        let mut have = 0;
        loop {
            have = (have + rng.random_range(1..64)).min(data.len());
            match scan.whole(&data[..have]) {
                Ok(false) if have < data.len() => continue,
                other => return (other, scan.at),
            }
        }
    }

    /// The scan that waits for a frame and the parse that reads it agree on every
    /// generated input: where a frame ends, and that a prefix of one is not whole.
    /// (`tests/hostile_replies.rs` sends the same inputs over sockets.)
    #[test]
    fn the_scan_and_the_parse_agree_on_generated_replies() {
        use rand::SeedableRng;
        let cases: u64 = std::env::var("REDIS_LOCK_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
        let seed = 0x5eed_5ca7;
        for i in 0..cases {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let case = resp_gen::case(&mut rng);
            let data = &case.bytes;
            let what = || format!("seed {seed:#x}, case {i}, {}: {:?}", case.how, String::from_utf8_lossy(&data[..data.len().min(100)]));
            let parsed = std::panic::catch_unwind(|| parse(data, 0)).unwrap_or_else(|_| panic!("parse panicked: {}", what()));
            let (whole, at) = scanned(data, &mut rng);
            let (fresh, fresh_at) = {
                let mut scan = Scan::new(MAX_BULK as usize);
                (scan.whole(data), scan.at)
            };
            assert_eq!(whole.as_ref().ok(), fresh.as_ref().ok(), "a scan in pieces and one in one go differ: {}", what());
            match (&parsed, &whole) {
                (Ok(Some((_, used))), Ok(true)) => assert_eq!((*used, at, fresh_at), (at, at, at), "{}", what()),
                (Ok(Some(_)), other) => panic!("parsed whole, scanned {other:?}: {}", what()),
                (Ok(None), Ok(true)) => panic!("scanned whole, parse waits for more: {}", what()),
                _ => {}
            }
            if case.valid {
                assert!(matches!(parsed, Ok(Some((_, used))) if used == data.len()), "{:?}: {}", parsed.err(), what());
            }
            if case.prefix {
                assert!(matches!(parsed, Ok(None)), "a prefix parsed as {parsed:?}: {}", what());
                assert!(matches!(whole, Ok(false)), "a prefix scanned as {whole:?}: {}", what());
            }
        }
    }

    #[test]
    fn the_scan_holds_replies_to_the_limits() {
        let refused = |data: &[u8]| Scan::new(MAX_BULK as usize).whole(data).is_err();
        assert!(refused(&[b'+'; MAX_LINE + 2]));
        assert!(!refused(&[b'+'; MAX_LINE + 1]));
        assert!(refused(format!("${}\r\n", MAX_BULK + 1).as_bytes()));
        assert!(refused(format!("*{}\r\n", MAX_VALUES + 1).as_bytes()));
        assert!(refused(format!("%{}\r\n", MAX_VALUES + 1).as_bytes()));
        assert!(refused("*1\r\n".repeat(MAX_DEPTH + 1).as_bytes()));
        assert!(!refused("*1\r\n".repeat(MAX_DEPTH).as_bytes()));
        let nested = format!("*2\r\n*{MAX_VALUES}\r\n") + &":1\r\n".repeat(MAX_VALUES);
        assert!(refused(nested.as_bytes()));
        for bad in [&b"*-2\r\n"[..], b"$-2\r\n", b"~-01\r\n", b">-1\r\n", b"*x\r\n", b"?\r\n", b"\r\n"] {
            assert!(refused(bad), "{}", String::from_utf8_lossy(bad));
        }
        let mut scan = Scan::new(MAX_BULK as usize);
        assert!(!scan.whole(b"*2\r\n$5\r\nab").unwrap());
        assert!(!scan.whole(b"*2\r\n$5\r\nabcde\r\n").unwrap());
        assert!(scan.whole(b"*2\r\n$5\r\nabcde\r\n|1\r\n+k\r\n+v\r\n:3\r\n").unwrap());
        assert_eq!(scan.at, 31);
        // A line, and the CRLF that ends it, split between reads.
        let mut scan = Scan::new(MAX_BULK as usize);
        for have in 1..b"+abc\r\n".len() {
            assert!(!scan.whole(&b"+abc\r\n"[..have]).unwrap());
        }
        assert!(scan.whole(b"+abc\r\n").unwrap());
    }

    /// A connection knows, without waiting, when the server has closed its side
    /// (as a restart does); an unread reply is no close (on Linux, a close behind an
    /// unread reply is seen too); and every connection gets a serial of its own.
    #[test]
    fn a_server_that_closed_is_seen_without_waiting() {
        use redis::IntoConnectionInfo;
        use std::net::TcpListener;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let info: ConnectionInfo = format!("redis://127.0.0.1:{port}").as_str().into_connection_info().unwrap();
        let tls = TlsFiles::default();
        let first = Plain::connect(&info, &tls, Duration::from_secs(1), crate::config::DEFAULT_MAX_REPLY).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let second = Plain::connect(&info, &tls, Duration::from_secs(1), crate::config::DEFAULT_MAX_REPLY).unwrap();
        let (other, _) = listener.accept().unwrap();
        assert_ne!(first.serial(), second.serial());
        assert!(!first.hung_up() && !second.hung_up(), "open, nothing sent");
        server.write_all(b"+OK\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!first.hung_up(), "a reply waiting to be read is no close");
        let seen = |conn: &Plain| {
            let deadline = Instant::now() + Duration::from_secs(2);
            while !conn.hung_up() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            conn.hung_up()
        };
        drop(other);
        assert!(seen(&second), "the server closed it");
        assert!(!first.hung_up(), "the other connection is still open");
        drop(server);
        if cfg!(target_os = "linux") {
            assert!(seen(&first), "closed behind an unread reply");
        }
    }
}

#[cfg(test)]
mod number_tests {
    use super::number;

    /// The header-line reader agrees with `str::parse::<i64>` on what it accepts and
    /// what it gives.
    #[test]
    fn numbers_read_as_str_parse_reads_them() {
        let mut cases: Vec<Vec<u8>> = [
            "0", "-0", "+0", "1", "-1", "+7", "42", "1795613806966963", "9223372036854775807", "-9223372036854775808",
            "9223372036854775808", "-9223372036854775809", "00000000000000000000000000000000000000000001", "", "-", "+",
            "--1", "+-1", "1a", " 1", "1 ", "0x10", "١", "99999999999999999999999999999999999999999999",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 24) as usize;
            let alphabet = b"0123456789-+ a";
            cases.push((0..len).map(|i| alphabet[((x >> (i % 60)) as usize + i) % alphabet.len()]).collect());
        }
        for case in cases {
            let want = std::str::from_utf8(&case).ok().and_then(|s| s.parse::<i64>().ok());
            assert_eq!(number(&case).ok(), want, "{:?}", String::from_utf8_lossy(&case));
        }
    }
}
