<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Cache\RedisStore as LaravelRedisStore;
use Illuminate\Redis\Connections\Connection;
use RedisLock\Bridge\Options;

/**
 * Laravel's Redis cache store, with its locks on the redis_lock extension.
 *
 * Cached values stay where Laravel's own store puts them; `lock()` and
 * `restoreLock()` return RedisLock objects, which write the same keys Laravel's
 * RedisLock writes (connection prefix and cache prefix included, the owner as the
 * value), on the same server, so both can run side by side during a migration.
 *
 * The extension's settings are taken from the lock connection (host, port, database,
 * user and password, TLS, or a phpredis cluster's masters); setLockOptions() adds to
 * or overrides them with any of the extension's options (sentinels, timeouts, …).
 */
class RedisStore extends LaravelRedisStore
{
    /** @var array<string, mixed> */
    private array $lockOptions = [];
    /** @var array<string, Options> by connection name, and kind (lock or semaphore) */
    private array $resolved = [];

    /**
     * The extension's options for the locks, over those read from the lock connection
     * ('auto_release' => false: a fatal error leaves held locks to their leases).
     *
     * @param array<string, mixed> $options
     */
    public function setLockOptions(array $options): static
    {
        $this->lockOptions = $options;
        $this->resolved = [];
        return $this;
    }

    /**
     * @param string $name
     * @param int $seconds the lease; 0: no expiry
     * @param string|null $owner default: a random string
     * @return RedisLock
     */
    public function lock($name, $seconds = 0, $owner = null)
    {
        $connection = $this->lockConnection();
        return new RedisLock($connection, $this->prefix . $name, $seconds, $owner, $this->optionsFor($connection));
    }

    /**
     * @param string $name
     * @param string $owner
     * @return RedisLock
     */
    public function restoreLock($name, $owner)
    {
        return $this->lock($name, 0, $owner);
    }

    /**
     * The extension's Semaphore on $name (with the cache prefix), on the lock
     * connection: what `Cache::funnel()` runs on.
     *
     * @param float $timeout how long acquire() waits, in seconds
     * @param float $lease each hold's lease, in seconds (INF: none)
     * @throws \InvalidArgumentException for options the Semaphore refuses (Redlock's
     *         `servers`), or a limit, wait or lease it refuses
     */
    public function semaphore(string $name, int $permits, float $timeout, float $lease): \Semaphore
    {
        $options = $this->optionsFor($this->lockConnection(), true);
        try {
            // The hold ends with the funnel's callback, so the extension's own
            // auto-release (object end, request end, fatal error) is the right one.
            return new \Semaphore($this->prefix . $name, $permits, $timeout, $lease,
                ['auto_release' => $options->releaseOnFatal] + $options->native);
        } catch (\ValueError $e) {
            throw new \InvalidArgumentException($e->getMessage(), 0, $e);
        }
    }

    /** Whether a fatal error (or a job's timeout) releases what this store's locks and funnels hold. */
    public function releasesOnFatal(): bool
    {
        return $this->optionsFor($this->lockConnection())->releaseOnFatal;
    }

    private function optionsFor(Connection $connection, bool $semaphore = false): Options
    {
        $derived = ConnectionOptions::of(...);
        $server = \array_intersect_key($this->lockOptions, ['dsn' => 1, 'servers' => 1, 'sentinels' => 1, 'cluster' => 1]);
        return $this->resolved[($connection->getName() ?? '') . ($semaphore ? "\0semaphore" : '')] ??= new Options(
            // Servers given in the options replace the connection's; its prefix stays.
            $this->lockOptions + ($server ? ['prefix' => $derived($connection)['prefix']] : $derived($connection)),
            static fn(string $m, ?\Throwable $e = null) => new \InvalidArgumentException($m, 0, $e),
            $semaphore,
        );
    }
}
