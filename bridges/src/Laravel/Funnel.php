<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Support\InteractsWithTime;
use RedisLock\Bridge\Holds;

/**
 * `Cache::funnel($name)` on a `redis_lock` store: at most `limit()` callbacks run at
 * once, across processes and servers, on the extension's Semaphore.
 *
 * The builder is Laravel 13's (`limit()`, `releaseAfter()`, `block()`, `sleep()`,
 * `then($callback, $failure)`), on every Laravel line. Laravel's own funnel tries
 * each of the N slot locks in turn and, when all are taken, sleeps 250 ms and tries
 * them all again; here a try is one script, and a waiter sleeps until a release
 * hands it a permit. A slot whose holder died comes back when its lease
 * (`releaseAfter()`, 60 s by default; 0: none) ends, on Redis's clock.
 */
class Funnel
{
    use InteractsWithTime;

    /** @var int|null how many callbacks may run at once */
    public $maxLocks;
    /** @var int|float a slot's lease, in seconds (0: none), as Laravel's `releaseAfter` */
    public $releaseAfter = 60;
    /** @var int|float how long to wait for a slot, in seconds (0: one try) */
    public $timeout = 3;
    /** @var int kept for Laravel's API: nothing polls, so it changes nothing */
    public $sleep = 250;

    public function __construct(private RedisStore $store, public string $name)
    {
    }

    /** At most $maxLocks callbacks at once (every caller must give the same number). */
    public function limit($maxLocks)
    {
        $this->maxLocks = $maxLocks;
        return $this;
    }

    /** A slot's lease: seconds, a DateInterval or a DateTime (0: no expiry). */
    public function releaseAfter($releaseAfter)
    {
        $this->releaseAfter = $this->secondsUntil($releaseAfter);
        return $this;
    }

    /** Waits up to $timeout seconds for a slot (fractions allowed; 0: one try). */
    public function block($timeout)
    {
        $this->timeout = $timeout;
        return $this;
    }

    /** Accepted for Laravel's API; waiters are woken by releases, not by a poll. */
    public function sleep($sleep)
    {
        $this->sleep = $sleep;
        return $this;
    }

    /**
     * Runs $callback in a slot and returns what it returns, the slot released
     * whatever happens; without a slot by the deadline, returns $failure($e) or
     * throws $e, Laravel's LimiterTimeoutException.
     *
     * @throws \InvalidArgumentException without a limit() of at least 1, or for a
     *         negative timeout
     * @throws \RedisLock\LockException when Redis fails, or the funnel is in use
     *         with another limit
     */
    public function then(callable $callback, ?callable $failure = null)
    {
        if (!\is_int($this->maxLocks) || $this->maxLocks < 1) {
            throw new \InvalidArgumentException('A funnel needs limit() of at least 1, ' . \var_export($this->maxLocks, true) . ' given.');
        }
        $lease = $this->releaseAfter > 0 ? (float) $this->releaseAfter : \INF;
        $semaphore = $this->store->semaphore($this->name, $this->maxLocks, (float) $this->timeout, $lease);
        $token = $semaphore->acquire();
        if ($token === false) {
            // Laravel 13's own exception where it exists; Redis::funnel()'s before it.
            $e = \class_exists(\Illuminate\Cache\Limiters\LimiterTimeoutException::class)
                ? new \Illuminate\Cache\Limiters\LimiterTimeoutException()
                : new \Illuminate\Contracts\Redis\LimiterTimeoutException();
            if ($failure !== null) {
                return $failure($e);
            }
            throw $e;
        }
        // In the process's table of holds too, so that a job killed at its timeout
        // (TimedOutJobs) gives its slot back.
        $hold = "funnel\0{$this->name}\0$token";
        if ($this->store->releasesOnFatal()) {
            Holds::add($hold, $lease, static fn() => $semaphore->release($token));
        }
        try {
            return $callback();
        } finally {
            Holds::forget($hold);
            $semaphore->release($token);
        }
    }
}
