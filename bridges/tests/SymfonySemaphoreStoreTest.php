<?php

namespace RedisLock\Bridge\Tests;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\SemaphoreStore;
use Symfony\Component\Semaphore\Exception\InvalidArgumentException;
use Symfony\Component\Semaphore\Exception\SemaphoreAcquiringException;
use Symfony\Component\Semaphore\Exception\SemaphoreExpiredException;
use Symfony\Component\Semaphore\Key;
use Symfony\Component\Semaphore\SemaphoreFactory;

final class SymfonySemaphoreStoreTest extends TestCase
{
    private function store(array $options = []): SemaphoreStore
    {
        return new SemaphoreStore(['dsn' => Support::dsn()] + $options);
    }

    public function testLimit(): void
    {
        $store = $this->store();
        $resource = Support::name('limit');
        [$k1, $k2, $k3] = [new Key($resource, 2), new Key($resource, 2), new Key($resource, 2)];
        $store->save($k1, 10);
        $store->save($k1, 10);                      // saving twice renews, takes nothing more
        $store->save($k2, 10);
        $this->assertTrue($store->exists($k1));
        $this->assertTrue($store->exists($k2));
        try {
            $store->save($k3, 10);
            $this->fail('a third holder of two permits');
        } catch (SemaphoreAcquiringException $e) {
            $this->assertSame("The semaphore \"$resource\" could not be acquired: the script return false.", $e->getMessage());
        }
        $this->assertFalse($store->exists($k3));
        $store->delete($k1);
        $this->assertFalse($store->exists($k1));
        $store->save($k3, 10);
        $this->assertTrue($store->exists($k3));
        $store->delete($k2);
        $store->delete($k3);
        $this->assertSame(2, (new \Semaphore($resource, 2, 0, 1, ['dsn' => Support::dsn()]))->available());
    }

    public function testWeights(): void
    {
        $factory = new SemaphoreFactory($this->store());
        $resource = Support::name('weights');
        $heavy = $factory->createSemaphore($resource, 4, 3, 10);
        $light = $factory->createSemaphore($resource, 4, 1, 10);
        $other = $factory->createSemaphore($resource, 4, 2, 10);
        $this->assertTrue($heavy->acquire());
        $this->assertTrue($light->acquire());
        $this->assertFalse($other->acquire());
        $heavy->release();
        $this->assertTrue($other->acquire());
        $this->assertFalse($heavy->acquire());
        $light->release();
        $other->release();
        $this->assertTrue($heavy->acquire());
        $heavy->release();
    }

    public function testNeverAboveTheLimitAcrossProcesses(): void
    {
        $resource = Support::name('processes');
        $gauge = Support::name('gauge');
        $procs = [];
        for ($i = 0; $i < 6; $i++) {
            $procs[] = Support::start(<<<'PHP'
                // A read timeout of 5 s, not 0.5: this is about the limit, and 6 processes
                // under a CPU hog can leave Redis unscheduled for longer than 0.5 s.
                $store = new RedisLock\Bridge\Symfony\SemaphoreStore(['dsn' => $argv[1], 'read_timeout' => 5]);
                $factory = new Symfony\Component\Semaphore\SemaphoreFactory($store);
                $redis = RedisLock\Bridge\Tests\Support::redis();
                $sem = $factory->createSemaphore($argv[2], 2, 1, 10);
                for ($done = 0; $done < 15;) {
                    if (!$sem->acquire()) { usleep(1000); continue; }
                    $now = $redis->incr($argv[3]);
                    $redis->eval("if tonumber(ARGV[1]) > tonumber(redis.call('GET', KEYS[1]) or 0) then redis.call('SET', KEYS[1], ARGV[1]) end", [$argv[3] . ':max', $now], 1);
                    usleep(2000);
                    $redis->decr($argv[3]);
                    $sem->release();
                    $done++;
                }
                PHP, [Support::dsn(), $resource, $gauge]);
        }
        foreach ($procs as [$proc, $pipes]) {
            fclose($pipes[0]);
            $err = stream_get_contents($pipes[2]);
            $this->assertSame(0, proc_close($proc), $err);
        }
        $max = (int) Support::redis()->get("$gauge:max");
        $this->assertSame(2, $max, 'at most two holders at once, and both permits used');
    }

