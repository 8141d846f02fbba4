<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Cache\Lock;
use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Redis\Connections\Connection;
use RedisLock\Bridge\Holds;
use RedisLock\Bridge\Options;

/**
 * A Laravel cache lock on the redis_lock extension.
 *
 * `block()` queues and sleeps until the holder's release hands the lock over (no
 * 250 ms polling), and throws LockTimeoutException at its deadline. `$seconds = 0`
 * takes the lock with no expiry. The key and its value are Laravel's own (the
 * owner); `restoreLock($name, $owner)` in any process releases it. A script that
 * dies of a fatal error releases the locks it still holds, unless the store's lock
 * options say 'auto_release' => false.
 */
class RedisLock extends Lock
{
    /** @var array<string, \Lock> the extension's objects, by wait in seconds */
    private array $natives = [];
    /** The object that took the lock last, for its fencing number. */
    private ?\Lock $taker = null;

    /**
     * @param Connection $redis the lock connection (getCurrentOwner() reads the key through it)
     * @param string $name the key, with the cache prefix (the connection adds its own)
     * @param int $seconds the lease; 0: no expiry
     * @param string|null $owner 1 to 256 bytes; default: a random string
     * @throws \InvalidArgumentException for an empty name, or an owner that is empty or too long
     */
    public function __construct(protected Connection $redis, $name, $seconds, $owner = null, private ?Options $options = null)
    {
        parent::__construct($name, $seconds, $owner === null ? null : (string) $owner);
        $this->options ??= new Options([], static fn(string $m, ?\Throwable $e = null) => new \InvalidArgumentException($m, 0, $e));
        if ((string) $name === '') {
            throw new \InvalidArgumentException('A lock name must not be empty.');
        }
        $length = \strlen($this->owner);
        if ($length < 1 || $length > 256) {
            throw new \InvalidArgumentException("A lock owner must be 1 to 256 bytes long, $length given.");
        }
    }

    /** Takes the lock with one try (false while anyone holds it, this owner too, as Laravel's). */
    public function acquire()
    {
        $native = $this->native(0.0);
        return $this->took($native, $native->tryLock($this->owner));
    }

    /**
     * Waits up to $seconds for the lock, woken by the holder's release.
     *
     * @throws LockTimeoutException when the lock could not be had in time
     */
    public function block($seconds, $callback = null)
    {
        // Laravel allows any number of seconds; the extension's waits end within a year.
        $native = $this->native(\min(\max(0.0, (float) $seconds), 31536000.0));
        if (!$this->took($native, $native->addLock($this->owner))) {
            throw new LockTimeoutException();
        }
        if (\is_callable($callback)) {
            try {
                return $callback();
            } finally {
                $this->release();
            }
        }
        return true;
    }

    /** Releases the lock if this owner holds it. */
    public function release()
    {
        Holds::forget($this->holdId());
        return $this->native(0.0)->releaseLock($this->owner);
    }

    /**
     * Gives the lock a new lease of $seconds from now (default: the lock's own) if this
     * owner still holds it; 0 (or less) takes the expiry away, as Laravel's own Redis
     * lock does (Laravel 13.16+). Never brings back a lock that expired or went to
     * another owner: false then.
     */
    public function refresh($seconds = null)
    {
        $seconds ??= $this->seconds;
        $lease = $seconds > 0 ? (float) $seconds : \INF;
        try {
            $refreshed = $this->native(0.0)->extendLock($this->owner, $lease);
        } catch (\ValueError $e) {
            throw new \InvalidArgumentException($e->getMessage(), 0, $e);   // a lease the extension refuses
        }
        if ($refreshed) {
            Holds::extend($this->holdId(), $lease);
        }
        return $refreshed;
    }

    /** Releases the lock whoever holds it, handing it to the next waiter. */
    public function forceRelease()
    {
        Holds::forget($this->holdId());
        $this->native(0.0)->forceReleaseLock();
    }

    /** @return string|null the owner the key holds now */
    protected function getCurrentOwner()
    {
        return $this->redis->get($this->name);
    }

    /** Whether Redis holds this lock for this owner right now. */
    public function isOwnedByCurrentProcess()
    {
        return $this->native(0.0)->isOwned($this->owner);
    }

    /** Whether $owner holds the lock (null: nobody does). */
    public function isOwnedBy($owner)
    {
        return $this->getCurrentOwner() === $owner;
    }

    /** @return string|null the name of the lock connection */
    public function getConnectionName()
    {
        return $this->redis->getName();
    }

    /**
     * The fencing number of this object's last acquisition, with the store's lock option
     * 'fencing' => true (see the extension's Lock::getFencingToken()); null otherwise.
     */
    public function fencingToken(): ?int
    {
        return $this->taker?->getFencingToken();
    }

    private function took(\Lock $native, string|false $token): bool
    {
        if ($token === false) {
            return false;
        }
        $this->taker = $native;
        if ($this->options->releaseOnFatal) {
            $owner = $this->owner;
            Holds::add($this->holdId(), $this->lease(), static fn() => $native->releaseLock($owner));
        }
        return true;
    }

    private function native(float $wait): \Lock
    {
        try {
            return $this->natives[(string) $wait] ??= new \Lock($this->name, $wait, $this->lease(), $this->options->native);
        } catch (\ValueError $e) {
            throw new \InvalidArgumentException($e->getMessage(), 0, $e);   // a lease the extension refuses
        }
    }

    private function lease(): float
    {
        return $this->seconds > 0 ? (float) $this->seconds : \INF;
    }

    private function holdId(): string
    {
        return 'laravel' . "\0" . $this->name . "\0" . $this->owner;
    }
}
