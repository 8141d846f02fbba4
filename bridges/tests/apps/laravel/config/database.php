<?php

$server = parse_url((string) env('REDIS_LOCK_TEST_DSN'));

return [
    'default' => 'sqlite',
    'connections' => [
        'sqlite' => [
            'driver' => 'sqlite',
            'database' => env('REDIS_LOCK_APP_DIR') . '/database.sqlite',
            'prefix' => '',
            'foreign_key_constraints' => true,
            // Laravel 12+ on PHP 8.4 begins transactions with this itself (see app/Database/SQLiteConnector.php).
            'transaction_mode' => 'IMMEDIATE',
        ],
    ],
    'migrations' => 'migrations',
    'redis' => [
        'client' => 'phpredis',
        // A prefix per test run: its keys are told apart from anything else on the server.
        'options' => ['prefix' => env('REDIS_LOCK_APP_PREFIX')],
        // Locks on database 0, cached values (and Laravel 8/10's scheduling mutex) on 1.
        'default' => ['host' => $server['host'] ?? '127.0.0.1', 'port' => $server['port'] ?? 6379, 'database' => 0],
        'cache' => ['host' => $server['host'] ?? '127.0.0.1', 'port' => $server['port'] ?? 6379, 'database' => 1],
    ],
];
