//! The command connection: the one connection to a server, over TCP, TLS or a Unix
//! socket, for commands and, when a waiter listens on it, for push messages.
//!
//! Commands go out as they were encoded (`resp`); replies come through `reader`.
//! A connection speaks RESP2 from its start, or RESP3 when its dsn asks for it
//! (`?protocol=resp3`: `HELLO 3` at connect, with its credentials). A RESP2 one
//! switches to RESP3 when a waiter first listens on it (`listen`), so that push
//! messages and replies share the socket and a process that waited still holds one
//! connection. Push messages are kept aside for the waiter, never taken for a reply.
//!
//! A command may also be sent without waiting for its reply (`send_unawaited`: the
//! release that ends `synchronized()`): the reply is read and put aside at the
//! connection's next use, before that use's own reply, or before it closes, and
//! checked against its `Watch`.

use crate::config::TlsFiles;
use crate::net::cad::Cad;
use crate::net::reader::Reader;
use crate::net::reply::parse;
use crate::net::resp;
use crate::net::socket::Stream;
use redis::{ConnectionInfo, ErrorKind, RedisError, RedisResult, Value};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::os::unix::io::RawFd;
use std::time::{Duration, Instant};

/// A connection to one server.
pub struct Connection {
    pub(super) reader: Reader,
    /// Replies owed to commands sent unawaited (`send_unawaited`), read first.
    pub(super) pending: Owed,
    /// Whether it speaks RESP3: `None` until asked (`listen`), `Some(true)` from the
    /// start for a dsn that asks for it.
    pub(super) resp3: Option<bool>,
    /// The channels it is subscribed to in RESP3, and whether each is sharded.
    pub(super) channels: Vec<(String, bool)>,
    /// Messages on those channels (channel, payload), read while reading replies,
    /// oldest first.
    pub(super) pushes: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// The random part of its wake channels' names, once it has one (`wake`'s to choose).
    pub(super) wake_id: Option<String>,
    /// Which of its wake channels waits use now: a channel that a wait left in doubt
    /// is retired, and the next wait subscribes the next one (`wake`).
    pub(super) wake_generation: u64,
    /// What its server offers of its own compare-and-delete (`cad`), asked as it
    /// was made (`endpoint::open`); turned off when the server refuses it.
    pub(super) cad: Cad,
    /// This connection among every one the process made (`serial`).
    serial: u64,
    /// The address a discovery named for it (a Sentinel master), as it named it.
    named: Option<Box<str>>,
}

/// Messages kept for a waiter at most: more are stale ones nobody reads.
const MAX_PUSHES: usize = 16;

impl Connection {
    /// Connects to `info` (TCP, TLS with `tls`'s files, or a Unix socket) within
    /// `timeout`, then says who it is as redis-rs does: `HELLO 3` (with `AUTH`) for a
    /// dsn that asks for RESP3, else `AUTH` if it has a password; then `SELECT`s its
    /// database. The TLS handshake is made on the first exchange. `max_reply` bounds
    /// what one reply may make it hold (see `DEFAULT_MAX_REPLY`).
    pub fn connect(
        info: &ConnectionInfo,
        tls: &TlsFiles,
        timeout: Duration,
        max_reply: usize,
    ) -> RedisResult<Connection> {
        let stream = Stream::connect(info, tls, timeout)?;
        let mut conn = Connection {
            reader: Reader::new(stream, max_reply),
            pending: Owed::default(),
            resp3: None,
            channels: Vec::new(),
            pushes: VecDeque::new(),
            wake_id: None,
            wake_generation: 0,
            cad: Cad::None,
            serial: next_serial(),
            named: None,
        };
        let settings = info.redis_settings();
        let password = settings.password();
        if settings.protocol().supports_resp3() {
            let mut hello: Vec<&[u8]> = vec![b"HELLO", b"3"];
            if let Some(password) = password {
                hello.extend([
                    &b"AUTH"[..],
                    settings.username().unwrap_or("default").as_bytes(),
                    password.as_bytes(),
                ]);
            }
            match (request(&mut conn, &hello), password) {
                (Ok(_), _) => {}
                // A server that checks credentials before it looks a command up
                // (Valkey 9) answers a HELLO it does not know with NOAUTH: log in
                // alone, then ask HELLO 3 bare, whose answer says what is missing.
                (Err(e), Some(password)) if e.code() == Some("NOAUTH") => {
                    authenticate(&mut conn, settings.username(), password)?;
                    request(&mut conn, &[b"HELLO", b"3"])
                        .map_err(|e| hello_refused(e, Some(password)))?;
                }
                (Err(e), _) => return Err(hello_refused(e, password)),
            }
            conn.resp3 = Some(true);
        } else if let Some(password) = password {
            authenticate(&mut conn, settings.username(), password)?;
        }
        if settings.db() != 0 {
            request(&mut conn, &[b"SELECT", settings.db().to_string().as_bytes()])?;
        }
        Ok(conn)
    }

