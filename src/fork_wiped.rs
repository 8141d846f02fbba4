//! Process state that a forked child never inherits: it lives in a page the
//! kernel fills with zeros in the child (`madvise(MADV_WIPEONFORK)`, Linux 4.14+).
//!
//! A lock cycle used to make three system calls besides its I/O: a `getpid()` in
//! each method to notice a fork, and a `getrandom()` for the token. With this
//! page, the pid is read from the OS once per process, and token bytes from the
//! OS once per 246 tokens, yet a child can neither take its parent's pid for its
//! own nor hand out tokens its parent will also hand out: the kernel wipes the
//! page in every child, however it was forked (`pcntl_fork()`, or a raw `clone`
//! that skips `pthread_atfork` handlers). Where the advice is refused, nothing is
//! cached: the pid and every token come from the OS at each use.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

const PAGE: usize = 4096;

/// What the wiped page holds; all zeros is its valid starting state, which is
/// also what a child finds.
/// How many counters the page keeps (`counters`).
pub const COUNTERS: usize = 18;

#[repr(C)]
struct State {
    /// The process's statistics (`crate::stats`): a forked child starts from zero.
    counters: [AtomicU64; COUNTERS],
    /// This process's pid, or 0 until read (and in a forked child).
    pid: AtomicU32,
    /// 1 while a thread draws from `random` (threads exist in the watchdog and in
    /// tests); another thread that finds it set reads from the OS instead of waiting.
    busy: AtomicU32,
    /// How many bytes at the start of `random` are still unused.
    left: UnsafeCell<u32>,
    random: UnsafeCell<[u8; PAGE - 12 - COUNTERS * 8]>,
}

/// The mapped page; it lives as long as the process.
struct Page(&'static State);

// SAFETY: `pid` and `busy` are atomics; `left` and `random` are touched only by
// the thread that set `busy` from 0 to 1.
unsafe impl Sync for Page {}
unsafe impl Send for Page {}

fn page() -> Option<&'static State> {
    static PAGE_: OnceLock<Option<Page>> = OnceLock::new();
    PAGE_.get_or_init(map).as_ref().map(|p| p.0)
}

#[cfg(not(target_os = "linux"))]
fn map() -> Option<Page> {
    None // no MADV_WIPEONFORK: nothing is kept
}

#[cfg(target_os = "linux")]
fn map() -> Option<Page> {
    // SAFETY: a fresh private anonymous mapping, checked before use and never
    // unmapped; it is zero-filled, which is a valid `State`.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return None;
        }
        if libc::madvise(p, PAGE, libc::MADV_WIPEONFORK) != 0 {
            libc::munmap(p, PAGE);
            return None;
        }
        p.cast::<State>().as_ref().map(Page)
    }
}

/// This process's pid: from the OS once per process (and once in each forked
/// child), from the page otherwise.
pub fn pid() -> u32 {
    let Some(s) = page() else { return std::process::id() };
    match s.pid.load(Ordering::Relaxed) {
        0 => {
            let pid = std::process::id();
            s.pid.store(pid, Ordering::Relaxed);
            pid
        }
        pid => pid,
    }
}

/// The process's counters, zero in a forked child (without MADV_WIPEONFORK, shared
/// statics that a child inherits).
pub fn counters() -> &'static [AtomicU64; COUNTERS] {
    static FALLBACK: [AtomicU64; COUNTERS] = [const { AtomicU64::new(0) }; COUNTERS];
    page().map_or(&FALLBACK, |s| &s.counters)
}

/// Fills `out` with bytes from the OS generator `fill`, read ahead into the page.
/// Bytes handed out are zeroed there, so none is ever given twice.
pub fn random(
    out: &mut [u8],
    fill: impl Fn(&mut [u8]) -> Result<(), String>,
) -> Result<(), String> {
    let Some(s) = page() else { return fill(out) };
    if s.busy.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
        return fill(out);
    }
    // SAFETY: this thread set `busy`, so it alone touches `left` and `random`.
    let (left, buf) = unsafe { (&mut *s.left.get(), &mut *s.random.get()) };
    let drawn = if out.len() > buf.len() {
        fill(out)
    } else {
        let refilled = if (*left as usize) < out.len() {
            *left = 0;
            fill(buf).map(|()| *left = buf.len() as u32)
        } else {
            Ok(())
        };
        refilled.map(|()| {
            let end = *left as usize;
            let start = end - out.len();
            out.copy_from_slice(&buf[start..end]);
            buf[start..end].fill(0);
            *left = start as u32;
        })
    };
    s.busy.store(0, Ordering::Release);
    drawn
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(buf: &mut [u8]) -> Result<(), String> {
        use rand::TryRngCore;
        rand::rngs::OsRng.try_fill_bytes(buf).map_err(|e| e.to_string())
    }

    #[test]
    fn the_pid_is_the_processes() {
        assert_eq!(pid(), std::process::id());
        assert_eq!(pid(), std::process::id());
    }

    #[test]
    fn random_bytes_never_repeat_across_refills() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let mut b = [0u8; 16];
            random(&mut b, os).unwrap();
            assert!(seen.insert(b), "a 16-byte draw repeated");
        }
    }

    #[test]
    fn threads_drawing_at_once_never_get_the_same_bytes() {
        let draws: Vec<[u8; 16]> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..2000)
                        .map(|_| {
                            let mut b = [0u8; 16];
                            random(&mut b, os).unwrap();
                            b
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let unique: std::collections::HashSet<_> = draws.iter().collect();
        assert_eq!(unique.len(), draws.len());
    }

    #[test]
    fn a_draw_larger_than_the_page_goes_to_the_generator() {
        let mut big = vec![0u8; PAGE * 2];
        assert_eq!(
            random(&mut big, |_| Err("asked the OS".into())),
            Err("asked the OS".to_string())
        );
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_forked_child_gets_its_own_pid_and_never_its_parents_next_bytes() {
        let mut first = [0u8; 16];
        random(&mut first, os).unwrap(); // the page now holds bytes ahead of use
        let parent_pid = pid();
        let mut fds = [0i32; 2];
        // SAFETY: plain pipe and fork; the child only draws, writes and _exits.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            match libc::fork() {
                -1 => panic!("fork failed"),
                0 => {
                    let mut msg = [0u8; 20];
                    let _ = random(&mut msg[..16], os);
                    msg[16..].copy_from_slice(&pid().to_ne_bytes());
                    libc::write(fds[1], msg.as_ptr().cast(), msg.len());
                    libc::_exit(0);
                }
                child => {
                    libc::close(fds[1]);
                    let mut msg = [0u8; 20];
                    assert_eq!(libc::read(fds[0], msg.as_mut_ptr().cast(), msg.len()), 20);
                    libc::close(fds[0]);
                    libc::waitpid(child, std::ptr::null_mut(), 0);
                    let mut next = [0u8; 16];
                    random(&mut next, os).unwrap();
                    assert_ne!(&msg[..16], &next, "the child drew the parent's next bytes");
                    assert_eq!(
                        u32::from_ne_bytes([msg[16], msg[17], msg[18], msg[19]]),
                        child as u32
                    );
                    assert_ne!(child as u32, parent_pid);
                    assert_eq!(pid(), parent_pid);
                }
            }
        }
    }
}
