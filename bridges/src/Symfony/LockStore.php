<?php

namespace RedisLock\Bridge\Symfony;

use RedisLock\Bridge\Holds;
use RedisLock\Bridge\Options;
use RedisLock\Bridge\Token;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;

/**
 * A symfony/lock store on the redis_lock extension (symfony/lock 5.4, 6.4 and 7.4).
 *
 * Blocking and shared: `acquire(true)` and `acquireRead(true)` queue and sleep until
 * a release hands the lock over, instead of retrying every 100 ms. Upgrade (a read
 * lock acquired for writing, as its only reader) and downgrade happen in one step.
 *
 * A key serialises with its token only: a lock taken in one process can be put off
 * and released in another. Holds never end with the objects that took them (the
 * Lock's own autoRelease does that); a script that dies of a fatal error releases
 * the holds it still has, unless 'auto_release' => false.
 *
 * `$connection` is a dsn or an array of the extension's options (dsn, prefix,
 * sentinels/service, cluster, tls_*, timeouts, …); empty means the `redis_lock.*`
 * php.ini defaults. Fencing numbers are off unless 'fencing' => true is given.
 */
final class LockStore implements BlockingStoreInterface, BlockingSharedLockStoreInterface
{
    /** How long a blocking wait may last: Symfony's waits have no deadline. */
    private const FOREVER = 31536000.0;

    private readonly Options $options;
    /** @var \WeakMap<Key, array{lock: \Lock, read: bool}> the extension's object that took each key's hold, and its kind */
    private \WeakMap $natives;

    /**
     * @param string|array<string, mixed> $connection
     * @param float $initialTtl the lease a new hold gets, in seconds, until
     *        Symfony puts it off to the lock's own TTL
     * @throws InvalidTtlException for a non-positive $initialTtl
     * @throws InvalidArgumentException for a bad option or dsn
     */
    public function __construct(string|array $connection = [], private readonly float $initialTtl = 300.0)
    {
        if (!($initialTtl > 0) || \is_infinite($initialTtl)) {
            // NAN spelt out: PHP 8.5 warns when NAN is coerced to a string.
            throw new InvalidTtlException(\sprintf('"%s()" expects a strictly positive TTL. Got %s.', __METHOD__,
                \is_nan($initialTtl) ? 'NAN' : $initialTtl));
        }
        $this->options = new Options($connection, static fn(string $m, ?\Throwable $e = null) => new InvalidArgumentException($m, 0, $e));
        $this->natives = new \WeakMap();
    }

    public function save(Key $key): void
    {
        $this->store($key, false, false);
    }

    public function waitAndSave(Key $key): void
    {
        $this->store($key, false, true);
    }

    public function saveRead(Key $key): void
    {
        $this->store($key, true, false);
    }

    public function waitAndSaveRead(Key $key): void
    {
        $this->store($key, true, true);
    }

    /**
     * Sets the hold's remaining lease to $ttl seconds, to the millisecond (at least 1 ms).
     *
     * @throws LockExpiredException when the hold's lease has run out and the key is free,
     *         or $ttl was up before Redis answered
     * @throws LockConflictedException when the key was never saved, or someone else holds it now
     */
    public function putOffExpiration(Key $key, float $ttl): void
    {
        $token = $this->token($key) ?? throw new LockConflictedException();
        $key->reduceLifetime($ttl);
        $native = $this->native($key);
        $ok = $this->call(fn() => $native->extendLock($token->value, \max(1.0, \ceil($ttl * 1000)) / 1000));
        if (!$ok) {
            if ($this->call(fn() => $native->isLocked())) {
                throw new LockConflictedException();
            }
            throw new LockExpiredException(\sprintf('Failed to put off the expiration of the "%s" lock: its lease ran out.', $key));
        }
        Holds::extend(self::holdId($key, $token->value), $ttl);
        $this->checkNotExpired($key);
    }

    public function delete(Key $key): void
    {
        if (null !== $token = $this->token($key)) {
            $native = $this->native($key);
            $this->call(fn() => $native->releaseLock($token->value));
            Holds::forget(self::holdId($key, $token->value));
        }
    }

    /** Whether Redis says this key's hold is live (read or write). */
    public function exists(Key $key): bool
    {
        if (null === $token = $this->token($key)) {
            return false;
        }
        $native = $this->native($key);
        return $this->call(fn() => $native->isOwned($token->value));
    }

