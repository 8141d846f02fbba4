<?php

return [
    'default' => 'database',
    'connections' => [
        'database' => [
            'driver' => 'database',
            'connection' => 'sqlite',
            'table' => 'jobs',
            'queue' => 'default',
            // Longer than any test: a job whose worker died stays reserved, not retried.
            'retry_after' => 300,
            'after_commit' => false,
        ],
    ],
    'failed' => [
        'driver' => 'database-uuids',
        'database' => 'sqlite',
        'table' => 'failed_jobs',
    ],
];
