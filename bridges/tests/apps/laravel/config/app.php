<?php

return [
    'name' => 'redis-lock-test',
    'env' => 'local',
    'debug' => false,
    'timezone' => 'UTC',
    'locale' => 'en',
    // Listed one by one: Laravel 8 has no ServiceProvider::defaultProviders().
    'providers' => [
        Illuminate\Bus\BusServiceProvider::class,
        Illuminate\Cache\CacheServiceProvider::class,
        Illuminate\Foundation\Providers\ConsoleSupportServiceProvider::class,
        Illuminate\Database\DatabaseServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Foundation\Providers\FoundationServiceProvider::class,
        Illuminate\Pipeline\PipelineServiceProvider::class,
        Illuminate\Queue\QueueServiceProvider::class,
        Illuminate\Redis\RedisServiceProvider::class,
        RedisLock\Bridge\Laravel\RedisLockServiceProvider::class,
        App\Providers\AppServiceProvider::class,
    ],
    'aliases' => [],
];
