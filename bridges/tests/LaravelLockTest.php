<?php

namespace RedisLock\Bridge\Tests;

use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Support\Facades\Cache;
use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Laravel\RedisLock;

final class LaravelLockTest extends TestCase
{
    protected function setUp(): void
    {
        Support::laravel();
    }

    public function testAcquireAndReleaseWithLaravelsKeys(): void
    {
        $name = Support::name('acquire');
        $lock = Cache::lock($name, 10);
        $this->assertInstanceOf(RedisLock::class, $lock);
        $this->assertSame('default', $lock->getConnectionName(), 'the store\'s lock_connection');
        $this->assertTrue($lock->get());
        $this->assertFalse(Cache::lock($name, 10)->get());
        $this->assertFalse($lock->get(), 'held, by this owner too: false, as Laravel\'s');
        $redis = Support::redis();
        $key = Support::laravelKey($name);
        $this->assertSame($lock->owner(), $redis->get($key), 'Laravel\'s key and value');
        $this->assertGreaterThan(9000, $redis->pttl($key));
        // Side by side with Laravel's own RedisLock on the same name.
        $this->assertFalse(Cache::store('redis')->lock($name, 10)->get());
        $this->assertTrue($lock->release());
        $this->assertFalse($lock->release());
        $this->assertSame(0, $redis->exists($key));
        $theirs = Cache::store('redis')->lock($name, 10);
        $this->assertTrue($theirs->get());
        $this->assertFalse(Cache::lock($name, 10)->get());
        $this->assertTrue(Cache::restoreLock($name, $theirs->owner())->isOwnedByCurrentProcess());
        $this->assertTrue(Cache::restoreLock($name, $theirs->owner())->release(), 'ours releases what Laravel\'s took');
        $this->assertSame(0, $redis->exists($key));
        // Cached values stay on the cache connection (database 1); no fencing counter.
        Cache::put("$name:value", 'v', 10);
        $redis->select(1);
        $this->assertSame(1, $redis->exists(Support::laravelKey("$name:value")));
        $redis->select(0);
        $this->assertSame([], $redis->keys("*$name*"));
    }

    public function testBlockWakesOnRelease(): void
    {
        $name = Support::name('block');
        $rounds = [];
        for ($i = 0; $i < 5; $i++) {
            $lock = Cache::lock($name, 30);
            $rounds[] = Support::wakeLag(<<<'PHP'
                RedisLock\Bridge\Tests\Support::laravel();
                $lock = Illuminate\Support\Facades\Cache::lock($argv[1], 30);
                $lock->get() or exit(1);
                echo "held\n";
                fgets(STDIN);                     // the waiter starts now
                usleep(300000);
                $t = microtime(true);
                $lock->release();
                echo $t, "\n";
                PHP, [$name], fn() => $this->assertTrue($lock->block(5)));
            $lock->release();
        }
        // Laravel's own block() polls (every 250 ms, its lock's sleepMilliseconds), the
        // module re-checks every 1 s were the wake lost. The release comes 300 ms into
        // the wait: a 250 ms poller would take the lock about 200 ms after it, as
        // measured per round, a woken waiter under half of that (see
        // SymfonyLockStoreTest::testBlockingWaitWakesOnRelease).
        $this->assertSame(\RedisLock\Bridge\Laravel\RedisLock::class, (new \ReflectionMethod($lock, 'block'))->getDeclaringClass()->getName(),
            'block() is the bridge\'s, not Laravel\'s polling one');
        Support::assertWoken($rounds, self::laravelPoll(), 'woken by the release, not polling');
    }

    /** How often Laravel's own block() tries again, in seconds: its locks' sleepMilliseconds. */
    private static function laravelPoll(): float
    {
        return (new \ReflectionProperty(\Illuminate\Cache\Lock::class, 'sleepMilliseconds'))->getDefaultValue() / 1000;
    }

    public function testBlockTimesOut(): void
    {
        $name = Support::name('timeout');
        $this->assertTrue(Cache::lock($name, 10)->get());
        $t = microtime(true);
        try {
            Cache::lock($name, 10)->block(0.4);
            $this->fail('block() returned while the lock was held');
        } catch (LockTimeoutException) {
        }
        $waited = microtime(true) - $t;
        $this->assertGreaterThanOrEqual(0.39, $waited);
        $this->assertLessThan(1.5, $waited);
        $this->expectException(LockTimeoutException::class);
        Cache::lock($name, 10)->block(0);
    }

