<?php

namespace RedisLock\Bridge;

/**
 * The extension's options for a bridge, from a dsn or an options array.
 *
 * Empty means the `redis_lock.*` php.ini defaults. Two defaults differ from the
 * extension's, because frameworks own these choices: `fencing` is off (framework lock
 * names are often unbounded, and nothing there reads the number) and `auto_renew` is
 * off (the framework sets and puts off each lease itself). Either can be asked for.
 *
 * `auto_release` keeps the extension's meaning but is applied by the bridge: a hold
 * the framework leaves alive outlives its objects (frameworks hand locks between
 * processes), and only a script that dies of a fatal error releases the holds it
 * still has; `false` leaves those to their leases too.
 */
final class Options
{
    /** @var array<string, mixed> the options passed to the extension's classes */
    public readonly array $native;
    /** Whether a fatal error releases the holds this process still has. */
    public readonly bool $releaseOnFatal;

    /**
     * @param string|array<string, mixed> $connection a dsn, or the extension's options
     * @param callable(string): \Throwable $invalid makes the framework's own exception
     *        for bad input, from a message
     * @param bool $semaphore for the extension's Semaphore (which refuses Redlock), not Lock
     */
    public function __construct(string|array $connection, callable $invalid, bool $semaphore = false)
    {
        $options = \is_string($connection) ? ['dsn' => $connection] : $connection;
        $release = $options['auto_release'] ?? (bool) \ini_get('redis_lock.auto_release');
        if (!\is_bool($release)) {
            throw $invalid('The "auto_release" option must be a bool, ' . \get_debug_type($release) . ' given.');
        }
        $this->releaseOnFatal = $release;
        $this->native = ['auto_release' => false] + $options + ['fencing' => false, 'auto_renew' => false];
        // The extension checks every option as an object is made, without connecting:
        // a mistake shows at construction, not at the first lock.
        try {
            $semaphore
                ? new \Semaphore('redis-lock-bridge', 1, 0, 1, $this->native)
                : new \Lock('redis-lock-bridge', 0, 1, $this->native);
        } catch (\ValueError|\TypeError $e) {
            throw $invalid($e->getMessage(), $e);
        }
    }
}
