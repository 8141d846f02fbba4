<?php

namespace App;

/**
 * What the application's jobs, commands and scheduled tasks did, for the tests to
 * read: one JSON object a line in REDIS_LOCK_APP_DIR/<name>.jsonl, appended whole
 * (several processes write the same journal at once).
 */
final class Journal
{
    public static function add(string $name, array $record): void
    {
        $record += ['t' => microtime(true), 'pid' => getmypid()];
        file_put_contents(getenv('REDIS_LOCK_APP_DIR') . "/$name.jsonl", json_encode($record) . "\n", FILE_APPEND | LOCK_EX);
    }
}
