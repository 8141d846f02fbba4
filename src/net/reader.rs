//! A socket and its read buffer: what turns bytes from a server into whole RESP
//! frames, within the read timeout, and never past `max_reply`.
//!
//! Replies are read straight from the socket into a buffer that is reused and never
//! cleared. redis-rs's reader (combine's decoder) zeroes up to 8 KiB of buffer before
//! every `read()`; after the process slept waiting for the reply those are cold cache
//! lines, and on a lock cycle (two round trips) they cost about 5% of the client's
//! CPU. A frame that has begun is read to its end under one read timeout in all,
//! each read checked only for what it brought (`Scan`).

use crate::net::reply::{parse, refused, MAX_BULK, MAX_LINE};
use crate::net::scan::Scan;
use crate::net::socket::Stream;
use redis::{RedisError, RedisResult, Value};
use std::io;
use std::time::Instant;

/// The reply buffer's first size: a lock cycle's replies are a few bytes.
const FIRST_BUFFER: usize = 4096;

/// A socket, what has been read from it, and whether it can still be trusted.
pub(super) struct Reader {
    pub(super) stream: Stream,
    /// `buf[start..end]` is read and not yet parsed; reads go into `buf[end..]`, which
    /// was zeroed once, when the buffer grew, and never again.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Set by an I/O or protocol error: the connection must not be used again.
    pub(super) broken: bool,
    /// The largest reply it reads: a longer one is a protocol error (`max_reply`).
    max_reply: usize,
}

impl Reader {
    /// A reader of `stream` that holds no reply past `max_reply` bytes (see
    /// `DEFAULT_MAX_REPLY`).
    pub(super) fn new(stream: Stream, max_reply: usize) -> Reader {
        Reader {
            stream,
            buf: vec![0; FIRST_BUFFER],
            start: 0,
            end: 0,
            broken: false,
            max_reply: max_reply.clamp(FIRST_BUFFER, MAX_BULK as usize),
        }
    }

    /// Writes `cmd` whole, unless the connection broke earlier.
    pub(super) fn send(&mut self, cmd: &[u8]) -> RedisResult<()> {
        if self.broken {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection broke earlier",
            )
            .into());
        }
        self.stream.write_all(cmd).map_err(|e| self.broke(e))
    }

    /// What has been read and not parsed yet.
    #[inline(always)]
    pub(super) fn unparsed(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Whether nothing is read and unparsed.
    #[inline(always)]
    pub(super) fn drained(&self) -> bool {
        self.start == self.end
    }

    /// `used` bytes of the buffer are parsed.
    #[inline]
    pub(super) fn consumed(&mut self, used: usize) {
        self.start += used;
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
    }

    /// Marks the connection broken by `e`.
    pub(super) fn broke(&mut self, e: impl Into<RedisError>) -> RedisError {
        self.broken = true;
        e.into()
    }

    /// A fresh scan for the next frame, bound by this connection's `max_reply`.
    pub(super) fn scan(&self) -> Scan {
        Scan::new(self.max_reply)
    }

    /// Reads the next frame (a reply or a push message), blocking as long as the read
    /// timeout lets it.
    pub(super) fn next_value(&mut self) -> RedisResult<Value> {
        loop {
            match parse(self.unparsed(), 0) {
                Ok(Some((value, used))) => {
                    self.consumed(used);
                    return Ok(value);
                }
                Ok(None) if self.drained() => self.fill().map_err(|e| self.broke(e))?,
                Ok(None) => return self.complete(),
                Err(e) => return Err(self.broke(e)),
            }
        }
    }

    /// Reads the rest of a frame that has begun in the buffer, and parses it. Each
    /// read is checked only for what it brought (`Scan`), and the frame must be whole
    /// within the read timeout in all: a server that trickles it, or stops half-way,
    /// holds a read no longer than one that sends nothing.
    #[cold]
    #[inline(never)]
    pub(super) fn complete(&mut self) -> RedisResult<Value> {
        let budget = self.stream.read_timeout().map_err(|e| self.broke(e))?;
        let started = Instant::now();
        let mut scan = self.scan();
        let whole: RedisResult<()> = loop {
            match scan.whole(self.unparsed()) {
                Ok(true) => break Ok(()),
                Ok(false) => {}
                Err(e) => break Err(e),
            }
            if let Some(budget) = budget {
                let left = budget.saturating_sub(started.elapsed());
                if left.is_zero() {
                    break Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the reply did not end within read_timeout",
                    )
                    .into());
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
        let parsed = whole.and(reset).and_then(|()| match parse(self.unparsed(), 0) {
            Ok(Some(frame)) => Ok(frame),
            Ok(None) => {
                Err(refused("a whole reply, which the scan saw and the parse did not".to_string()))
            }
            Err(e) => Err(e),
        });
        match parsed {
            Ok((value, used)) => {
                self.consumed(used);
                Ok(value)
            }
            Err(e) => Err(self.broke(e)),
        }
    }

    /// The next whole frame already read, if there is one. `scan` is how far a
    /// frame still arriving was checked: the caller keeps it from one read to the next.
    pub(super) fn parse_next(&mut self, scan: &mut Scan) -> RedisResult<Option<Value>> {
        let data = self.unparsed();
        let parsed = match scan.whole(data) {
            Ok(false) => return Ok(None),
            Ok(true) => parse(data, 0),
            Err(e) => Err(e),
        };
        match parsed {
            Ok(Some((value, used))) => {
                self.consumed(used);
                *scan = self.scan();
                Ok(Some(value))
            }
            Ok(None) => Err(self.broke(refused(
                "a whole reply, which the scan saw and the parse did not".to_string(),
            ))),
            Err(e) => Err(self.broke(e)),
        }
    }

    /// Largest the reply buffer grows: one bulk string of `max_reply` bytes and its header.
    fn max_buffer(&self) -> usize {
        self.max_reply + MAX_LINE
    }

    /// Reads more into the buffer: into the room left at its end, after moving
    /// unparsed bytes to its start or growing it when there is none.
    #[inline(always)]
    pub(super) fn fill(&mut self) -> io::Result<()> {
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
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )),
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
    pub(super) fn fill_ready(&mut self) -> io::Result<()> {
        if !self.stream.is_tls() {
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
}