    public function testExpiryAndPutOff(): void
    {
        $store = $this->store();
        $resource = Support::name('expiry');
        $key = new Key($resource, 1);
        $store->save($key, 0.2);
        $store->putOffExpiration($key, 0.5);
        usleep(300000);
        $this->assertTrue($store->exists($key), 'put off past its first lease');
        usleep(300000);
        $this->assertFalse($store->exists($key));
        $other = new Key($resource, 1);
        $store->save($other, 10);                   // the expired hold's permit came back
        try {
            $store->putOffExpiration($key, 10);
            $this->fail('an expired hold put off');
        } catch (SemaphoreExpiredException $e) {
            $this->assertSame("The semaphore \"$resource\" has expired: the script returns a positive number.", $e->getMessage());
        }
        $never = new Key(Support::name('never'), 4, 2);
        $this->expectException(SemaphoreExpiredException::class);
        $store->putOffExpiration($never, 20);
    }

    public function testSerialisedKeyAcrossProcesses(): void
    {
        $resource = Support::name('serialised');
        [$rc, $out] = Support::run(<<<'PHP'
            $key = new Symfony\Component\Semaphore\Key($argv[2], 1);
            $sem = (new Symfony\Component\Semaphore\SemaphoreFactory(new RedisLock\Bridge\Symfony\SemaphoreStore($argv[1])))
                ->createSemaphoreFromKey($key, 30, false);
            $sem->acquire() or exit(1);
            echo serialize($key);
            PHP, [Support::dsn(), $resource]);
        $this->assertSame(0, $rc);
        $store = $this->store();
        $this->assertFalse((new SemaphoreFactory($store))->createSemaphore($resource, 1)->acquire(), 'still held after its process ended');
        $key = unserialize($out);
        $this->assertTrue($store->exists($key));
        $store->putOffExpiration($key, 60);
        $store->delete($key);
        $this->assertFalse($store->exists($key));
        $this->assertTrue((new SemaphoreFactory($store))->createSemaphore($resource, 1)->acquire());
    }

    public function testFatalErrorReleases(): void
    {
        $resource = Support::name('fatal');
        [$rc, , $err] = Support::run(<<<'PHP'
            $sem = (new Symfony\Component\Semaphore\SemaphoreFactory(new RedisLock\Bridge\Symfony\SemaphoreStore($argv[1])))
                ->createSemaphore($argv[2], 2, 2, 30, false);
            $sem->acquire() or exit(1);
            ini_set('memory_limit', '16M');
            $waste = str_repeat('x', 64 << 20);
            PHP, [Support::dsn(), $resource]);
        $this->assertSame(255, $rc);
        $this->assertStringContainsString('Allowed memory size', $err);
        $this->assertSame(2, (new \Semaphore($resource, 2, 0, 1, ['dsn' => Support::dsn()]))->available());
    }

    public function testBadInput(): void
    {
        $store = $this->store();
        try {
            $store->save(new Key(Support::name('ttl'), 1), -1);
            $this->fail('a negative TTL accepted');
        } catch (InvalidArgumentException $e) {
            $this->assertSame("The TTL should be greater than 0, '-1' given.", $e->getMessage());
        }
        try {
            $store->putOffExpiration(new Key(Support::name('ttl'), 1), -0.5);
            $this->fail('a negative TTL accepted');
        } catch (InvalidArgumentException) {
        }
        try {
            $store->save(new Key(Support::name('ttl'), 1), 1e15);
            $this->fail('a TTL of 10^15 s accepted');
        } catch (InvalidArgumentException) {
        }
        try {
            new SemaphoreStore(['servers' => [Support::dsn(), Support::dsn(), Support::dsn()]]);
            $this->fail('Redlock accepted');
        } catch (InvalidArgumentException) {
        }
        try {
            new SemaphoreStore(['bogus' => true]);
            $this->fail('an unknown option accepted');
        } catch (InvalidArgumentException) {
        }
        // Holders that disagree on the limit: the extension refuses, as a Symfony failure.
        $resource = Support::name('mismatch');
        $store->save(new Key($resource, 2), 10);
        $this->expectException(\LockException::class);
        $store->save(new Key($resource, 3), 10);
    }
}
