<?php

namespace App\Doctrine;

use Doctrine\DBAL\Connection;
use Doctrine\DBAL\DriverManager;
use Doctrine\Persistence\ConnectionRegistry;

/** The one DBAL connection, "default", that doctrine:// transports ask for: a SQLite file. */
final class SqliteConnections implements ConnectionRegistry
{
    private ?Connection $connection = null;

    public function __construct(private readonly string $path)
    {
    }

    public function getDefaultConnectionName(): string
    {
        return 'default';
    }

    public function getConnection(?string $name = null): object
    {
        if (($name ?? 'default') !== 'default') {
            throw new \InvalidArgumentException(\sprintf('No Doctrine connection "%s": only "default".', $name));
        }
        return $this->connection ??= DriverManager::getConnection(['driver' => 'pdo_sqlite', 'path' => $this->path]);
    }

    public function getConnections(): array
    {
        return ['default' => $this->getConnection()];
    }

    public function getConnectionNames(): array
    {
        return ['default' => 'app.doctrine'];
    }
}
