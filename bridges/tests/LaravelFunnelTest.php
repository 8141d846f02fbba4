<?php

namespace RedisLock\Bridge\Tests;

use Illuminate\Support\Facades\Cache;
use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Laravel\Funnel;

/** Cache::funnel() on a redis_lock store: the extension's Semaphore, on every Laravel line. */
final class LaravelFunnelTest extends TestCase
{
    protected function setUp(): void
    {
        Support::laravel();
    }

    /** Laravel 13's exception where it exists, Redis::funnel()'s before it. */
    private static function timeoutClass(): string
    {
        return class_exists(\Illuminate\Cache\Limiters\LimiterTimeoutException::class)
            ? \Illuminate\Cache\Limiters\LimiterTimeoutException::class
            : \Illuminate\Contracts\Redis\LimiterTimeoutException::class;
    }

    public function testRunsInASlotAndGivesItBack(): void
    {
        $name = Support::name('funnel');
        $funnel = Cache::funnel($name);
        $this->assertInstanceOf(Funnel::class, $funnel, 'the redis_lock store\'s own funnel');
        $redis = Support::redis();
        $key = Support::laravelKey($name);
        $seen = null;
        $result = $funnel->limit(3)->releaseAfter(20)->block(1)->then(function () use ($redis, $key, &$seen) {
            $seen = [min(1, $redis->exists(...Support::semaphoreKeys($key))), Support::semaphorePermits($redis, $key)];
            return 'done';
        });
        $this->assertSame('done', $result, 'then() returns what the callback returns');
        $this->assertSame(1, $seen[0], 'the Semaphore\'s key, under the connection and cache prefixes, while running');
        $this->assertSame('3', $seen[1], 'limit(3): a semaphore of 3 permits');
        $this->assertSame(0, $redis->exists(...Support::semaphoreKeys($key)), 'the slot given back');

        // The callback's exception: the slot is given back and the exception passes.
        try {
            Cache::funnel($name)->limit(3)->then(function () { throw new \DomainException('boom'); });
            $this->fail('the callback\'s exception was swallowed');
        } catch (\DomainException $e) {
            $this->assertSame('boom', $e->getMessage());
        }
        $this->assertSame(0, $redis->exists(...Support::semaphoreKeys($key)));
    }

    public function testFullFunnelTimesOut(): void
    {
        $name = Support::name('full');
        $sem = new \Semaphore(Support::laravelKey($name), 2, 0, 30, ['dsn' => Support::dsn()]);
        $a = $sem->acquire();
        $b = $sem->acquire();
        $this->assertIsString($a);
        $this->assertIsString($b);
        $ran = false;
        $got = Cache::funnel($name)->limit(2)->block(0)->then(function () use (&$ran) { $ran = true; }, fn($e) => $e);
        $this->assertFalse($ran, 'no slot: the callback does not run');
        $this->assertInstanceOf(self::timeoutClass(), $got, 'the failure callback gets Laravel\'s exception');
        $t = microtime(true);
        try {
            Cache::funnel($name)->limit(2)->block(0.3)->then(fn() => null);
            $this->fail('then() ran with the funnel full');
        } catch (\Exception $e) {
            $this->assertInstanceOf(self::timeoutClass(), $e);
        }
        $waited = microtime(true) - $t;
        $this->assertGreaterThanOrEqual(0.29, $waited, 'waited for its block()');
        $this->assertLessThan(1.5, $waited);
        $sem->release($a);
        $this->assertSame('in', Cache::funnel($name)->limit(2)->block(0)->then(fn() => 'in'), 'a slot freed');
        $sem->release($b);
    }

    public function testAWaiterIsWokenByTheRelease(): void
    {
        $name = Support::name('wake');
        $rounds = [];
        for ($i = 0; $i < 5; $i++) {
            $rounds[] = Support::wakeLag(<<<'PHP'
                RedisLock\Bridge\Tests\Support::laravel();
                Illuminate\Support\Facades\Cache::funnel($argv[1])->limit(1)->then(function () {
                    echo "held\n";
                    fgets(STDIN);                 // the waiter starts now
                    usleep(300000);
                    echo microtime(true), "\n";   // the slot is given back right after
                });
                PHP, [$name], fn() => $this->assertSame('ok', Cache::funnel($name)->limit(1)->block(5)->then(fn() => 'ok')));
        }
        // Laravel's funnels (Redis::funnel() and Laravel 13's Cache::funnel()) try again
        // every 250 ms (a usleep() in their limiters), the module re-checks every 1 s
        // were the wake lost: released 300 ms into the wait, a woken waiter takes the
        // slot in under half the time such a poller would, as measured per round (see
        // SymfonyLockStoreTest::testBlockingWaitWakesOnRelease).
        Support::assertWoken($rounds, 0.25, 'woken by the slot given back, not polling');
    }

