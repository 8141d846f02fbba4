<?php

// Stubs for redis_lock

namespace {
    /**
     * A distributed lock on one Redis key.
     *
     * `new Lock($key, $timeOut, $lockOut, $options)`: `$timeOut` is how many seconds
     * `addLock()` keeps trying (0: one try), `$lockOut` the lease in seconds after which
     * Redis frees the lock by itself. Both accept fractions and are honoured to the
     * millisecond. `$options` overrides the `redis_lock.*` php.ini directives
     * (dsn, prefix, connect_timeout, read_timeout, retry_delay, retry_delay_max, fair,
     * auto_renew, auto_release, max_hold, fencing, servers, sentinels, service,
     * wait_replicas, durable, durable_aof, durable_timeout, cluster, tls_ca_file,
     * tls_cert_file, tls_key_file, max_endpoints, owner_info, max_reply).
     * `$lockOut = INF` takes the lock with no expiry.
     *
     * A lock still held is released when its object is destroyed, at request end, after
     * exit() and after a fatal error; never by a forked child's copy of the object. With
     * 'auto_release' => false it is not: its lease, or a release with its token from any
     * process, ends it.
     */
    final class Lock {
        /**
         * Validates every argument and option; connects lazily, on first use.
         *
         * @throws ValueError for an empty key, a negative or non-finite $timeOut, a $lockOut
         *         that is not a positive finite number, an unknown option or a malformed dsn.
         * @throws TypeError for an option of the wrong type.
         *
         * @param string $key
         * @param float $timeOut
         * @param float $lockOut
         * @param array|null $options
         */
        public function __construct(string $key, float $timeOut = 0.0, float $lockOut = 10.0, ?array $options = null) {}

        /**
         * Takes the lock, waiting up to $timeOut seconds: a waiter queues and sleeps until a
         * release hands the lock over (or the holder's lease runs out), never past the deadline.
         *
         * $token is the token to take it with (any 1 to 256 bytes; default: 128 random
         * bits). A key that holds the same token already counts as held: taking is never
         * re-entry. On an object that holds a read lock, it upgrades, keeping the token:
         * only once it is the only reader (tryLock() returns false otherwise).
         *
         * @return string|false the token, or false when someone else holds the lock
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @param string|null $token
         */
        public function addLock(?string $token = null): string|false {}

        /**
         * Starts addLock() without blocking, for an event loop (see LockWait): the first
         * try runs now; the wait goes on as the loop polls the handle. $token as for
         * addLock(); one wait per token per thread.
         *
         * @throws ValueError for a $token that is empty, longer than 256 bytes, or waited
         *         for already in this thread; while this object has an acquisition pending
         * @throws LockConnectionException when Redis cannot be reached, as addLock()
         *
         * @param string|null $token
         * @return \LockWait
         */
        public function addLockAsync(?string $token = null): \LockWait {}

        /**
         * Takes a read (shared) lock, waiting up to $timeOut seconds: many readers hold
         * the key at once, no writer meanwhile. Once a writer waits, new readers queue
         * behind it. Each reader has its own lease ($lockOut), judged on Redis's clock.
         * Called on an object that holds the write lock, it downgrades it with no gap
         * a writer could enter by; on one that holds a read lock already, false.
         * releaseLock() releases whichever kind this object holds.
         *
         * @return string|false the token of this read hold, or false
         * @throws ValueError with Redlock ('servers'), which keeps no readers
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         */
        public function addReadLock(): string|false {}

        /**
         * Starts addReadLock() without blocking, for an event loop (see LockWait).
         *
         * @throws ValueError with Redlock ('servers'), which keeps no readers; while this
         *         object has an acquisition pending
         * @throws LockConnectionException when Redis cannot be reached, as addReadLock()
         *
         * @return \LockWait
         */
        public function addReadLockAsync(): \LockWait {}

