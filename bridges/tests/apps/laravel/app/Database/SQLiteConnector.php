<?php

namespace App\Database;

use Illuminate\Database\Connectors\SQLiteConnector as LaravelSQLiteConnector;

/**
 * SQLite connections whose transactions begin IMMEDIATE.
 *
 * The database queue pops, deletes and releases jobs in transactions that read, then
 * write. Begun DEFERRED (PDO's default), two workers doing so at once deadlock, and
 * SQLite fails one at once with "database is locked" whatever the busy timeout: the
 * worker logs it and sleeps, or stops with --stop-when-empty, or a finished job is
 * released again. Begun IMMEDIATE, the second waits for the first. (Laravel 12+
 * has the connection option transaction_mode for this, used on PHP 8.4.)
 */
class SQLiteConnector extends LaravelSQLiteConnector
{
    protected function createPdoConnection($dsn, $username, $password, $options)
    {
        return new ImmediatePdo($dsn, $username, $password, $options);
    }
}
