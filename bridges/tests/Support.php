<?php

namespace RedisLock\Bridge\Tests;

/** The test server, a raw client to look at it, and child PHP processes. */
final class Support
{
    public static function dsn(): string
    {
        return (string) getenv('REDIS_LOCK_TEST_DSN');
    }

    public static function port(): int
    {
        return (int) parse_url(self::dsn(), PHP_URL_PORT);
    }

    /**
     * A client on the test server, to check what the bridges wrote: phpredis, or where
     * this PHP has none (Debian ships none for PHP 8.5 and 8.6) the repository's
     * stand-in with its methods (\RespRedis, tools/lib/resp.php).
     */
    public static function redis(): \Redis|\RespRedis
    {
        $r = class_exists(\Redis::class) ? new \Redis() : new \RespRedis();
        $r->connect('127.0.0.1', self::port());
        return $r;
    }

    /**
     * Skips the calling test where Laravel cannot run here: no php-laravel-framework (on
     * Debian sid, it would bring in PHP 8.4 beside 8.5, so tools/env/deps.sh leaves it out),
     * or no phpredis, the Redis client its configuration names.
     */
    public static function needsLaravel(): void
    {
        if (!class_exists(\Illuminate\Foundation\Application::class)) {
            \PHPUnit\Framework\Assert::markTestSkipped('no php-laravel-framework for this PHP (tools/env/deps.sh says why)');
        }
        if (!class_exists(\Redis::class)) {
            \PHPUnit\Framework\Assert::markTestSkipped('no phpredis for this PHP, the client Laravel\'s Redis connections use here');
        }
    }

    /** A unique name per test and run. */
    public static function name(string $what): string
    {
        return 'bridge-test:' . $what . ':' . bin2hex(random_bytes(6));
    }

    /**
     * Starts `php` on $code (with the same extension and bootstrap), stdin/stdout as pipes.
     * $code sees $argv[1..] = $args.
     *
     * @return array{0: resource, 1: array<int, resource>}
     */
    public static function start(string $code, array $args = []): array
    {
        $file = tempnam(sys_get_temp_dir(), 'bridge-child');
        file_put_contents($file, "<?php\nrequire " . var_export(__DIR__ . '/bootstrap.php', true) . ";\n" . $code);
        $cmd = array_merge([PHP_BINARY, '-d', 'extension=' . getenv('REDIS_LOCK_EXT'), '-d', 'display_errors=stderr', $file], $args);
        $proc = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        register_shutdown_function('unlink', $file);
        return [$proc, $pipes];
    }

    /**
     * One round of a wake-up test: $code holds the lock, prints "held", reads a line (sent
     * as $wait starts), sleeps, releases the lock and prints the release's microtime();
     * $wait returns when the waiter has the lock. Returns [lag, phase]: how long after
     * the release $wait() returned, and how long after $wait() was called the release
     * came. The holder counts its sleep from the waiter's start, so that a busy machine
     * only lengthens the phase (a sleep of 300 ms: 300 ms or more), never moves it
     * across a poller's 250 ms.
     *
     * @return array{float, float} seconds
     */
    public static function wakeLag(string $code, array $args, \Closure $wait): array
    {
        [$proc, $pipes] = self::start($code, $args);
        $ready = fgets($pipes[1]);
        if ($ready !== "held\n") {
            throw new \RuntimeException('the holder did not start: ' . $ready . stream_get_contents($pipes[2]));
        }
        $started = microtime(true);
        fwrite($pipes[0], "go\n");
        $wait();
        $woke = microtime(true);
        $released = (float) fgets($pipes[1]);
        proc_close($proc);
        return [$woke - $released, $released - $started];
    }

    /**
     * Judges a wake-up test's rounds ([lag, phase] each, as wakeLag() returns them)
     * against a waiter that polls every $interval seconds from the moment it starts
     * waiting (a framework's retry loop, or the module's own re-check were the wake
     * lost): in each round that poller would have had the lock at its first attempt
     * after the release, $interval - fmod(phase, $interval) after it, the phase as
     * measured in that round (a busy machine moves it). A waiter woken by the release
     * shows a fraction of that; a poller of that interval shows all of it in every
     * round. Medians, so that one round slowed by a busy machine moves neither.
     *
     * @param list<array{float, float}> $rounds
     * @return array{float, float, string} the medians of the lags and of the poller's, and a message listing them
     */
    public static function pollerLags(array $rounds, float $interval): array
    {
        $lags = array_map(static fn(array $r) => $r[0], $rounds);
        $polled = array_map(static fn(array $r) => $interval - fmod(max(0.0, $r[1]), $interval), $rounds);
        $ms = static fn(array $l) => implode(', ', array_map(static fn(float $s) => round($s * 1000, 1) . ' ms', $l));
        $what = 'median of ' . round(self::median($lags) * 1000, 1) . ' ms after the release (' . $ms($lags)
            . '); a waiter polling every ' . round($interval * 1000) . ' ms: ' . round(self::median($polled) * 1000, 1)
            . ' ms (' . $ms($polled) . ')';
        // REDIS_LOCK_TEST_LAGS=FILE keeps every judgement, passed or not: how close a
        // busy machine comes to the bound.
        if (($log = getenv('REDIS_LOCK_TEST_LAGS')) !== false && $log !== '') {
            $test = '?';
            foreach (debug_backtrace(DEBUG_BACKTRACE_IGNORE_ARGS, 4) as $frame) {
                if (str_starts_with($frame['function'], 'test')) {
                    $test = $frame['function'];
                    break;
                }
            }
            file_put_contents($log, "$test: $what\n", FILE_APPEND);
        }
        return [self::median($lags), self::median($polled), $what];
    }