    /// What its server offers of its own compare-and-delete (`cad`).
    pub fn cad(&self) -> Cad {
        self.cad
    }

    /// Which connection this is: no two connections of the process share a serial,
    /// so a hold that remembers it can tell later whether it is still the same one.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The address a discovery named for this connection (`None`: a fixed server).
    pub fn named(&self) -> Option<&str> {
        self.named.as_deref()
    }

    /// Notes that a discovery found this connection's server as `addr`.
    pub fn set_named(&mut self, addr: String) {
        self.named = Some(addr.into_boxed_str());
    }

    /// Whether the server has closed its side, or the socket failed, as far as the
    /// kernel knows now (a `poll` that does not wait; on Linux a reply not read yet
    /// does not hide a close). A server that restarted closed every connection it had.
    pub fn hung_up(&self) -> bool {
        self.reader.broken || self.reader.stream.peer_closed()
    }

    /// The socket, for a caller that waits on several connections at once (`poll(2)`).
    pub fn fd(&self) -> RawFd {
        self.reader.stream.fd()
    }

    /// Whether rustls holds decrypted bytes that were not read yet: `poll(2)` on `fd`
    /// would not see them, so a caller that polls reads this connection first.
    pub fn buffered(&mut self) -> bool {
        self.reader.stream.buffered()
    }

    /// Sets how long a read may block (`None`: forever).
    pub fn set_read_timeout(&self, d: Option<Duration>) -> RedisResult<()> {
        self.reader.stream.set_read_timeout(d).map_err(RedisError::from)
    }

    /// Sets how long a write may block (`None`: forever).
    pub fn set_write_timeout(&self, d: Option<Duration>) -> RedisResult<()> {
        self.reader.stream.set_write_timeout(d).map_err(RedisError::from)
    }