        /**
         * Sets the lock's remaining lease to $lockOut seconds (default: the object's
         * $lockOut), if the key still holds $token (default: this object's token). With
         * auto_renew, the watchdog renews with the new lease from then on. INF makes the
         * lock permanent (no expiry, nothing for the watchdog to renew).
         *
         * @return bool false when the token no longer holds the key (expired, released,
         *         or never held)
         * @throws ValueError for a $lockOut that is not a positive number, or a $token that
         *         is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @param float|null $lockOut
         * @return bool
         */
        public function extendLock(?string $token = null, ?float $lockOut = null): bool {}

        /**
         * Frees the key whoever holds it, and hands it to the first waiter as a release
         * does. For administration and for frameworks' force-release; a holder that
         * loses its lock this way finds out on its next isOwned(), extendLock() or
         * release (false), or from the watchdog.
         *
         * @return bool true when a holder was removed, false when the key was free
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @return bool
         */
        public function forceReleaseLock(): bool {}

        /**
         * The fencing token of this object's last acquisition: a number that strictly
         * increases from holder to holder of this key, in any process. Pass it to the
         * storage the lock protects, and have it refuse writes with a smaller number than
         * it has seen. Null before the first acquisition, or with 'fencing' => false.
         * Each number is at least the server's clock in microseconds, so numbers keep
         * increasing even after a restart or failover that lost the counter.
         *
         * Issued when first asked for, while the lock is held (one round trip); from then
         * on this process's acquisitions issue theirs as they take the lock. Kept after
         * the release.
         *
         * @throws LockException when the lock was taken without a number and this object
         *         no longer holds it (lease run out, taken by someone else, released)
         *
         * @return int|null
         */
        public function getFencingToken(): ?int {}

        /**
         * The key as given to the constructor, without the prefix.
         *
         * @return string
         */
        public function getKey(): string {}

        /**
         * How long this object's hold surely lasts, in seconds, as this process counts it
         * without asking Redis: from when the acquiring command was sent (or from the
         * server's time in a hand-over), each confirmed renewal or extension moving it
         * on, less the clock drift allowed for (1% of the lease, plus 2 ms). 0.0 when the
         * object holds nothing, its hold was found lost, or that time has passed; INF for
         * a lease that never ends. Work that must not outlive the lock checks it before
         * each step it cannot undo; it is the bound the lock promises exclusion for.
         *
         * @return float
         */
        public function getRemainingLifetime(): float {}

        /**
         * The key's remaining lease in seconds, whoever holds it: null when the lock is
         * free, INF when the key has no expiry.
         *
         * @return float|null
         */
        public function getTtl(): ?float {}

        /**
         * What Redis holds for this lock now, in one read-only round trip: state
         * ('free', 'write' or 'read'), ttl (seconds; null when free, INF without
         * expiry), readers, waiters (queued and still listening), fence (the last
         * fencing number issued for this name, or null), mine (whether this object's
         * token holds it now) and owner (with owner_info: host, pid, sapi, script and
         * since of the holder, a list of them for readers; null otherwise). Tokens are
         * never shown. With Redlock ('servers') only state, ttl and mine are known.
         *
         * @return array{state: string, ttl: ?float, readers: int, waiters: int, fence: ?int, mine: bool, owner: ?array}
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @return array
         */
        public function inspect(): array {}

        /**
         * Whether the key is held by anyone.
         *
         * @return bool
         */
        public function isLocked(): bool {}

