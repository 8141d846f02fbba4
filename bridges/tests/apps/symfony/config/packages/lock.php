<?php

// The bridge's stores, as docs/symfony.md ("With FrameworkBundle") tells users to set them up.

use RedisLock\Bridge\Symfony\LockStore;
use RedisLock\Bridge\Symfony\SemaphoreStore;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

use function Symfony\Component\DependencyInjection\Loader\Configurator\service;

return static function (ContainerConfigurator $container): void {
    $container->services()
        ->set(LockStore::class)->args(['%env(REDIS_LOCK_TEST_DSN)%'])
        ->set(SemaphoreStore::class)->args(['%env(REDIS_LOCK_TEST_DSN)%'])
        // FrameworkBundle's `lock` option takes a dsn or a connection, never a store
        // service: its default factory, which lock.factory, LockFactory autowiring and
        // Messenger's DeduplicateMiddleware use, gets the bridge's store instead.
        ->set('lock.default.factory', LockFactory::class)->args([service(LockStore::class)])
        // Its `semaphore` option takes only a Redis dsn or connection (and 5.4 has none):
        // the factory is a service of its own.
        ->set(SemaphoreFactory::class)->args([service(SemaphoreStore::class)]);

    $container->extension('framework', ['lock' => true]);
};
