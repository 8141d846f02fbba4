/*
 * clockshift: an LD_PRELOAD shim that moves a process's wall clock, so that a
 * running redis-server's clock can jump forward or back (the nemesis's clock
 * faults, php-tests/097-server-clock.phpt). libfaketime cannot start Debian's
 * jemalloc-linked redis-server (jemalloc's first allocation reads the clock while
 * libfaketime is still setting itself up); this shim allocates nothing and never
 * resolves a symbol from inside a clock call.
 *
 *   cc -O2 -fPIC -shared -o libclockshift.so clockshift.c -ldl
 *   CLOCKSHIFT_FILE=/tmp/offset LD_PRELOAD=$PWD/libclockshift.so redis-server ...
 *   echo 20 > /tmp/offset.new && mv /tmp/offset.new /tmp/offset   # 20 s ahead
 *
 * The file named by CLOCKSHIFT_FILE holds the offset in seconds: a decimal number,
 * signed, with up to 9 decimals ("20", "-3.5", "+0.25"). No file (or none named)
 * is no offset; a file that does not parse leaves the offset as it was (write it
 * elsewhere and rename it over the old one, so that it is never read half
 * written). It is read again at most once a millisecond, by whichever thread
 * reads the clock first after that, so a jump takes effect within about 1 ms of
 * the rename.
 *
 * Shifted: clock_gettime() of CLOCK_REALTIME, CLOCK_REALTIME_COARSE and CLOCK_TAI,
 * gettimeofday() and time(): everything Redis and Valkey read the wall clock
 * with (ustime(), mstime(), and through them key expiry, TIME and the command
 * time snapshot). CLOCK_MONOTONIC and CLOCK_BOOTTIME are left alone: Redis keeps
 * its event loop's timers on the monotonic clock, and expires keys by the wall
 * clock, as a host whose clock was stepped would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL
#define RECHECK_NS 1000000LL /* the file is read again at most this often */

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime; /* set by the constructor */
/* A copy: Redis rewrites its environment's memory for its process title. */
static char path[4096];
static _Atomic int64_t offset_ns;
static _Atomic int64_t next_read_ns; /* monotonic, ns: when the file is read again */

/* The clock as the kernel has it. Before the constructor has run (jemalloc reads
 * the clock during its own set-up, which dlsym can trigger), the system call. */
static int raw_clock(clockid_t id, struct timespec *ts) {
    clock_gettime_fn f = real_clock_gettime;
    if (f) return f(id, ts);
    return (int) syscall(SYS_clock_gettime, id, ts);
}

/* "[+-]digits[.digits]" seconds, surrounding whitespace allowed, into *out (ns);
 * returns 0 when it does not parse. */
static int parse_offset(const char *s, int64_t *out) {
    int64_t whole = 0, frac = 0, scale = NS;
    int neg = 0, digits = 0;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '+' || *s == '-') neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (whole > 1000000000LL) return 0; /* more than 31 years: not an offset */
        whole = whole * 10 + (*s - '0');
    }
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
            if (scale > 1) { scale /= 10; frac += (*s - '0') * scale; }
        }
    }
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (!digits || *s) return 0;
    *out = (neg ? -1 : 1) * (whole * NS + frac);
    return 1;
}

/* Reads the file again when its time has come; one thread at a time. */
static void refresh(void) {
    struct timespec now;
    int64_t t, due;
    if (!path[0] || raw_clock(CLOCK_MONOTONIC, &now) != 0) return;
    t = (int64_t) now.tv_sec * NS + now.tv_nsec;
    due = atomic_load_explicit(&next_read_ns, memory_order_relaxed);
    if (t < due) return;
    if (!atomic_compare_exchange_strong(&next_read_ns, &due, t + RECHECK_NS)) return;
    int saved = errno; /* a clock read never changes errno */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) atomic_store(&offset_ns, 0);
        errno = saved;
        return;
    }
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    int64_t v;
    if (n >= 0) {
        buf[n] = 0;
        if (n == 0) atomic_store(&offset_ns, 0);
        else if (parse_offset(buf, &v)) atomic_store(&offset_ns, v);
    }
    errno = saved;
}

static int64_t offset(void) {
    refresh();
    return atomic_load_explicit(&offset_ns, memory_order_relaxed);
}

static void shift(struct timespec *ts, int64_t by) {
    int64_t ns = (int64_t) ts->tv_sec * NS + ts->tv_nsec + by;
    ts->tv_sec = (time_t) (ns >= 0 ? ns / NS : -((-ns + NS - 1) / NS));
    ts->tv_nsec = (long) (ns - (int64_t) ts->tv_sec * NS);
}

__attribute__((constructor)) static void clockshift_init(void) {
    const char *p = getenv("CLOCKSHIFT_FILE");
    if (p && strlen(p) < sizeof path) memcpy(path, p, strlen(p) + 1);
    real_clock_gettime = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    int rc = raw_clock(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI)) {
        shift(ts, offset());
    }
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    if (raw_clock(CLOCK_REALTIME, &ts) != 0) return -1;
    if (tz) memset(tz, 0, sizeof(struct timezone)); /* obsolete: UTC, no DST */
    shift(&ts, offset());
    tv->tv_sec = ts.tv_sec; /* never NULL: glibc declares it nonnull */
    tv->tv_usec = (suseconds_t) (ts.tv_nsec / 1000);
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (raw_clock(CLOCK_REALTIME, &ts) != 0) return (time_t) -1;
    shift(&ts, offset());
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