        /**
         * Whether the key holds $token (default: this object's token) right now. False at
         * once, without asking Redis, when the watchdog found the lock taken from this object.
         *
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function isOwned(?string $token = null): bool {}

        /**
         * Atomically deletes the lock if it still holds $token (default: the token this
         * object last acquired). Never deletes a lock that someone else now holds.
         *
         * Stops the watchdog's renewals of it. A lock the watchdog found taken from this
         * object (its lease ran out) returns false.
         *
         * @return bool true when this call released the lock
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function releaseLock(?string $token = null): bool {}

        /**
         * The article's name for releaseLock(); the same atomic release.
         *
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function releaseLock1(?string $token = null): bool {}

        /**
         * The article's name for releaseLock(); the same atomic release.
         *
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function releaseLock2(?string $token = null): bool {}

        /**
         * Takes the lock (waiting up to $timeOut seconds), runs $fn, and releases the lock
         * whatever happens: $fn's return value is returned, its exception rethrown as it
         * is, and even a fatal error inside $fn releases the lock.
         *
         * One round trip: while the lease surely lasts (by more than read_timeout), the
         * release is sent without waiting for Redis's answer. When this returns, the
         * release is on its way; what this process sends to Redis next runs after it.
         *
         * @throws LockTimeoutException when the lock cannot be had within $timeOut
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         * @throws LockLostException when $fn returned but the lock had been lost meanwhile
         *         (the watchdog found it taken, or its lease was near its end and the
         *         release found it gone): the work ran partly unprotected, and $fn's
         *         result is not returned
         *
         * @param callable $fn
         * @return mixed
         */
        public function synchronized(callable $fn): mixed {}

        /**
         * Takes the lock with exactly one try; $token as for addLock().
         *
         * @return string|false the token, or false when someone else holds the lock
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @param string|null $token
         */
        public function tryLock(?string $token = null): string|false {}

        /**
         * Takes a read lock with exactly one try (see addReadLock()).
         *
         * @return string|false the token of this read hold, or false
         * @throws ValueError with Redlock ('servers'), which keeps no readers
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         */
        public function tryReadLock(): string|false {}
    }

    /**
     * An acquisition in progress that PHP's own event loop waits on, instead of the
     * process blocking: `Lock::addLockAsync()`, `Lock::addReadLockAsync()`,
     * `Semaphore::acquireAsync()` and `MultiLock::addLockAsync()` return one. Its
     * `stream()` turns readable when there is something to do; `poll()` does it, without
     * waiting for the lock, and says whether the acquisition has ended; `result()` is
     * then what the blocking call would have returned (the token, or false at the
     * deadline), or throws what it would have thrown. `cancel()`, the handle's end, its
     * object's end and request end each leave nothing queued and nothing held.
     *
     * Waiting is the same as a blocking wait's: fair hand-over, fencing, the watchdog,
     * durable grants and every topology. Each poll() sends at most a few commands, one
     * round trip each; it never sleeps.
     */
    final class LockWait {
        /**
         * Made only by the objects' async methods.
         */
        public function __construct() {}

        /**
         * Ends a pending acquisition: it leaves the queue, and a hold handed over
         * meanwhile is released. result() is false after it, and the stream readable,
         * so that a loop still watching it polls and finds it done. Does nothing once
         * it ended.
         *
         * @return void
         */
        public function cancel(): void {}

        /**
         * Whether the acquisition has ended (without doing anything: see poll()).
         *
         * @return bool
         */
        public function isDone(): bool {}

        /**
         * Does what is due (a try, a grant read, a retry, the deadline) without waiting
         * for the lock, and says whether the acquisition has ended (then see result()).
         *
         * @return bool
         */
        public function poll(): bool {}

        /**
         * What the blocking call would have returned: the token, or false when the
         * deadline passed (or the wait was cancelled); or it throws what that call would
         * have thrown (LockConnectionException…), at each call.
         *
         * @return string|false
         * @throws Error while the acquisition goes on (poll() returned false)
         *
         */
        public function result(): string|false {}

        /**
         * The stream to watch for readability (stream_select(), Amp\Loop::onReadable(),
         * Revolt's EventLoop::onReadable(), ReactPHP's addReadStream(), Swoole's
         * Coroutine\System::waitEvent()); when readable, call poll(). Never read from it.
         * The same stream every call. Under stream_select() it must be below FD_SETSIZE
         * (1024), as for any stream.
         *
         * @return resource
         *
         */
        public function stream(): resource {}
    }

