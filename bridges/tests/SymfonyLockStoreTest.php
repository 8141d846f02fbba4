<?php

namespace RedisLock\Bridge\Tests;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\LockStore;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockAcquiringException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\SharedLockStoreInterface;

final class SymfonyLockStoreTest extends TestCase
{
    private function store(array $options = []): LockStore
    {
        return new LockStore(['dsn' => Support::dsn()] + $options);
    }

    public function testInterfaces(): void
    {
        $store = $this->store();
        $this->assertInstanceOf(BlockingStoreInterface::class, $store);
        $this->assertInstanceOf(SharedLockStoreInterface::class, $store);
        $this->assertInstanceOf(BlockingSharedLockStoreInterface::class, $store);
    }

    public function testAcquireAndRelease(): void
    {
        $factory = new LockFactory($this->store());
        $name = Support::name('acquire');
        $a = $factory->createLock($name, 10);
        $b = $factory->createLock($name, 10);
        $this->assertTrue($a->acquire());
        $this->assertTrue($a->isAcquired());
        $this->assertFalse($b->acquire());
        $redis = Support::redis();
        $this->assertSame(1, $redis->exists($name));
        $pttl = $redis->pttl($name);
        $this->assertGreaterThan(9000, $pttl);
        $this->assertLessThanOrEqual(10000, $pttl);
        $a->release();
        $this->assertFalse($a->isAcquired());
        $this->assertSame(0, $redis->exists($name));
        $this->assertTrue($b->acquire());
        $b->release();
        // Fencing is off by default: no counter key is ever made.
        $this->assertSame([], $redis->keys($name . '*'));
    }

    public function testSymfonyStoreRules(): void
    {
        // The rules symfony/lock's own store tests check (AbstractStoreTestCase).
        $store = $this->store();
        $resource = Support::name('rules');
        $key1 = new Key($resource);
        $key2 = new Key($resource);
        $this->assertFalse($store->exists($key1));
        $store->save($key1);
        $store->save($key1);                       // saving twice renews, never throws
        $this->assertTrue($store->exists($key1));
        $this->assertFalse($store->exists($key2));
        try {
            $store->save($key2);
            $this->fail('a second key saved on a held resource');
        } catch (LockConflictedException) {
        }
        $this->assertTrue($store->exists($key1));
        $store->delete($key2);                     // deleting another key leaves the hold
        $this->assertTrue($store->exists($key1));
        $store->delete($key1);
        $this->assertFalse($store->exists($key1));
        $store->save($key2);
        $this->assertTrue($store->exists($key2));
        $store->delete($key2);

        $expired = new Key(Support::name('expired'));
        $expired->reduceLifetime(0);
        try {
            $store->save($expired);
            $this->fail('an expired key saved');
        } catch (LockExpiredException) {
        }
        $this->assertFalse($store->exists($expired));
    }

    public function testBlockingWaitWakesOnRelease(): void
    {
        $name = Support::name('blocking');
        $factory = new LockFactory($this->store());
        $rounds = [];
        for ($i = 0; $i < 5; $i++) {
            $lock = $factory->createLock($name, 30);
            $rounds[] = Support::wakeLag(<<<'PHP'
                $lock = (new Symfony\Component\Lock\LockFactory(new RedisLock\Bridge\Symfony\LockStore($argv[1])))->createLock($argv[2], 30);
                $lock->acquire() or exit(1);
                echo "held\n";
                fgets(STDIN);                     // the waiter starts now
                usleep(300000);
                $t = microtime(true);
                $lock->release();
                echo $t, "\n";
                PHP, [Support::dsn(), $name], fn() => $this->assertTrue($lock->acquire(true)));
            $lock->release();
        }
        // A hand-over is a wake-up. What it is told apart from: Symfony's retry loop
        // (every 100 ms), which Lock::acquire(true) runs itself for a store that is not
        // blocking, and the module's own re-check (1 s) were the wake lost. The release
        // comes 300 ms into the wait: a lost wake shows the 700 ms to the re-check,
        // measured per round (a busy machine moves it), and a woken waiter under half
        // of it in most rounds, whatever the load adds to both.
        $this->assertInstanceOf(BlockingStoreInterface::class, $this->store(), 'acquire(true) waits in the store, not in Symfony\'s retry loop');
        Support::assertWoken($rounds, Support::RECHECK, 'woken by the release, not by the re-check');
    }

