<?php

namespace App\Database;

/** PDO whose beginTransaction() is SQLite's BEGIN IMMEDIATE (see SQLiteConnector). */
final class ImmediatePdo extends \PDO
{
    private bool $open = false;

    public function beginTransaction(): bool
    {
        $this->exec('BEGIN IMMEDIATE');
        return $this->open = true;
    }

    // PDO before PHP 8.4 does not see a transaction begun by exec(): end it the same way.
    public function commit(): bool
    {
        $this->exec('COMMIT');
        $this->open = false;
        return true;
    }

    public function rollBack(): bool
    {
        $this->exec('ROLLBACK');
        $this->open = false;
        return true;
    }

    public function inTransaction(): bool
    {
        return $this->open || parent::inTransaction();
    }
}