    /**
     * The fencing number of the key's current hold, with 'fencing' => true (see the
     * extension's Lock::getFencingToken()); null for a read hold, or without fencing.
     * Only in the process that took the hold.
     *
     * @throws LockStorageException when the hold is lost before a number was issued
     */
    public function getFencingToken(Key $key): ?int
    {
        $native = $this->natives[$key]['lock'] ?? null;
        return $native === null ? null : $this->call(fn() => $native->getFencingToken());
    }

    /** What every save does: the key's lifetime, the hold, then the expiry check. */
    private function store(Key $key, bool $read, bool $wait): void
    {
        $key->reduceLifetime($this->initialTtl);
        $this->take($key, $read, $wait);
        $this->checkNotExpired($key);
    }

    /** Takes, renews, upgrades or downgrades $key's hold, or throws LockConflictedException. */
    private function take(Key $key, bool $read, bool $wait): void
    {
        $token = $this->token($key);
        $native = $this->natives[$key]['lock'] ?? null;
        $held = $this->natives[$key]['read'] ?? false;
        if ($token !== null && $native !== null && $this->call(fn() => $native->isOwned($token->value))) {
            // Held already: a second save renews; a change of mode upgrades or downgrades,
            // on the object that holds it (the extension knows which kind it holds).
            $got = match (true) {
                !$read && $held => $this->call(fn() => $wait ? $native->addLock() : $native->tryLock()),
                $read && !$held => $this->call(fn() => $native->addReadLock()),
                default => $this->call(fn() => $native->extendLock($token->value, $this->initialTtl)) ? $token->value : false,
            };
            if ($got === false) {
                throw new LockConflictedException();
            }
            $this->record($key, $native, $got, $read);
            return;
        }
        if ($token !== null && $native === null && $this->call(fn() => $this->native($key)->isOwned($token->value))) {
            // A key from another process, still held: a save renews it.
            if (!$this->call(fn() => $this->native($key)->extendLock($token->value, $this->initialTtl))) {
                throw new LockConflictedException();
            }
            return;
        }
        // A waiting object, so that a later blocking upgrade on it can wait too.
        $native = new \Lock((string) $key, self::FOREVER, $this->initialTtl, $this->options->native);
        $got = $this->call(fn() => match (true) {
            $read => $wait ? $native->addReadLock() : $native->tryReadLock(),
            default => $wait ? $native->addLock($token?->value) : $native->tryLock($token?->value),
        });
        if ($got === false) {
            throw new LockConflictedException();
        }
        $this->record($key, $native, $got, $read);
    }

    private function record(Key $key, \Lock $native, string $token, bool $read): void
    {
        $previous = $this->token($key);
        if ($previous !== null && $previous->value !== $token) {
            Holds::forget(self::holdId($key, $previous->value));
        }
        $id = self::holdId($key, $token);
        $key->setState(self::class, new Token($token, $this->options->releaseOnFatal ? $id : null));
        $this->natives[$key] = ['lock' => $native, 'read' => $read];
        if ($this->options->releaseOnFatal) {
            Holds::add($id, $this->initialTtl, static fn() => $native->releaseLock($token));
        }
    }

    private function token(Key $key): ?Token
    {
        $token = $key->hasState(self::class) ? $key->getState(self::class) : null;
        return $token instanceof Token ? $token : null;
    }

    /** The object that took the key's hold, or a new one for a key from elsewhere. */
    private function native(Key $key): \Lock
    {
        return $this->natives[$key]['lock'] ?? new \Lock((string) $key, 0.0, $this->initialTtl, $this->options->native);
    }

    private static function holdId(Key $key, string $token): string
    {
        return 'symfony-lock' . "\0" . $key . "\0" . $token;
    }

    /**
     * Runs an extension call: Redis failures become Symfony's LockStorageException, a
     * value the extension refuses (a TTL beyond its range) its InvalidArgumentException.
     */
    private function call(\Closure $fn): mixed
    {
        try {
            return $fn();
        } catch (\LockException $e) {
            throw new LockStorageException($e->getMessage(), 0, $e);
        } catch (\ValueError $e) {
            throw new InvalidArgumentException($e->getMessage(), 0, $e);
        }
    }

    private function checkNotExpired(Key $key): void
    {
        if ($key->isExpired()) {
            try {
                $this->delete($key);
            } catch (\Throwable) {
                // the expiry is the error to report
            }
            throw new LockExpiredException(\sprintf('Failed to store the "%s" lock.', $key));
        }
    }
}