    public function testExpiryAndPutOff(): void
    {
        $store = $this->store();
        $redis = Support::redis();
        $factory = new LockFactory($store);
        $name = Support::name('expiry');
        // Each lease checked against the time its calls took, measured here: a busy
        // machine may take long between the call and the PTTL, a wrong lease
        // (seconds taken for milliseconds, or the default) is still far off.
        $lock = $factory->createLock($name, 0.3);
        $t = microtime(true);
        $this->assertTrue($lock->acquire());
        $pttl = $redis->pttl($name);
        $this->assertGreaterThanOrEqual(300 - (microtime(true) - $t) * 1000 - 1, $pttl);
        $this->assertLessThanOrEqual(300, $pttl);
        $t = microtime(true);
        $lock->refresh(1.234);                      // to the millisecond
        $pttl = $redis->pttl($name);
        $this->assertGreaterThanOrEqual(1234 - (microtime(true) - $t) * 1000 - 1, $pttl);
        $this->assertLessThanOrEqual(1234, $pttl);
        $this->assertLessThanOrEqual(1.234, $lock->getRemainingLifetime());

        $key = new Key(Support::name('expiry'));
        $store->save($key);
        $t = microtime(true);
        $store->putOffExpiration($key, 0.2);
        $exists = $store->exists($key);
        if (microtime(true) - $t < 0.2) {           // else the machine was too busy to tell
            $this->assertTrue($exists);
        }
        usleep(300000);
        $this->assertFalse($store->exists($key));
        try {
            $store->putOffExpiration($key, 5);
            $this->fail('an expired hold put off');
        } catch (LockExpiredException) {
        }
        // Taken by someone else meanwhile: a conflict, not an expiry.
        $other = new Key((string) $key);
        $store->save($other);
        $this->expectException(LockConflictedException::class);
        $store->putOffExpiration($key, 5);
    }

    public function testPutOffShorterThanTheRoundTrip(): void
    {
        $store = $this->store();
        $key = new Key(Support::name('abort'));
        $store->save($key);
        try {
            $store->putOffExpiration($key, 1 / 1000000);
            $this->fail('a lifetime shorter than the call accepted');
        } catch (LockExpiredException) {
        }
        $this->assertFalse($store->exists($key));
        $this->assertSame(0, Support::redis()->exists((string) $key));
    }

    public function testSerialisedKeyAcrossProcesses(): void
    {
        $name = Support::name('serialised');
        // A process takes the lock without autoRelease, hands the key on, and ends.
        [$rc, $out] = Support::run(<<<'PHP'
            $factory = new Symfony\Component\Lock\LockFactory(new RedisLock\Bridge\Symfony\LockStore($argv[1]));
            $key = new Symfony\Component\Lock\Key($argv[2]);
            $lock = $factory->createLockFromKey($key, 30, false);
            $lock->acquire() or exit(1);
            echo serialize($key);
            PHP, [Support::dsn(), $name]);
        $this->assertSame(0, $rc);
        // The serialised key carries its token, nothing of the store.
        $this->assertStringNotContainsString('dsn', $out);
        $this->assertStringNotContainsString('Lock\\Bridge\\Options', $out);
        $redis = Support::redis();
        $this->assertGreaterThan(25000, $redis->pttl($name), 'the hold outlived the process that took it');
        $key = unserialize($out);
        $factory = new LockFactory($this->store());
        $this->assertFalse($factory->createLock($name)->acquire());
        $lock = $factory->createLockFromKey($key, 30, false);
        $this->assertTrue($lock->isAcquired());
        $lock->refresh(60);
        $this->assertGreaterThan(55000, $redis->pttl($name));
        $lock->release();
        $this->assertSame(0, $redis->exists($name));
    }

