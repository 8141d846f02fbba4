//! A file descriptor an event loop can watch (`Ready`): readable when a pending
//! acquisition has something to do, so that PHP's loop (stream_select(), AMPHP,
//! Revolt, ReactPHP, Swoole) waits on it instead of a thread blocking in a read.
//!
//! It is an epoll instance holding a timer (a timerfd, armed at the next instant the
//! acquisition must look again: a retry, the holder's expiry, its deadline) and the
//! socket its grant may come on. Both are level-triggered: the timer stays readable
//! until it is armed again, the socket while bytes wait in it; nothing needs reading
//! from the epoll fd itself. Linux only (epoll, timerfd); elsewhere `new` says so.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

/// A pending acquisition's watched fd (see the module comment). Shared by the wait
/// and its PHP handle, whose stream must stay readable once the wait has ended;
/// closed when the last of them lets it go.
pub struct Ready {
    epoll: RawFd,
    timer: RawFd,
    /// The socket watched now (-1: none).
    socket: AtomicI32,
}

#[cfg(target_os = "linux")]
impl Ready {
    /// An epoll fd holding a disarmed timer, watching no socket yet.
    pub fn new() -> io::Result<Ready> {
        // SAFETY: plain syscalls; each fd is checked before use and closed on failure.
        unsafe {
            let epoll = libc::epoll_create1(libc::EPOLL_CLOEXEC);
            if epoll < 0 {
                return Err(io::Error::last_os_error());
            }
            let timer =
                libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC | libc::TFD_NONBLOCK);
            if timer < 0 {
                let e = io::Error::last_os_error();
                libc::close(epoll);
                return Err(e);
            }
            let ready = Ready { epoll, timer, socket: AtomicI32::new(-1) };
            ready.ctl(libc::EPOLL_CTL_ADD, timer)?;
            Ok(ready)
        }
    }

    /// The fd to watch for readability (an epoll fd: it is never read).
    pub fn fd(&self) -> RawFd {
        self.epoll
    }

    /// The timer's fd: arming it (`at`, `now`) is how another wait's reading hands
    /// this one a message (`kinds::core::mailbox`).
    pub fn timer_fd(&self) -> RawFd {
        self.timer
    }

    /// Readable at `at` (at once if it has passed), and not before: an earlier
    /// arming is replaced.
    pub fn at(&self, at: Instant) {
        arm(self.timer, at.saturating_duration_since(Instant::now()));
    }

    /// Readable now.
    pub fn now(&self) {
        wake(self.timer);
    }

    /// Watches `socket` (the connection a grant comes on) instead of the one watched
    /// before; `None`: no socket.
    pub fn watch(&self, socket: Option<RawFd>) {
        let new = socket.unwrap_or(-1);
        let old = self.socket.swap(-1, Ordering::Relaxed);
        if old >= 0 && old != new {
            // Gone already when its connection closed: epoll forgot it then.
            let _ = self.ctl(libc::EPOLL_CTL_DEL, old);
        }
        if new >= 0 {
            // Added again even under the same number: a connection made since may
            // have been given the number of one that closed (epoll forgot that one).
            match self.ctl(libc::EPOLL_CTL_ADD, new) {
                Ok(()) => self.socket.store(new, Ordering::Relaxed),
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                    self.socket.store(new, Ordering::Relaxed)
                }
                Err(_) => {}
            }
        }
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
        // SAFETY: a live epoll fd and an event struct on the stack.
        if unsafe { libc::epoll_ctl(self.epoll, op, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Arms timer `fd` to expire once, `after` from now (at once for zero).
#[cfg(target_os = "linux")]
fn arm(fd: RawFd, after: std::time::Duration) {
    // A zero it_value would disarm it: the smallest interval instead.
    let after = after.max(std::time::Duration::from_nanos(1));
    let spec = libc::itimerspec {
        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
        it_value: libc::timespec {
            tv_sec: after.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: after.subsec_nanos() as libc::c_long,
        },
    };
    // SAFETY: a timerfd this process owns (or a closed number: EBADF, ignored).
    unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) };
}

/// Makes timer `fd` readable now (another wait read a message for its owner).
#[cfg(target_os = "linux")]
pub fn wake(fd: RawFd) {
    arm(fd, std::time::Duration::ZERO);
}

#[cfg(not(target_os = "linux"))]
impl Ready {
    pub fn new() -> io::Result<Ready> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "a wait an event loop watches needs Linux (epoll and timerfd)",
        ))
    }
    pub fn fd(&self) -> RawFd {
        self.epoll
    }
    pub fn timer_fd(&self) -> RawFd {
        self.timer
    }
    pub fn at(&self, _at: Instant) {}
    pub fn now(&self) {}
    pub fn watch(&self, _socket: Option<RawFd>) {}
}

#[cfg(not(target_os = "linux"))]
pub fn wake(_fd: RawFd) {}

impl Drop for Ready {
    fn drop(&mut self) {
        // SAFETY: fds this value owns, closed once.
        unsafe {
            libc::close(self.timer);
            libc::close(self.epoll);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::Duration;

    fn readable(fd: RawFd, ms: i32) -> bool {
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd on the stack.
        unsafe { libc::poll(&mut p, 1, ms) == 1 }
    }

    #[test]
    fn the_timer_and_the_socket_make_it_readable() {
        let r = Ready::new().expect("epoll and timerfd");
        assert!(!readable(r.fd(), 0));
        r.at(Instant::now() + Duration::from_millis(30));
        assert!(!readable(r.fd(), 10), "readable before its time");
        assert!(readable(r.fd(), 200), "not readable at its time");
        // Armed again: not readable until then.
        r.at(Instant::now() + Duration::from_secs(60));
        assert!(!readable(r.fd(), 0));
        r.now();
        assert!(readable(r.fd(), 50));
        r.at(Instant::now() + Duration::from_secs(60));
        let mut pair = [0; 2];
        // SAFETY: a socket pair on the stack.
        assert_eq!(
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, pair.as_mut_ptr()) },
            0
        );
        r.watch(Some(pair[0]));
        assert!(!readable(r.fd(), 0));
        // SAFETY: a byte written to our own socket pair.
        assert_eq!(unsafe { libc::write(pair[1], b"x".as_ptr().cast(), 1) }, 1);
        assert!(readable(r.fd(), 50), "a byte on the watched socket");
        r.watch(None);
        assert!(!readable(r.fd(), 0), "a socket no longer watched still counts");
        // SAFETY: closing our own pair.
        unsafe {
            libc::close(pair[0]);
            libc::close(pair[1]);
        }
    }
}