    /**
     * Several Redis keys locked together: all of them or none, under one token.
     *
     * `new MultiLock($keys, $timeOut, $lockOut, $options)`: `$keys` a non-empty list of
     * key names (duplicates count once), and the rest as for Lock. `$options['read']`
     * names the keys taken as read shares (beside other readers, Lock's and MultiLock's;
     * not on Redlock); the others are taken alone. Each key is the same
     * key a `new Lock($key)` takes: a Lock holding one of them keeps the MultiLock
     * waiting, and the other way round; they share its fencing counter.
     *
     * On one server, Sentinel, or for keys of one Cluster slot, one script takes every key
     * or none: no other client ever sees a subset held. Keys in several Cluster slots are
     * taken slot group by slot group, in one order, giving back what a round took before
     * any wait; on Redlock ('servers') every node runs the same all-or-none script and a
     * majority holds. A waiter is queued on the first busy key in the MultiLock's order
     * and woken by that key's release, which takes every key for it when the others are
     * free; two MultiLocks never wait on each other in a circle. Keys are released when
     * the object is destroyed and at request end, as a Lock's.
     */
    final class MultiLock {
        /**
         * Validates every argument and option; connects lazily, on first use.
         *
         * @param array<string> $keys
         * @throws ValueError for an empty $keys or an empty key in it, a negative or
         *         non-finite $timeOut, a $lockOut that is not a positive number (or INF
         *         with Redlock), an unknown option, or a 'read' key not in $keys (or any
         *         with Redlock)
         * @throws TypeError for a key that is not a string, or an option of the wrong type
         *
         * @param array $keys
         * @param float $timeOut
         * @param float $lockOut
         * @param array|null $options
         */
        public function __construct(array $keys, float $timeOut = 0.0, float $lockOut = 10.0, ?array $options = null) {}

        /**
         * Takes every key, waiting up to $timeOut seconds, queued and asleep until a
         * release hands them over. $token as for Lock::addLock().
         *
         * @return string|false the token, or false when some key stayed held
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @param string|null $token
         */
        public function addLock(?string $token = null): string|false {}

        /**
         * Starts addLock() without blocking, for an event loop (see LockWait). $token as
         * for Lock::addLockAsync().
         *
         * @throws ValueError for a $token that is empty, longer than 256 bytes, or waited
         *         for already in this thread; while this object has an acquisition pending
         * @throws LockConnectionException when Redis cannot be reached, as addLock()
         *
         * @param string|null $token
         * @return \LockWait
         */
        public function addLockAsync(?string $token = null): \LockWait {}

        /**
         * Sets every key's lease to $lockOut seconds (default: the object's $lockOut) if
         * $token (default: this object's) still holds them all.
         *
         * @return bool false when the token no longer holds every key (nothing changed)
         * @throws ValueError for a $lockOut that is not a positive number, or a $token that
         *         is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @param float|null $lockOut
         * @return bool
         */
        public function extendLock(?string $token = null, ?float $lockOut = null): bool {}

        /**
         * The fencing tokens of this object's last acquisition, one per key (key =>
         * number), each from that key's counter, the one Lock uses (null for a read key):
         * null before the first acquisition, or with 'fencing' => false. Issued when first asked for
         * (one round trip, token-checked on every key); from then on this process's
         * acquisitions issue theirs as they take the keys.
         *
         * @return array<string, int>|null
         * @throws LockException when the keys were taken without numbers and this object
         *         no longer holds them all
         *
         * @return array|null
         */
        public function getFencingToken(): ?array {}

        /**
         * The keys, deduplicated, in the order they are taken.
         *
         * @return list<string>
         *
         * @return array
         */
        public function getKeys(): array {}

