<?php

namespace RedisLock\Bridge\Symfony;

use RedisLock\Bridge\Holds;
use RedisLock\Bridge\Options;
use RedisLock\Bridge\Token;
use Symfony\Component\Semaphore\Exception\InvalidArgumentException;
use Symfony\Component\Semaphore\Exception\SemaphoreAcquiringException;
use Symfony\Component\Semaphore\Exception\SemaphoreExpiredException;
use Symfony\Component\Semaphore\Key;
use Symfony\Component\Semaphore\PersistingStoreInterface;

/**
 * A symfony/semaphore store on the extension's Semaphore (symfony/semaphore 5.4, 6.4 and 7.4).
 *
 * Each key is a weighted hold with its own lease, judged on Redis's clock, so a
 * crashed holder's permits come back when its lease ends; a release hands freed
 * permits to the extension's queued waiters. A key serialises with its token only,
 * and a script that dies of a fatal error releases the holds it still has, unless
 * 'auto_release' => false. `$connection` as for LockStore.
 */
final class SemaphoreStore implements PersistingStoreInterface
{
    private readonly Options $options;

    /**
     * @param string|array<string, mixed> $connection a dsn, or the extension's options
     * @throws InvalidArgumentException for a bad option or dsn
     */
    public function __construct(string|array $connection = [])
    {
        $this->options = new Options($connection, static fn(string $m, ?\Throwable $e = null) => new InvalidArgumentException($m, 0, $e), true);
    }

    /**
     * Takes the key's weight of its limit, for $ttlInSecond seconds; saving a live key
     * again renews its lease.
     *
     * @throws SemaphoreAcquiringException when the permits are taken
     * @throws InvalidArgumentException for a negative TTL
     */
    public function save(Key $key, float $ttlInSecond): void
    {
        self::checkTtl($ttlInSecond);
        $native = $this->native($key, $ttlInSecond);
        $token = self::token($key);
        if ($token !== null && $native->isOwned($token->value)) {
            $native->extend($token->value, self::lease($ttlInSecond));
            Holds::extend(self::holdId($key, $token->value), self::lease($ttlInSecond));
            return;
        }
        $got = $native->tryAcquire($key->getWeight());
        if ($got === false) {
            throw new SemaphoreAcquiringException($key, 'the script return false');
        }
        if ($token !== null) {
            Holds::forget(self::holdId($key, $token->value));
        }
        $id = self::holdId($key, $got);
        $key->setState(self::class, new Token($got, $this->options->releaseOnFatal ? $id : null));
        if ($this->options->releaseOnFatal) {
            Holds::add($id, self::lease($ttlInSecond), static fn() => $native->release($got));
        }
    }

    /** @throws SemaphoreExpiredException when the hold has ended (released, or its lease ran out) */
    public function putOffExpiration(Key $key, float $ttlInSecond): void
    {
        self::checkTtl($ttlInSecond);
        $token = self::token($key);
        if ($token === null || !$this->native($key, $ttlInSecond)->extend($token->value, self::lease($ttlInSecond))) {
            throw new SemaphoreExpiredException($key, 'the script returns a positive number');
        }
        Holds::extend(self::holdId($key, $token->value), self::lease($ttlInSecond));
    }

    public function delete(Key $key): void
    {
        if (null !== $token = self::token($key)) {
            $this->native($key, 1)->release($token->value);
            Holds::forget(self::holdId($key, $token->value));
        }
    }

    public function exists(Key $key): bool
    {
        $token = self::token($key);
        return $token !== null && $this->native($key, 1)->isOwned($token->value);
    }

    private function native(Key $key, float $ttl): \Semaphore
    {
        try {
            return new \Semaphore((string) $key, $key->getLimit(), 0.0, self::lease($ttl), $this->options->native);
        } catch (\ValueError $e) {
            throw new InvalidArgumentException($e->getMessage(), 0, $e);   // a TTL the extension refuses
        }
    }

    /** Symfony allows 0; the extension's leases are at least 1 ms. */
    private static function lease(float $ttl): float
    {
        return \max(1.0, \ceil($ttl * 1000)) / 1000;
    }

    private static function checkTtl(float $ttl): void
    {
        if (0 > $ttl) {
            throw new InvalidArgumentException("The TTL should be greater than 0, '$ttl' given.");
        }
    }

    private static function token(Key $key): ?Token
    {
        $token = $key->hasState(self::class) ? $key->getState(self::class) : null;
        return $token instanceof Token ? $token : null;
    }

    private static function holdId(Key $key, string $token): string
    {
        return 'symfony-semaphore' . "\0" . $key . "\0" . $token;
    }
}