    public function testFatalErrorReleases(): void
    {
        $redis = Support::redis();
        // Every lock without Symfony's autoRelease, so that only the bridge can free them.
        $code = <<<'PHP'
            $options = ['dsn' => $argv[1]] + ($argv[3] === 'keep' ? ['auto_release' => false] : []);
            $factory = new Symfony\Component\Lock\LockFactory(new RedisLock\Bridge\Symfony\LockStore($options));
            $read = $factory->createLock($argv[2] . ':read', 30, false);
            $read->acquireRead() or exit(1);
            $key = new Symfony\Component\Lock\Key($argv[2] . ':handed');
            $handed = $factory->createLockFromKey($key, 30, false);
            $handed->acquire() or exit(1);
            $serialised = serialize($key);          // handed to another process
            $handed->refresh(40);                   // put off here: still not this process's to free
            $lock = $factory->createLock($argv[2], 30, false);
            $lock->acquire() or exit(1);
            if ($argv[4] === 'exception') {
                throw new RuntimeException('uncaught');
            }
            ini_set('memory_limit', '16M');
            $waste = str_repeat('x', 64 << 20);     // a fatal error: destructors do not run
            PHP;
        foreach (['memory', 'exception'] as $how) {
            $name = Support::name('fatal');
            [$rc, , $err] = Support::run($code, [Support::dsn(), $name, 'release', $how]);
            $this->assertSame(255, $rc);
            $this->assertStringContainsString($how === 'memory' ? 'Allowed memory size' : 'uncaught', $err);
            $this->assertSame(0, $redis->exists($name), "a lock held at a fatal error ($how) is released");
            $this->assertSame(0, $redis->exists("$name:read"), 'so is a read lock');
            $this->assertSame(1, $redis->exists("$name:handed"), 'but not a serialised key\'s lock');

            $name = Support::name('fatal-kept');
            [$rc] = Support::run($code, [Support::dsn(), $name, 'keep', $how]);
            $this->assertSame(255, $rc);
            $this->assertSame(1, $redis->exists($name), "'auto_release' => false leaves it to its lease");
            $this->assertGreaterThan(25000, $redis->pttl($name));
        }
        // A script that ends normally leaves locks without autoRelease to their leases,
        // as Symfony documents.
        $name = Support::name('normal-end');
        [$rc] = Support::run(<<<'PHP'
            $factory = new Symfony\Component\Lock\LockFactory(new RedisLock\Bridge\Symfony\LockStore($argv[1]));
            $factory->createLock($argv[2], 30, false)->acquire() or exit(1);
            PHP, [Support::dsn(), $name]);
        $this->assertSame(0, $rc);
        $this->assertSame(1, $redis->exists($name));
    }