        /**
         * How long this object's hold of every key surely lasts, in seconds, as this
         * process counts it without asking Redis (as Lock::getRemainingLifetime(): the bound the hold promises
         * exclusion for); 0.0 when it holds nothing, INF for a lease that never ends.
         *
         * @return float
         */
        public function getRemainingLifetime(): float {}

        /**
         * The shortest remaining lease of the keys in seconds, whoever holds them: null
         * when some key is free, INF when none has an expiry.
         *
         * @return float|null
         */
        public function getTtl(): ?float {}

        /**
         * What Redis holds for each key now: 'keys' maps each key (in the order they are
         * taken) to what Lock::inspect() shows for it (state, ttl, readers, waiters, fence,
         * mine, owner), and 'mine' is whether this object's token holds every key. One
         * read-only round trip per key; tokens are never shown.
         *
         * @return array{mine: bool, keys: array<string, array{state: string, ttl: ?float, readers: int, waiters: int, fence: ?int, mine: bool, owner: ?array}>}
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @return array
         */
        public function inspect(): array {}

        /**
         * Whether $token (default: this object's token) holds every key right now.
         *
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function isOwned(?string $token = null): bool {}

        /**
         * Releases every key $token (default: this object's token) holds, in one step,
         * each handed to its first waiter.
         *
         * @return bool true when the token held every key; false when it held none, or
         *         only some (those are released all the same)
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function releaseLock(?string $token = null): bool {}

        /**
         * Takes every key (waiting up to $timeOut seconds), runs $fn, and releases them
         * whatever happens, as Lock::synchronized() does.
         *
         * @throws LockTimeoutException when the keys cannot be had within $timeOut
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         * @throws LockLostException when $fn returned but some key had been lost meanwhile
         *
         * @param callable $fn
         * @return mixed
         */
        public function synchronized(callable $fn): mixed {}

        /**
         * Takes every key with exactly one try, or none.
         *
         * @return string|false the token, or false when some key is held
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @param string|null $token
         */
        public function tryLock(?string $token = null): string|false {}
    }

    /**
     * A counting semaphore on one Redis key: up to $permits units held at once.
     *
     * `new Semaphore($key, $permits, $timeOut, $lockOut, $options)`: `$timeOut` is how
     * many seconds acquire() waits (0: one try), `$lockOut` each hold's lease (INF: none),
     * `$options` the same settings as Lock's (Redlock's `servers` excepted).
     *
     * Each hold is a token with a weight and its own lease, judged on Redis's clock: a
     * crashed holder's permits come back when its lease ends. A release hands the
     * freed permits to the queued waiters that now fit, in queue order, each woken on
     * its own channel. With 'fair' => true nobody overtakes the first waiter; without,
     * a waiter that fits may pass a first waiter that does not, but only during that
     * waiter's first 100 ms at the head of the queue, so a heavy waiter is never
     * starved. A hold still held is released when its object is destroyed and at
     * request end (unless 'auto_release' => false), never by a forked child's copy.
     */
    final class Semaphore {
        /**
         * Validates every argument and option; connects lazily, on first use.
         *
         * @throws ValueError for an empty key, $permits < 1, a negative or non-finite
         *         $timeOut, a $lockOut that is not a positive number, an unknown option,
         *         a malformed dsn, or Redlock ('servers')
         * @throws TypeError for an option of the wrong type
         *
         * @param string $key
         * @param int $permits
         * @param float $timeOut
         * @param float $lockOut
         * @param array|null $options
         */
        public function __construct(string $key, int $permits, float $timeOut = 0.0, float $lockOut = 10.0, ?array $options = null) {}

        /**
         * Takes $weight permits, waiting up to $timeOut seconds; woken by the release that
         * frees them.
         *
         * @return string|false the token of this hold, or false
         * @throws ValueError for a $weight below 1 or above the permits
         * @throws LockException when the semaphore's holders agreed on another number of permits
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @param int $weight
         */
        public function acquire(int $weight = 1): string|false {}