    /** Asserts that a wake-up test's waiter was woken: under half of what the poller of pollerLags() would show. */
    public static function assertWoken(array $rounds, float $interval, string $what = ''): void
    {
        [$lag, $polled, $msg] = self::pollerLags($rounds, $interval);
        \PHPUnit\Framework\Assert::assertLessThan($polled / 2, $lag, ($what === '' ? '' : "$what: ") . $msg);
    }

    /** @param list<float> $values */
    public static function median(array $values): float
    {
        sort($values);
        $n = \count($values);
        return $n % 2 ? $values[intdiv($n, 2)] : ($values[$n / 2 - 1] + $values[$n / 2]) / 2;
    }

    /**
     * The module's own re-check of a waited-for key, in seconds (RECHECK_EVERY in
     * src/kinds/core/waiting.rs): a waiter whose wake-up was lost takes the lock at the latest
     * this long after it started waiting.
     */
    public const RECHECK = 1.0;

    /** Runs $code to its end: [exit code, stdout, stderr]. */
    public static function run(string $code, array $args = []): array
    {
        [$proc, $pipes] = self::start($code, $args);
        fclose($pipes[0]);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        return [proc_close($proc), $out, $err];
    }

    /**
     * A minimal Laravel application on the test server: Redis connections "default"
     * (database 0) and "cache" (database 1) with a connection prefix, a cache prefix,
     * Laravel's own "redis" store and the bridge's "redis_lock" store (the default).
     */
    public static function laravel(array $lockOptions = []): \Illuminate\Foundation\Application
    {
        self::needsLaravel();
        $server = ['host' => '127.0.0.1', 'port' => self::port()];
        $app = new \Illuminate\Foundation\Application(sys_get_temp_dir());
        $app->instance('config', new \Illuminate\Config\Repository([
            'database' => ['redis' => [
                'client' => 'phpredis',
                'options' => ['prefix' => 'app_database_'],
                'default' => $server + ['database' => 0],
                'cache' => $server + ['database' => 1],
            ]],
            'cache' => ['default' => 'redis_lock', 'prefix' => 'app_cache', 'stores' => [
                'redis' => ['driver' => 'redis', 'connection' => 'cache', 'lock_connection' => 'default'],
                'redis_lock' => ['driver' => 'redis_lock', 'connection' => 'cache', 'lock_connection' => 'default',
                    'lock_options' => $lockOptions],
            ]],
        ]));
        $app->register(\Illuminate\Redis\RedisServiceProvider::class);
        $app->register(\Illuminate\Cache\CacheServiceProvider::class);
        $app->register(\RedisLock\Bridge\Laravel\RedisLockServiceProvider::class);
        $app->boot();
        \Illuminate\Support\Facades\Facade::clearResolvedInstances();
        \Illuminate\Support\Facades\Facade::setFacadeApplication($app);
        return $app;
    }

    /**
     * The key Laravel's RedisLock writes for lock $name in that application: the
     * connection prefix, then the cache prefix as Laravel's own store has it (Laravel
     * 10 and earlier add a ':' to it, Laravel 11 and later do not).
     */
    public static function laravelKey(string $name): string
    {
        return 'app_database_' . \Illuminate\Support\Facades\Cache::store('redis')->getPrefix() . $name;
    }

    /**
     * A semaphore's keys in Redis: its hash, and its holders' key, which alone holds a
     * hold taken without a script ('<permits>:<weight>:<token>', docs/semaphores.md).
     * For a key without a hash tag.
     */
    public static function semaphoreKeys(string $key): array
    {
        return [$key, '{' . $key . '}:readers'];
    }

    /** The permits a semaphore's holders gave, as Redis has them (null: none holds it). */
    public static function semaphorePermits(\Redis|\RespRedis $redis, string $key): ?string
    {
        [$hash, $holders] = self::semaphoreKeys($key);
        if ($redis->exists($hash)) {
            return $redis->hGetAll($hash)['permits'] ?? null;
        }
        $alone = $redis->exists($holders) ? $redis->get($holders) : false;
        return is_string($alone) ? strstr($alone, ':', true) : null;
    }

    /** Removes a file or a folder with all it holds (links are removed, not followed). */
    public static function removeTree(string $path): void
    {
        if (is_dir($path) && !is_link($path)) {
            foreach (scandir($path) as $entry) {
                if ($entry !== '.' && $entry !== '..') {
                    self::removeTree("$path/$entry");
                }
            }
            rmdir($path);
        } elseif (file_exists($path) || is_link($path)) {
            unlink($path);
        }
    }
}