    /// Sends an encoded command without reading its reply (`recv_response` does).
    pub fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.reader.send(cmd)
    }

    /// Sends an encoded command whose reply nobody waits for: it is read and put
    /// aside at the connection's next use, or before it closes, and checked against
    /// `watch` then, if given. Its outcome is not known to the caller; a connection
    /// lost before the reply came means what a crash means.
    pub fn send_unawaited(&mut self, cmd: &[u8], watch: Option<Watch>) -> RedisResult<()> {
        self.reader.send(cmd)?;
        self.pending.push(watch);
        Ok(())
    }

    /// Reads one whole reply; an error reply is a `Value::ServerError`, as redis-rs
    /// gives it. Replies owed to unawaited commands come first and are put aside;
    /// push messages are kept for the waiter.
    #[inline(always)]
    pub fn recv_response(&mut self) -> RedisResult<Value> {
        // The path of every command, written out: no frame passed through, the value
        // matched where it was parsed. A reply in pieces, and a push message, go on
        // in `read_reply_rest`.
        loop {
            match parse(self.reader.unparsed(), 0) {
                Ok(Some((value, used))) => {
                    self.reader.consumed(used);
                    match value {
                        value @ Value::Push { .. } => return self.read_reply_rest(Ok(value)),
                        value if self.pending.any() => self.pending.came(&value),
                        value => return Ok(value),
                    }
                }
                // Nothing read yet: the path of every command, one read away.
                Ok(None) if self.reader.drained() => {
                    self.reader.fill().map_err(|e| self.reader.broke(e))?
                }
                Ok(None) => {
                    let value = self.reader.complete();
                    return self.read_reply_rest(value);
                }
                Err(e) => return Err(self.reader.broke(e)),
            }
        }
    }

    /// `recv_response` past its fast path, from the frame `next` it read: push
    /// messages are kept, for no longer than the read timeout (`pushed`), and owed
    /// replies put aside, until the reply.
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
            next = self.reader.next_value();
        }
    }

    /// The reply awaited, if all of it has come; `None` when it has not yet. Replies
    /// owed to earlier commands are put aside first, push messages kept, as
    /// `recv_response` does. With `read`, the socket is read once first: only when
    /// `poll(2)` said it is readable, so that this never blocks.
    pub fn try_reply(&mut self, mut read: bool) -> RedisResult<Option<Value>> {
        loop {
            match parse(self.reader.unparsed(), 0) {
                Ok(Some((value, used))) => {
                    self.reader.consumed(used);
                    match value {
                        Value::Push { data, .. } => self.keep(data),
                        value if self.pending.any() => self.pending.came(&value),
                        value => return Ok(Some(value)),
                    }
                }
                Ok(None) if read => {
                    read = false;
                    self.reader.fill_ready().map_err(|e| self.reader.broke(e))?;
                }
                Ok(None) => return Ok(None),
                Err(e) => return Err(self.reader.broke(e)),
            }
        }
    }

    /// Another push message came while a reply is awaited. They are kept while
    /// they come, but not for longer than the read timeout from the first: a
    /// server could send them without end and never the reply.
    #[cold]
    pub(super) fn pushed(
        &mut self,
        since: &mut Option<(Instant, Option<Duration>)>,
    ) -> RedisResult<()> {
        let stream = &self.reader.stream;
        let (first, budget) =
            *since.get_or_insert_with(|| (Instant::now(), stream.read_timeout().ok().flatten()));
        if budget.is_some_and(|b| first.elapsed() >= b) {
            return Err(self.reader.broke(io::Error::new(
                io::ErrorKind::TimedOut,
                "push messages, and no reply, for read_timeout",
            )));
        }
        Ok(())
    }

    /// A push message: a message on one of its channels is kept for the waiter (the
    /// oldest dropped beyond `MAX_PUSHES`); an unsubscription forgets the channel.
    pub(super) fn keep(&mut self, push: Vec<Value>) {
        let text = |v: Option<&Value>| match v {
            Some(Value::BulkString(b)) => Some(b.clone()),
            _ => None,
        };
        let kind = text(push.first()).unwrap_or_default();
        match &kind[..] {
            b"message" | b"smessage" => {
                if let (Some(channel), Some(payload)) = (text(push.get(1)), text(push.get(2))) {
                    // A message for a wait an event loop drives goes to it at once
                    // (several share this channel); on a channel given up, never.
                    let listened = self.channels.iter().any(|(c, _)| c.as_bytes() == channel);
                    if listened && routed(&payload) {
                        return;
                    }
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

    /// Reads, without blocking, the replies owed to unawaited commands that have
    /// arrived (request end: the next request finds a clean connection sooner).
    pub fn settle_arrived(&mut self) {
        if self.pending.any() {
            self.read_arrived();
        }
    }

    /// Reads, without blocking, what has come: replies owed to unawaited commands,
    /// and push messages (kept).
    pub(super) fn read_arrived(&mut self) {
        if self.reader.broken || self.reader.stream.set_nonblocking(true).is_err() {
            return;
        }
        let mut scan = self.reader.scan();
        loop {
            match self.reader.parse_next(&mut scan) {
                Ok(Some(Value::Push { data, .. })) => self.keep(data),
                Ok(Some(v)) if self.pending.any() => self.pending.came(&v),
                Ok(Some(_)) => {
                    // Nothing was asked: the connection is out of step.
                    self.reader.broken = true;
                    break;
                }
                Ok(None) => match self.reader.fill() {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        self.reader.broke(e);
                        break;
                    }
                },
                Err(_) => break,
            }
        }
        if self.reader.stream.set_nonblocking(false).is_err() {
            self.reader.broken = true;
        }
    }
}

impl Drop for Connection {
    /// Reads the replies still owed before the socket closes: closing with a reply
    /// unread resets the connection, and the server might drop a command it has not
    /// run yet (an unawaited release).
    fn drop(&mut self) {
        let mut pushes = None;
        while self.pending.any() && !self.reader.broken {
            match self.reader.next_value() {
                Ok(Value::Push { .. }) => {
                    if self.pushed(&mut pushes).is_err() {
                        break;
                    }
                }
                Ok(v) => self.pending.came(&v),
                Err(_) => break,
            }
        }
    }
}

/// What a reply owed to an unawaited command must show for the hold it released to
/// have lasted until then: an integer of at least `at_least` (a release script's
/// count of what it released). Less, read while the hold's lease still surely lasted
/// (`by`), means the hold was gone before its release ran: forced, evicted, forgotten
/// or lost to a failover under the work. It is counted as lost when the reply is read
/// (`metrics::lost_late`). Read after `by`, it may only mean that the release itself
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
        matches!(reply, Value::Int(n) if *n < self.at_least)
            && self.by.is_none_or(|by| crate::clock::Boot::now() < by)
    }
}