        /**
         * Starts acquire() without blocking, for an event loop (see LockWait).
         *
         * @throws ValueError for a $weight below 1 or above the permits; while this
         *         object has an acquisition pending
         * @throws LockConnectionException when Redis cannot be reached, as acquire()
         *
         * @param int $weight
         * @return \LockWait
         */
        public function acquireAsync(int $weight = 1): \LockWait {}

        /**
         * The permits free now (holds whose lease ended are reclaimed first).
         *
         * @throws LockException when the semaphore's holders agreed on another number of permits
         *
         * @return int
         */
        public function available(): int {}

        /**
         * Sets the lease of the hold of $token (default: this object's) to $lockOut
         * seconds (default: the object's; INF: none), if it is still live.
         *
         * @return bool false when the hold is gone (released, or its lease ended)
         * @throws ValueError for a $lockOut that is not a positive number, or a $token that
         *         is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @param float|null $lockOut
         * @return bool
         */
        public function extend(?string $token = null, ?float $lockOut = null): bool {}

        /**
         * How long this object's permits surely last, in seconds, as this process counts
         * it without asking Redis (as Lock::getRemainingLifetime(): the bound the hold promises
         * exclusion for); 0.0 when it holds nothing, INF for a lease that never ends.
         *
         * @return float
         */
        public function getRemainingLifetime(): float {}

        /**
         * What Redis holds for this semaphore now, in one read-only round trip: permits
         * (the number its holders agreed on, or this object's when none holds it),
         * available, holders (each with weight, ttl in seconds (INF without expiry)
         * and owner: host, pid, sapi, script and since with owner_info, else null) and
         * waiters (queued and still listening). Tokens are never shown.
         *
         * @return array{permits: int, available: int, holders: list<array{weight: int, ttl: float, owner: ?array}>, waiters: int}
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @return array
         */
        public function inspect(): array {}

        /**
         * Whether $token (default: this object's) holds permits right now.
         *
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function isOwned(?string $token = null): bool {}

        /**
         * Releases the hold of $token (default: this object's last) and hands its permits
         * to the waiters that fit.
         *
         * @return bool true when this call released a live hold
         * @throws ValueError for a $token that is empty or longer than 256 bytes
         *
         * @param string|null $token
         * @return bool
         */
        public function release(?string $token = null): bool {}

        /**
         * Takes $weight permits (waiting up to $timeOut), runs $fn, and releases them
         * whatever happens: $fn's return value is returned, its exception rethrown, and
         * even a fatal error inside $fn releases them.
         *
         * One round trip: while the lease surely lasts (by more than read_timeout), the
         * release is sent without waiting for Redis's answer (see Lock::synchronized()).
         *
         * @throws LockTimeoutException when the permits cannot be had within $timeOut
         * @throws LockLostException when $fn returned but the hold had been lost meanwhile
         *         (the watchdog found it gone, or its lease was near its end and the
         *         release found it gone): $fn's result is not returned
         *
         * @param callable $fn
         * @param int $weight
         * @return mixed
         */
        public function synchronized(callable $fn, int $weight = 1): mixed {}

        /**
         * Takes $weight permits with exactly one try.
         *
         * @return string|false the token of this hold, or false
         * @throws ValueError for a $weight below 1 or above the permits
         * @throws LockException when the semaphore's holders agreed on another number of permits
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         * @param int $weight
         */
        public function tryAcquire(int $weight = 1): string|false {}
    }

    /**
     * This request's lock journal since `redis_lock_journal_start()`: one entry per
     * acquisition, in order: kind (lock, semaphore, MultiLock), name (the key as given),
     * at (when it ended, unix seconds), waited (seconds), outcome (acquired, busy, or the
     * error's kind: connection, unavailable, not_durable, server, other, lost, timeout),
     * handed_over (the hold came from a release), held (seconds the hold lasted, once it
     * ended; null while it lasts). Empty when the journal was not started.
     *
     * @return list<array<string, mixed>>
     *
     * @return array
     */
    function redis_lock_journal(): array {}

