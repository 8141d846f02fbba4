<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Contracts\Events\Dispatcher;
use Illuminate\Support\ServiceProvider;

/**
 * Registers the cache driver `redis_lock`: Laravel's Redis cache store whose locks,
 * and `Cache::funnel()`, run on the redis_lock extension. In config/cache.php:
 *
 *     'stores' => ['redis_lock' => [
 *         'driver' => 'redis_lock',
 *         'connection' => 'cache',          // where cached values go, as for 'redis'
 *         'lock_connection' => 'default',   // where locks go (default: 'connection')
 *         'lock_options' => [],             // the extension's options, over the connection's
 *     ]],
 */
class RedisLockServiceProvider extends ServiceProvider
{
    public function register()
    {
        $this->app->booting(function (): void {
            $this->app->make('cache')->extend('redis_lock', function ($app, array $config) {  // not static: the manager binds it
                $connection = $config['connection'] ?? 'default';
                $store = new RedisStore($app['redis'], $config['prefix'] ?? $app['config']['cache.prefix'], $connection);
                $store->setLockConnection($config['lock_connection'] ?? $connection);
                $store->setLockOptions($config['lock_options'] ?? []);
                // Laravel's repository, with funnel() on the extension's Semaphore; set up
                // as CacheManager::repository() sets up its own (store name, events).
                $repository = new Repository($store, ['store' => $config['store'] ?? 'redis_lock']);
                if (($config['events'] ?? true) && $app->bound(Dispatcher::class)) {
                    $repository->setEventDispatcher($app[Dispatcher::class]);
                }
                return $repository;
            });
        });
    }

    public function boot()
    {
        // A job killed at its timeout releases its locks, as a fatal error does.
        if ($this->app->bound('events')) {
            TimedOutJobs::listen($this->app['events']);
        }
    }
}