/// Replies owed to commands sent unawaited, oldest first, each with what to check
/// in it, if anything.
#[derive(Debug, Default)]
pub(super) struct Owed(VecDeque<Option<Watch>>);

impl Owed {
    #[inline(always)]
    pub(super) fn any(&self) -> bool {
        !self.0.is_empty()
    }

    fn push(&mut self, watch: Option<Watch>) {
        self.0.push_back(watch);
    }

    /// The oldest owed reply has come: checked against its watch.
    pub(super) fn came(&mut self, reply: &Value) {
        if let Some(Some(w)) = self.0.pop_front() {
            if w.lost(reply) {
                crate::metrics::lost_late(w.what, &w.name);
            }
        }
    }
}

/// A serial number for a new connection (`Connection::serial`): never one given before.
fn next_serial() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `AUTH [username] password`; a refusal never carries the password.
fn authenticate(conn: &mut Connection, username: Option<&str>, password: &str) -> RedisResult<()> {
    let mut auth: Vec<&[u8]> = vec![b"AUTH"];
    auth.extend(username.map(str::as_bytes));
    auth.push(password.as_bytes());
    request(conn, &auth).map(drop).map_err(|e| auth_refused(e, password))
}

/// An `AUTH` refused by the server, as redis-rs reports it: the reply's text stays in
/// the detail, never the password.
fn auth_refused(e: RedisError, password: &str) -> RedisError {
    match e.kind() {
        ErrorKind::Server(_) | ErrorKind::Extension => RedisError::from((
            ErrorKind::AuthenticationFailed,
            "Password authentication failed",
            answer(&e, Some(password)),
        )),
        _ => e,
    }
}

/// A `HELLO 3` refused at connect (a dsn that asks for RESP3): bad credentials, as
/// `auth_refused`, or a server without RESP3, whose answer is shown (never the password).
fn hello_refused(e: RedisError, password: Option<&str>) -> RedisError {
    if !matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension) {
        return e;
    }
    if matches!(e.code(), Some("WRONGPASS" | "NOAUTH")) {
        return RedisError::from((
            ErrorKind::AuthenticationFailed,
            "Password authentication failed",
            answer(&e, password),
        ));
    }
    let why = format!(
        "the dsn asks for RESP3 (?protocol=resp3), and the server refused HELLO 3 ({} {})",
        e.code().unwrap_or("error"),
        answer(&e, password)
    );
    RedisError::from((ErrorKind::InvalidClientConfig, "RESP3", why))
}