    /**
     * Starts this request's lock journal (its thread's, under ZTS), empty: from now to
     * the request's end, every acquisition is noted (`redis_lock_journal()`). For a
     * profiler; off, it costs nothing.
     *
     * @return void
     */
    function redis_lock_journal_start(): void {}

    /**
     * The lock metrics of the whole pool (every php-fpm worker, every Apache child,
     * every thread; a CLI process alone), per lock name (the key folded by
     * `redis_lock.metrics_fold`): acquired, waits, timeouts, handed_over, released,
     * lost, renewals, errors (by kind), wait_seconds and hold_seconds (count, sum,
     * cumulative buckets by upper bound), holds and waiting (in progress now). An empty
     * array when `redis_lock.metrics` is off.
     *
     * @return array<string, array<string, mixed>>
     *
     * @return array
     */
    function redis_lock_metrics(): array {}

    /**
     * The same metrics in Prometheus's text format (0.0.4), for a scrape endpoint:
     * serve it with `Content-Type: text/plain; version=0.0.4`. Empty when
     * `redis_lock.metrics` is off.
     *
     * @return string
     */
    function redis_lock_metrics_text(): string {}

    /**
     * Lists the locks and semaphores under the prefix whose name (without the prefix)
     * matches the glob $pattern, with a bounded SCAN of every master (on Cluster, each
     * one; with Redlock "servers", each server). Auxiliary keys (queues, counters,
     * readers, records) are left out; so is a lock whose own name has their shape
     * (`{x}:queue`).
     *
     * @param array $options as for new Lock(): dsn, prefix, sentinels, cluster, tls_*…
     * @param ?string $pattern a SCAN MATCH glob applied after the prefix (null: "*")
     * @param int $limit at most this many names (1 to 1000000)
     * @return list<array{key: string, kind: string}> sorted by key; kind is "lock" or "semaphore"
     * @throws ValueError for bad options or a $limit out of range
     * @throws LockConnectionException when a server cannot be reached
     *
     * @param array|null $options
     * @param string|null $pattern
     * @param int $limit
     * @return array
     */
    function redis_lock_scan(?array $options = null, ?string $pattern = null, int $limit = 10000): array {}

    /**
     * This process's lock statistics since it started (a php-fpm worker: since it was
     * forked) or since the last reset: acquired, contended (acquisitions that waited),
     * timeouts (waits that gave up), wait_seconds_total, wait_seconds_max,
     * handed_over (holds received from a release), released, renewals, lost (holds
     * found taken or expired under their holder), errors (LockException family
     * thrown), connects (connections opened, reconnects included), stale
     * (acquisitions that came too late to use, their lease possibly over: given up,
     * never returned), evicting_servers (servers found at connect able to evict
     * lock keys, each address once, also told with an E_WARNING), cad_releases and
     * cad_renewals (those done by the server's own DELIFEQ or DELEX and SET IFEQ, no
     * script: Valkey 9, Redis 8.4). Threads of one process share them.
     *
     * @param bool $reset zero the counters after reading them
     * @return array<string, int|float>
     *
     * @param bool $reset
     * @return array
     */
    function redis_lock_stats(bool $reset = false): array {}
    /**
     * Redis itself failed: the base of the extension's exceptions.
     */
    class LockException extends \RuntimeException {}

    /**
     * Redis is unreachable, timed out, refused authentication or broke the protocol. The message
     * names the address and the cause, never a password.
     */
    class LockConnectionException extends \LockException {}

    /**
     * The lock could not be had in time, for APIs that throw instead of returning false.
     */
    class LockTimeoutException extends \LockException {}

    /**
     * synchronized()'s callable returned, but the hold had not lasted to the release (the
     * watchdog or the release found its token gone): the work ran without exclusivity, and its
     * result is not returned.
     */
    class LockLostException extends \LockException {}
}
