<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Redis\Connections\Connection;

/**
 * The extension's connection options that reach the same server, database and keys
 * as a Laravel Redis connection.
 *
 * @internal
 */
final class ConnectionOptions
{
    /** @return array<string, mixed> dsn or cluster, and prefix */
    public static function of(Connection $connection): array
    {
        $client = $connection->client();
        if ($client instanceof \Redis) {
            $auth = $client->getAuth();
            [$user, $pass] = \is_array($auth) ? [$auth[0] ?? null, $auth[1] ?? null] : [null, $auth];
            return [
                'dsn' => self::dsn((string) $client->getHost(), (int) $client->getPort(), (int) $client->getDbNum(), $user, $pass),
                'prefix' => (string) $client->getOption(\Redis::OPT_PREFIX),
            ];
        }
        if ($client instanceof \RedisCluster) {
            return [
                'cluster' => \array_map(static fn(array $m): string => self::dsn((string) $m[0], (int) $m[1], 0, null, null), $client->_masters()),
                'prefix' => (string) $client->getOption(\RedisCluster::OPT_PREFIX),
            ];
        }
        if (\interface_exists(\Predis\ClientInterface::class) && $client instanceof \Predis\ClientInterface
            && \method_exists($client->getConnection(), 'getParameters')) {
            $p = $client->getConnection()->getParameters();
            $prefix = $client->getOptions()->prefix;
            $dsn = $p->scheme === 'unix'
                ? 'unix://' . $p->path . '?db=' . (int) $p->database . ($p->password !== null ? '&pass=' . \rawurlencode($p->password) : '')
                : self::dsn(($p->scheme === 'tls' ? 'tls://' : '') . $p->host, (int) $p->port, (int) $p->database, $p->username, $p->password);
            return ['dsn' => $dsn, 'prefix' => $prefix === null ? '' : (string) $prefix->getPrefix()];
        }
        throw new \InvalidArgumentException(\sprintf(
            'redis_lock cannot read the server of the Redis connection "%s" (%s): give it in the store\'s "lock_options".',
            $connection->getName(), \get_debug_type($client),
        ));
    }

    /** $host may carry Laravel's "tls://" scheme, or be a unix socket path. */
    private static function dsn(string $host, int $port, int $db, ?string $user, ?string $pass): string
    {
        if (\str_starts_with($host, '/')) {
            return 'unix://' . $host . '?db=' . $db . ($pass !== null && $pass !== '' ? '&pass=' . \rawurlencode($pass) : '');
        }
        $scheme = 'redis';
        if (\preg_match('~^(tls|ssl|rediss)://~', $host, $m)) {
            $scheme = 'rediss';
            $host = \substr($host, \strlen($m[0]));
        } elseif (\preg_match('~^(tcp|redis)://~', $host, $m)) {
            $host = \substr($host, \strlen($m[0]));
        }
        if (\str_contains($host, ':') && !\str_starts_with($host, '[')) {
            $host = "[$host]";
        }
        $userinfo = '';
        if (($pass !== null && $pass !== '') || ($user !== null && $user !== '')) {
            $userinfo = \rawurlencode((string) $user) . ':' . \rawurlencode((string) $pass) . '@';
        }
        return "$scheme://$userinfo$host:" . ($port ?: 6379) . "/$db";
    }
}