/// The server's answer to a command that carried the password: its text, unless it
/// quotes the password (a server that does not know the command repeats its
/// arguments).
fn answer(e: &RedisError, password: Option<&str>) -> String {
    let text = e.detail().unwrap_or("refused").trim();
    match password {
        Some(p) if !p.is_empty() && text.contains(p) => {
            "its answer quotes the password: not shown".to_string()
        }
        _ => text.to_string(),
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

/// Sends an encoded command and reads its reply; an error reply is an `Err`.
pub(crate) fn send(conn: &mut Connection, buf: &[u8]) -> RedisResult<Value> {
    conn.reader.send(buf)?;
    conn.recv_response()?.extract_error()
}

/// Sends `count` encoded commands in one write and reads their replies, each as it
/// came (an error reply is a `Value::ServerError`): every reply is read, so that none
/// is left for the next command.
pub fn pipeline(conn: &mut Connection, cmds: &[u8], count: usize) -> RedisResult<Vec<Value>> {
    conn.reader.send(cmds)?;
    (0..count).map(|_| conn.recv_response()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn server_error(line: &[u8]) -> RedisError {
        redis::parse_redis_value(line).unwrap().extract_error().unwrap_err()
    }

    /// A refused `HELLO 3` or `AUTH` never passes the password on, even from a server
    /// that repeats the refused command's arguments; bad credentials are an
    /// authentication failure, anything else says RESP3 was refused.
    #[test]
    fn refusals_at_connect_never_show_the_password() {
        let echoed = server_error(b"-ERR unknown command 'HELLO', with args beginning with: '3' 'AUTH' 'default' 's3cret-pw' \r\n");
        let e = hello_refused(echoed, Some("s3cret-pw"));
        assert_eq!(e.kind(), ErrorKind::InvalidClientConfig);
        assert!(
            e.to_string().contains("HELLO 3") && !format!("{e} {e:?}").contains("s3cret-pw"),
            "{e}"
        );
        let e = hello_refused(
            server_error(b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"),
            Some("s3cret-pw"),
        );
        assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
        assert!(e.to_string().contains("invalid username-password pair"), "{e}");
        let e = auth_refused(
            server_error(
                b"-ERR unknown command 'AUTH', with args beginning with: 's3cret-pw' \r\n",
            ),
            "s3cret-pw",
        );
        assert!(!format!("{e} {e:?}").contains("s3cret-pw"), "{e}");
        let e = hello_refused(server_error(b"-NOPROTO unsupported protocol version\r\n"), None);
        assert!(e.to_string().contains("NOPROTO unsupported protocol version"), "{e}");
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
        let info: ConnectionInfo =
            format!("redis://127.0.0.1:{port}").as_str().into_connection_info().unwrap();
        let tls = TlsFiles::default();
        let first = Connection::connect(
            &info,
            &tls,
            Duration::from_secs(1),
            crate::config::DEFAULT_MAX_REPLY,
        )
        .unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let second = Connection::connect(
            &info,
            &tls,
            Duration::from_secs(1),
            crate::config::DEFAULT_MAX_REPLY,
        )
        .unwrap();
        let (other, _) = listener.accept().unwrap();
        assert_ne!(first.serial(), second.serial());
        assert!(!first.hung_up() && !second.hung_up(), "open, nothing sent");
        server.write_all(b"+OK\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!first.hung_up(), "a reply waiting to be read is no close");
        let seen = |conn: &Connection| {
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

/// Takes a wake message for a wait that is not blocked reading it (`set_router`).
type Router = fn(&[u8]) -> bool;

thread_local! {
    /// Where this thread's wake messages go before a connection keeps them
    /// (`set_router`).
    static ROUTER: std::cell::Cell<Option<Router>> = const { std::cell::Cell::new(None) };
}

/// Sets this thread's router: each wake message read on one of its connections, on a
/// channel it listens on, is offered to `route` first, and one it takes is not kept.
/// Several waits an event loop drives share a command connection's channel, and any
/// read may bring another's grant (`kinds::core::mailbox`). `None`: every message is kept.
pub fn set_router(route: Option<Router>) {
    let _ = ROUTER.try_with(|r| r.set(route));
}

/// Whether this thread's router took `payload` (`set_router`).
fn routed(payload: &[u8]) -> bool {
    ROUTER.try_with(std::cell::Cell::get).ok().flatten().is_some_and(|route| route(payload))
}