    public function testAKilledJobGivesItsSlotBack(): void
    {
        // What TimedOutJobs does at a job's timeout: the funnel's slot is in the
        // process's table of holds, and goes back with it.
        $name = Support::name('killed');
        $redis = Support::redis();
        $key = Support::laravelKey($name);
        $seen = Cache::funnel($name)->limit(2)->then(function () use ($redis, $key) {
            $before = min(1, $redis->exists(...Support::semaphoreKeys($key)));
            \RedisLock\Bridge\Holds::releaseAll();
            return [$before, $redis->exists(...Support::semaphoreKeys($key))];
        });
        $this->assertSame([1, 0], $seen, 'held, then given back by the table');
        // With 'auto_release' => false the table leaves it to its lease.
        Support::laravel(['auto_release' => false]);
        $seen = Cache::funnel($name)->limit(2)->then(function () use ($redis, $key) {
            \RedisLock\Bridge\Holds::releaseAll();
            return min(1, $redis->exists(...Support::semaphoreKeys($key)));
        });
        $this->assertSame(1, $seen, 'auto_release => false: still held');
        $this->assertSame(0, $redis->exists(...Support::semaphoreKeys($key)), 'and given back when the callback ended');
    }

    public function testALeaseEndsADeadHoldersSlot(): void
    {
        $name = Support::name('lease');
        // The holder dies without giving its slot back (SIGKILL), its lease 0.5 s.
        [$proc, $pipes] = Support::start(<<<'PHP'
            RedisLock\Bridge\Tests\Support::laravel();
            Illuminate\Support\Facades\Cache::funnel($argv[1])->limit(1)->releaseAfter(1)->then(function () {
                echo "held\n";
                sleep(30);
            });
            PHP, [$name]);
        $this->assertSame("held\n", fgets($pipes[1]));
        proc_terminate($proc, 9);
        proc_close($proc);
        $t = microtime(true);
        $this->assertSame('mine', Cache::funnel($name)->limit(1)->block(5)->then(fn() => 'mine'));
        // When the 1 s lease (taken before "held") ends, at the latest at the module's
        // re-check after it, with room for a busy machine; not at the end of block(5),
        // as a waiter blind to leases would be.
        $this->assertLessThan(1.0 + Support::RECHECK + 0.5, microtime(true) - $t, 'the slot came back when its 1 s lease ended');
    }

    public function testBadInput(): void
    {
        $name = Support::name('bad');
        foreach ([null, 0, -1, '2'] as $limit) {
            try {
                Cache::funnel($name)->limit($limit)->then(fn() => $this->fail('ran'));
                $this->fail('limit ' . var_export($limit, true) . ' accepted');
            } catch (\InvalidArgumentException $e) {
                $this->assertStringContainsString('limit()', $e->getMessage());
            }
        }
        try {
            Cache::funnel($name)->limit(2)->block(-1)->then(fn() => $this->fail('ran'));
            $this->fail('a negative block() accepted');
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString('timeOut', $e->getMessage());
        }
        // A funnel in use with another limit: the extension's error, nothing taken.
        $sem = new \Semaphore(Support::laravelKey($name), 2, 0, 30, ['dsn' => Support::dsn()]);
        $token = $sem->acquire();
        try {
            Cache::funnel($name)->limit(3)->block(0)->then(fn() => $this->fail('ran'));
            $this->fail('a funnel of 2 used with limit(3)');
        } catch (\LockException $e) {
            $this->assertStringContainsString('not 3', $e->getMessage());
        }
        $this->assertSame(1, $sem->available(), 'nothing taken');
        $sem->release($token);
        // Redlock (several independent servers) has no semaphore.
        Support::laravel(['servers' => [Support::dsn(), Support::dsn(), Support::dsn()]]);
        $this->expectException(\InvalidArgumentException::class);
        Cache::funnel($name)->limit(1)->then(fn() => null);
    }
}