    public function testBlockWithCallback(): void
    {
        $name = Support::name('callback');
        $this->assertSame('taylor', Cache::lock($name, 10)->block(1, fn() => 'taylor'));
        $this->assertSame('otwell', Cache::lock($name, 10)->get(fn() => 'otwell'));
        try {
            Cache::lock($name, 10)->block(1, function () { throw new \RuntimeException('failed'); });
        } catch (\RuntimeException) {
        }
        $this->assertTrue(Cache::lock($name, 1)->get(), 'released after the callback threw');
    }

    public function testOwnersRestoreAndForceRelease(): void
    {
        $name = Support::name('owners');
        $first = Cache::lock($name, 10);
        $this->assertTrue($first->isOwnedBy(null));
        $this->assertTrue($first->get());
        $this->assertTrue($first->isOwnedBy($first->owner()));
        $other = Cache::restoreLock($name, 'other_owner');
        $this->assertFalse($other->isOwnedByCurrentProcess());
        $this->assertFalse($other->release());
        $this->assertTrue(Cache::restoreLock($name, $first->owner())->isOwnedByCurrentProcess());

        // Released by owner from another process.
        [$rc, $out, $err] = Support::run(<<<'PHP'
            RedisLock\Bridge\Tests\Support::laravel();
            var_export(Illuminate\Support\Facades\Cache::restoreLock($argv[1], $argv[2])->release());
            PHP, [$name, $first->owner()]);
        $this->assertSame(0, $rc, $err);
        $this->assertSame('true', $out);
        $this->assertFalse($first->isOwnedByCurrentProcess());

        // A caller-chosen owner, binary included.
        $mine = Cache::lock($name, 10, "job\0:42");
        $this->assertSame("job\0:42", $mine->owner());
        $this->assertTrue($mine->get());
        $this->assertSame("job\0:42", Support::redis()->get(Support::laravelKey($name)));
        Cache::lock($name)->forceRelease();
        $this->assertSame(0, Support::redis()->exists(Support::laravelKey($name)));
        $this->assertFalse($mine->isOwnedByCurrentProcess());
    }

    public function testForceReleaseWakesAWaiter(): void
    {
        $name = Support::name('force');
        $rounds = [];
        for ($i = 0; $i < 5; $i++) {
            $this->assertTrue(Cache::lock($name, 30)->get());
            [$proc, $pipes] = Support::start(<<<'PHP'
                RedisLock\Bridge\Tests\Support::laravel();
                echo "waiting\n";
                $lock = Illuminate\Support\Facades\Cache::lock($argv[1], 30);
                $lock->block(10) or exit(1);
                echo microtime(true), "\n";
                $lock->release();
                PHP, [$name]);
            $this->assertSame("waiting\n", fgets($pipes[1]));
            $started = microtime(true);
            usleep(300000);
            $t = microtime(true);
            Cache::lock($name)->forceRelease();
            $woke = (float) fgets($pipes[1]);
            $this->assertSame(0, proc_close($proc), 'the waiter got the lock');
            $rounds[] = [$woke - $t, $t - $started];
        }
        // As in testBlockWakesOnRelease: woken, not polling (250 ms) nor re-checking (1 s).
        Support::assertWoken($rounds, self::laravelPoll(), 'woken by the forced release, not polling');
    }

    public function testNoExpiryAndLeases(): void
    {
        $name = Support::name('forever');
        $redis = Support::redis();
        $this->assertTrue(Cache::lock($name)->get());
        $this->assertSame(-1, $redis->pttl(Support::laravelKey($name)), 'seconds = 0: no expiry');
        Cache::lock($name)->forceRelease();

        $first = Cache::lock($name, 1);
        $this->assertTrue($first->get());
        usleep(1100000);
        $second = Cache::lock($name, 10);
        $this->assertTrue($second->get(), 'the first lease ran out');
        $this->assertFalse($first->release(), 'a stale owner releases nothing');
        $this->assertFalse(Cache::lock($name)->get());
        $second->release();
    }

