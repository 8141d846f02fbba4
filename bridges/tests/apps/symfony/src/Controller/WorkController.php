<?php

namespace App\Controller;

use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\Lock\LockFactory;

/**
 * A page that takes locks: "work" through the framework's LockFactory, held 20 ms;
 * then "busy" (which the test holds) with the extension's own class, waited for up to
 * ?wait= seconds.
 */
final class WorkController
{
    public function __construct(private readonly LockFactory $locks, private readonly string $prefix)
    {
    }

    public function __invoke(Request $request): Response
    {
        $work = $this->locks->createLock($this->prefix . 'work:1', 30);
        $work->acquire(true);
        usleep(20000);
        $work->release();
        $busy = new \Lock($this->prefix . 'busy:1', (float) $request->query->get('wait', '0.2'), 30, ['dsn' => getenv('REDIS_LOCK_TEST_DSN')]);
        $got = $busy->addLock();
        return new Response('<html><body>' . ($got === false ? 'busy was busy' : 'got busy') . '</body></html>');
    }
}
