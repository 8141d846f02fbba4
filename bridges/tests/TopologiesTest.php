<?php

namespace RedisLock\Bridge\Tests;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Symfony\LockStore;
use RedisLock\Bridge\Symfony\SemaphoreStore;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

/** The bridges on Sentinel and on Redis Cluster, through the extension's options. */
final class TopologiesTest extends TestCase
{
    public static function setUpBeforeClass(): void
    {
        require_once __DIR__ . '/../../php-tests/_helper.inc';
    }

    private function exercise(array $options, string $what): void
    {
        // Timeouts of 5 s, not 0.5: this is about the options reaching the topologies,
        // and nodes just started under a CPU hog can take longer than 0.5 s to answer.
        $options += ['connect_timeout' => 5, 'read_timeout' => 5];
        $factory = new LockFactory(new LockStore($options));
        $name = Support::name($what);
        $a = $factory->createLock($name, 10);
        $b = $factory->createLock($name, 10);
        $this->assertTrue($a->acquire());
        $this->assertFalse($b->acquire());
        $a->refresh(20);
        $this->assertGreaterThan(15, $a->getRemainingLifetime());
        $a->release();
        $this->assertTrue($b->acquireRead());
        $b->release();

        $semaphores = new SemaphoreFactory(new SemaphoreStore($options));
        $s1 = $semaphores->createSemaphore($name . ':sem', 2, 2);
        $s2 = $semaphores->createSemaphore($name . ':sem', 2, 1);
        $this->assertTrue($s1->acquire());
        $this->assertFalse($s2->acquire());
        $s1->release();
        $this->assertTrue($s2->acquire());
        $s2->release();
    }

    public function testSentinel(): void
    {
        $set = rl_start_sentinel_set();
        try {
            $this->exercise(['sentinels' => array_column($set['sentinels'], 'dsn'), 'service' => 'mymaster'], 'sentinel');
        } finally {
            rl_stop_sentinel_set($set);
        }
    }

    public function testCluster(): void
    {
        $cluster = rl_start_cluster();
        try {
            $this->exercise(['cluster' => $cluster['seeds']], 'cluster');
        } finally {
            rl_stop_cluster($cluster);
        }
    }
}