    public function testRefresh(): void
    {
        // Laravel 13.16's refresh(), on every Laravel line: the lease from now, the
        // lock's own by default, 0 for none; never for another owner or after expiry.
        $name = Support::name('refresh');
        $redis = Support::redis();
        $key = Support::laravelKey($name);
        $lock = Cache::lock($name, 2);
        $this->assertTrue($lock->get());
        $this->assertTrue($lock->refresh(30));
        $this->assertGreaterThan(29000, $redis->pttl($key), 'refresh(30): a 30 s lease');
        $this->assertTrue($lock->refresh());
        $this->assertLessThanOrEqual(2000, $redis->pttl($key), 'refresh(): the lock\'s own 2 s');
        $this->assertGreaterThan(1000, $redis->pttl($key));
        $this->assertTrue($lock->refresh(0));
        $this->assertSame(-1, $redis->pttl($key), 'refresh(0): no expiry');
        $this->assertFalse(Cache::restoreLock($name, 'someone else')->refresh(10), 'another owner');
        $this->assertSame(-1, $redis->pttl($key), 'another owner changed nothing');
        $this->assertTrue($lock->release());
        $this->assertFalse($lock->refresh(10), 'released: nothing to refresh');
        $this->assertSame(0, $redis->exists($key), 'and nothing brought back');

        $forever = Cache::lock($name);
        $this->assertTrue($forever->get());
        $this->assertTrue($forever->refresh(), 'taken with 0 seconds: refresh() keeps it without expiry');
        $this->assertSame(-1, $redis->pttl($key));
        $this->assertTrue($forever->refresh(5));
        $this->assertGreaterThan(4000, $redis->pttl($key));
        $forever->release();

        $short = Cache::lock($name, 1);
        $this->assertTrue($short->get());
        usleep(1100000);
        $this->assertFalse($short->refresh(10), 'an expired lease is not brought back');
        $this->assertSame(0, $redis->exists($key));
    }

    public function testFatalErrorReleases(): void
    {
        $redis = Support::redis();
        $code = <<<'PHP'
            RedisLock\Bridge\Tests\Support::laravel($argv[2] === 'keep' ? ['auto_release' => false] : []);
            Illuminate\Support\Facades\Cache::lock($argv[1], 30)->get() or exit(1);
            Illuminate\Support\Facades\Cache::lock($argv[1] . ':block', 30)->block(1, function () {
                ini_set('memory_limit', '16M');
                $waste = str_repeat('x', 64 << 20);
            });
            PHP;
        $name = Support::name('fatal');
        [$rc, , $err] = Support::run($code, [$name, 'release']);
        $this->assertSame(255, $rc);
        $this->assertStringContainsString('Allowed memory size', $err);
        $this->assertSame(0, $redis->exists(Support::laravelKey($name)));
        $this->assertSame(0, $redis->exists(Support::laravelKey("$name:block")));

        $name = Support::name('kept');
        [$rc] = Support::run($code, [$name, 'keep']);
        $this->assertSame(255, $rc);
        $this->assertSame(1, $redis->exists(Support::laravelKey($name)));
        $this->assertSame(1, $redis->exists(Support::laravelKey("$name:block")));

        // A normal end leaves locks to their leases, as Laravel's do (unique jobs rely on it).
        $name = Support::name('normal');
        [$rc] = Support::run(<<<'PHP'
            RedisLock\Bridge\Tests\Support::laravel();
            Illuminate\Support\Facades\Cache::lock($argv[1], 30)->get() or exit(1);
            PHP, [$name]);
        $this->assertSame(0, $rc);
        $this->assertSame(1, $redis->exists(Support::laravelKey($name)));
    }

    public function testBadInput(): void
    {
        foreach (['', str_repeat('o', 257)] as $owner) {
            try {
                Cache::lock(Support::name('bad'), 10, $owner);
                $this->fail('owner of ' . strlen($owner) . ' bytes accepted');
            } catch (\InvalidArgumentException $e) {
                $this->assertStringContainsString('owner', $e->getMessage());
            }
        }
        try {
            Cache::lock(Support::name('bad'), 10 ** 15)->get();
            $this->fail('a lease of 10^15 s accepted');
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString('lockOut', $e->getMessage());
        }
        $this->assertTrue(Cache::lock($name = Support::name('long'), 10)->block(PHP_INT_MAX), 'any wait is allowed');
        Cache::lock($name)->forceRelease();
        Support::laravel(['no_such_option' => 1]);
        try {
            Cache::lock(Support::name('bad'), 10);
            $this->fail('an unknown lock option accepted');
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString('no_such_option', $e->getMessage());
        }
        // Redis unreachable: the extension's exception, naming the address.
        Support::laravel(['dsn' => 'redis://127.0.0.1:1', 'connect_timeout' => 0.2]);
        $this->expectException(\LockConnectionException::class);
        $this->expectExceptionMessage('127.0.0.1:1');
        Cache::lock(Support::name('bad'), 10)->get();
    }
}
