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
     * (dsn, prefix, connect_timeout, read_timeout, retry_delay, retry_delay_max, fair).
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
         * @return string|false the token, or false when someone else holds the lock
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         */
        public function addLock(): string|false {}

        /**
         * The key as given to the constructor, without the prefix.
         *
         * @return string
         */
        public function getKey(): string {}

        /**
         * Whether the key is held by anyone.
         *
         * @return bool
         */
        public function isLocked(): bool {}

        /**
         * Atomically deletes the lock if it still holds $token (default: the token this
         * object last acquired). Never deletes a lock that someone else now holds.
         *
         * @return bool true when this call released the lock
         *
         * @param string|null $token
         * @return bool
         */
        public function releaseLock(?string $token = null): bool {}

        /**
         * The article's name for releaseLock(); the same atomic release.
         *
         * @param string|null $token
         * @return bool
         */
        public function releaseLock1(?string $token = null): bool {}

        /**
         * The article's name for releaseLock(); the same atomic release.
         *
         * @param string|null $token
         * @return bool
         */
        public function releaseLock2(?string $token = null): bool {}

        /**
         * Takes the lock with exactly one try.
         *
         * @return string|false the token, or false when someone else holds the lock
         * @throws LockConnectionException when Redis cannot be reached or answers too late
         *
         */
        public function tryLock(): string|false {}
    }
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
}
