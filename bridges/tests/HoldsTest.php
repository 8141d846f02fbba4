<?php

namespace RedisLock\Bridge\Tests;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Holds;

/** The table of holds a fatal error releases: bounded, and never a parent's in a child. */
final class HoldsTest extends TestCase
{
    private static function tableSize(): int
    {
        return \count((new \ReflectionClass(Holds::class))->getStaticPropertyValue('holds'));
    }

    public function testHoldsWhoseLeaseEndedAreSweptOut(): void
    {
        $released = 0;
        for ($i = 0; $i < 5000; $i++) {
            Holds::add("test:short:$i", 0.001, function () use (&$released) { $released++; });
            if ($i % 1000 === 999) {
                usleep(2000);
            }
        }
        $this->assertLessThan(2100, self::tableSize(), 'ended leases are dropped, not kept for a fatal error');
        for ($i = 0; $i < 5000; $i++) {
            Holds::forget("test:short:$i");
        }
        $this->assertSame(0, $released);
    }

    public function testAForkedChildNeverReleasesItsParentsLocks(): void
    {
        Support::needsLaravel();
        $name = Support::name('fork');
        [$rc, $out, $err] = Support::run(<<<'PHP'
            RedisLock\Bridge\Tests\Support::laravel();
            $lock = Illuminate\Support\Facades\Cache::lock($argv[1], 30);
            $lock->get() or exit(1);
            $pid = pcntl_fork();
            if ($pid === 0) {
                ini_set('memory_limit', '16M');
                $waste = str_repeat('x', 64 << 20);   // the child dies of a fatal error
            }
            pcntl_waitpid($pid, $status);
            echo $lock->isOwnedByCurrentProcess() ? 'held' : 'lost';
            PHP, [$name]);
        $this->assertSame(0, $rc, $err);
        $this->assertStringContainsString('Allowed memory size', $err);
        $this->assertSame('held', $out);
    }
}