    public function testSharedUpgradeAndDowngrade(): void
    {
        $store = $this->store();
        $resource = Support::name('shared');
        [$key1, $key2, $key3] = [new Key($resource), new Key($resource), new Key($resource)];
        $store->saveRead($key1);
        $store->saveRead($key2);
        $this->assertTrue($store->exists($key1));
        $this->assertTrue($store->exists($key2));
        try {
            $store->save($key3);
            $this->fail('a writer beside readers');
        } catch (LockConflictedException) {
        }
        try {
            $store->save($key1);
            $this->fail('an upgrade beside another reader');
        } catch (LockConflictedException) {
        }
        $store->delete($key2);
        $store->save($key1);                                 // the only reader upgrades
        $this->assertTrue($store->exists($key1));
        try {
            $store->saveRead($key2);
            $this->fail('a reader beside the writer');
        } catch (LockConflictedException) {
        }
        $store->saveRead($key1);                             // downgrade: others may read again
        $store->saveRead($key2);
        $this->assertTrue($store->exists($key1));
        $this->assertTrue($store->exists($key2));
        $store->delete($key1);
        $store->delete($key2);
        $this->assertFalse($store->exists($key1));
        $this->assertSame(0, Support::redis()->exists($resource));

        // A blocking upgrade waits for the other reader and is woken by its release.
        $factory = new LockFactory($store);
        $rounds = [];
        for ($i = 0; $i < 5; $i++) {
            $mine = $factory->createLock($resource, 30);
            $this->assertTrue($mine->acquireRead());
            $rounds[] = Support::wakeLag(<<<'PHP'
                $lock = (new Symfony\Component\Lock\LockFactory(new RedisLock\Bridge\Symfony\LockStore($argv[1])))->createLock($argv[2], 30);
                $lock->acquireRead() or exit(1);
                echo "held\n";
                fgets(STDIN);                     // the waiter starts now
                usleep(300000);
                $t = microtime(true);
                $lock->release();
                echo $t, "\n";
                PHP, [Support::dsn(), $resource], fn() => $this->assertTrue($mine->acquire(true)));
            $this->assertTrue($mine->isAcquired());
            $mine->release();
        }
        $this->assertInstanceOf(BlockingSharedLockStoreInterface::class, $store, 'the upgrade waits in the store');
        Support::assertWoken($rounds, Support::RECHECK, 'woken by the release (see testBlockingWaitWakesOnRelease)');
    }

    public function testFencingOnRequest(): void
    {
        $store = $this->store(['fencing' => true]);
        $name = Support::name('fenced');
        $numbers = [];
        for ($i = 0; $i < 3; $i++) {
            $key = new Key($name);
            $store->save($key);
            $numbers[] = $store->getFencingToken($key);
            $store->delete($key);
        }
        $this->assertIsInt($numbers[0]);
        $this->assertTrue($numbers[0] < $numbers[1] && $numbers[1] < $numbers[2], implode(' ', $numbers));
        $key = new Key($name);
        $this->store()->save($key);
        $this->assertNull($this->store()->getFencingToken($key), 'off by default');
    }

    public function testBadInput(): void
    {
        foreach ([0.0, -1.0, NAN, INF] as $ttl) {
            try {
                new LockStore(Support::dsn(), $ttl);
                $this->fail("initial TTL $ttl accepted");
            } catch (InvalidTtlException) {
            }
        }
        foreach (['nonsense://x', ['dsn' => Support::dsn(), 'no_such_option' => 1], ['read_timeout' => 'soon'], ['auto_release' => 'yes']] as $bad) {
            try {
                new LockStore($bad);
                $this->fail('accepted ' . json_encode($bad));
            } catch (InvalidArgumentException $e) {
                $this->assertNotSame('', $e->getMessage());
            }
        }
        $lock = (new LockFactory($this->store()))->createLock(Support::name('ttl'), 10);
        $this->assertTrue($lock->acquire());
        try {
            $lock->refresh(1e15);
            $this->fail('a TTL of 10^15 s accepted');
        } catch (LockAcquiringException $e) {
            $this->assertInstanceOf(InvalidArgumentException::class, $e->getPrevious());
        }
        $lock->release();
        // Redis unreachable: Symfony's storage exception, wrapped by the Lock as Symfony does.
        $store = new LockStore(['dsn' => 'redis://127.0.0.1:1', 'connect_timeout' => 0.2]);
        try {
            $store->save(new Key('x'));
            $this->fail('saved without a server');
        } catch (LockStorageException $e) {
            $this->assertStringContainsString('127.0.0.1:1', $e->getMessage());
        }
        $this->expectException(LockAcquiringException::class);
        (new LockFactory($store))->createLock('x')->acquire();
    }
}
