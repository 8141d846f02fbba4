<?php

return [
    // The bridge's store; REDIS_LOCK_APP_STORE=redis runs the same application on
    // Laravel's own Redis store (the tests' controls).
    'default' => env('REDIS_LOCK_APP_STORE', 'redis_lock'),
    'stores' => [
        'redis_lock' => [
            'driver' => 'redis_lock',
            'connection' => 'cache',
            'lock_connection' => 'default',
        ],
        'redis' => [
            'driver' => 'redis',
            'connection' => 'cache',
            'lock_connection' => 'default',
        ],
    ],
    'prefix' => 'app_cache',
];
