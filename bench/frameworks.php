<?php
// The semaphore and the shared lock against the framework packages Debian ships.
//
// - Semaphore: 16 worker processes share 4 permits, each section held 1 ms.
//   redis_lock's Semaphore::acquire() (woken by the release) against Symfony's
//   semaphore RedisStore (its acquire() does not wait: a user's loop retries it every
//   5 ms, as the article's class does) and Laravel's Redis::funnel() limiter
//   (ConcurrencyLimiter::block(), which polls every 250 ms).
// - Shared lock: 8 readers and 2 writers on one key, each section held 1 ms.
//   redis_lock's addReadLock()/addLock() against symfony/lock's shared RedisStore
//   through Lock::acquireRead(true)/acquire(true) (it retries every ~100 ms).
//
// Every implementation runs in each round, in turn (the order rotates), on its own
// server; "vs redis_lock" is the median over the rounds of each round's throughput
// ratio. Prints a Markdown table, writes bench/results/frameworks.{md,svg}.
//
// Usage: BENCH_ROUNDS=3 php -d extension=redis -d extension=redis_lock bench/frameworks.php
require __DIR__ . '/../php-tests/_helper.inc';
require __DIR__ . '/lib.php';
foreach (['/usr/share/php/Symfony/Component/Semaphore/autoload.php', '/usr/share/php/Symfony/Component/Lock/autoload.php',
          '/usr/share/php/Illuminate/Redis/autoload.php'] as $autoload) {
    if (!is_file($autoload)) {
        fwrite(STDERR, "frameworks: $autoload is missing (php-symfony-semaphore, php-symfony-lock, php-laravel-framework: make bench installs them)\n");
        exit(2);
    }
    require_once $autoload;
}

/** Laravel's limiter calls eval(script, numkeys, ...keys-and-args), as its connections do. */
final class LaravelEvalAdapter
{
    public function __construct(private Redis $redis) {}
    public function eval(string $script, int $numKeys, ...$args) { return $this->redis->eval($script, $args, $numKeys); }
}

$rounds = (int) (getenv('BENCH_ROUNDS') ?: 3);
$scenarios = [
    'semaphore 16 workers, 4 permits, 1 ms' => ['workers' => 16, 'sections' => 40, 'impls' => ['redis_lock', 'symfony', 'laravel']],
    'shared lock 8 readers + 2 writers, 1 ms' => ['workers' => 10, 'sections' => 80, 'impls' => ['redis_lock', 'symfony']],
];
$results = [];
foreach ($scenarios as $name => $sc) {
    $acc = [];
    $ratios = [];
    for ($round = 0; $round < $rounds; $round++) {
        $order = $sc['impls'];
        for ($i = 0; $i < $round % count($order); $i++) { $order[] = array_shift($order); }
        $tput = [];
        foreach ($order as $impl) {
            $r = run_once(str_starts_with($name, 'semaphore') ? 'sem' : 'rw', $impl, $sc['workers'], $sc['sections']);
            $tput[$impl] = $r['sections'] / $r['seconds'];
            $a = &$acc[$impl];
            $a['sections'] = ($a['sections'] ?? 0) + $r['sections'];
            $a['seconds'] = ($a['seconds'] ?? 0) + $r['seconds'];
            $a['waits'] = array_merge($a['waits'] ?? [], $r['waits']);
            $a['writer_waits'] = array_merge($a['writer_waits'] ?? [], $r['writer_waits']);
            $a['bad'] = ($a['bad'] ?? 0) + $r['bad'];
            unset($a);
            fprintf(STDERR, "  %-10s %s: %6.0f sections/s, wait p99 %7.1f ms\n", $impl, $name, $tput[$impl], pct($r['waits'], 99));
        }
        foreach ($sc['impls'] as $impl) { $ratios[$impl][] = $tput[$impl] / $tput['redis_lock']; }
    }
    foreach ($ratios as $impl => $rs) { sort($rs); $acc[$impl]['ratio'] = $rs[intdiv(count($rs), 2)]; }
    $results[$name] = $acc;
}
$md = "| scenario | implementation | sections/s | vs redis_lock (median of per-round ratios) | limit broken | wait p50 | wait p99 | wait max | writers' wait p99 |\n|---|---|---|---|---|---|---|---|---|\n";
foreach ($results as $name => $acc) {
    foreach ($acc as $impl => $a) {
        $md .= sprintf("| %s | %s | %.0f | %.2f× | %d | %.1f ms | %.1f ms | %.1f ms | %s |\n", $name, label($impl), $a['sections'] / $a['seconds'], $a['ratio'], $a['bad'],
            pct($a['waits'], 50), pct($a['waits'], 99), max($a['waits']), $a['writer_waits'] ? sprintf('%.1f ms', pct($a['writer_waits'], 99)) : '');
    }
}
echo $md;
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/frameworks.md', $md);
file_put_contents(__DIR__ . '/results/frameworks.svg', svg($results, 'label'));
fwrite(STDERR, "wrote bench/results/frameworks.md and bench/results/frameworks.svg\n");

function label(string $impl): string
{
    return ['redis_lock' => 'redis_lock', 'symfony' => 'Symfony RedisStore (retried)', 'laravel' => 'Laravel Redis::funnel()'][$impl];
}

/**
 * One run: forked workers, each doing $sections sections. "bad" counts sections that
 * saw the limit broken (more than 4 holders, or a writer beside anyone).
 */
function run_once(string $kind, string $impl, int $workers, int $sections): array
{
    $run = run_workers($workers, 0.3 + $workers * 0.01, fn(int $w, array $srv, float $start) => worker($kind, $impl, $w, $sections, $srv, $start));
    $waits = $writerWaits = [];
    foreach ($run['results'] as $d) {
        $waits = array_merge($waits, $d['waits']);
        if ($d['writer']) { $writerWaits = array_merge($writerWaits, $d['waits']); }
    }
    return ['sections' => $workers * $sections, 'seconds' => $run['seconds'], 'waits' => $waits, 'writer_waits' => $writerWaits, 'bad' => $run['bad']];
}

function worker(string $kind, string $impl, int $w, int $sections, array $srv, float $start): array
{
    $redis = new Redis();
    $redis->connect('127.0.0.1', $srv['port']);
    $gauge = new Redis();                              // the limit check, on a connection of its own
    $gauge->connect('127.0.0.1', $srv['port']);
    $writer = $kind === 'rw' && $w < 2;
    $key = "peers:$kind";
    $opts = ['dsn' => $srv['dsn']];
    // One enter/leave gauge: a writer counts 100, a reader or permit holder 1.
    $enter = function (int $n) use ($gauge, $kind) {
        $now = $gauge->incrBy('in', $n);
        if (($kind === 'sem' && $now > 4) || ($kind === 'rw' && $now > 100)) { $gauge->incr('bad'); }
    };
    $mine = $writer ? 100 : 1;
    [$take, $give] = match ("$kind:$impl") {
        'sem:redis_lock' => (function () use ($key, $opts) {
            $s = new Semaphore($key, 4, 60, 10, $opts);
            return [fn() => $s->acquire(), fn() => $s->release()];
        })(),
        'sem:symfony' => (function () use ($key, $redis) {
            $s = (new Symfony\Component\Semaphore\SemaphoreFactory(new Symfony\Component\Semaphore\Store\RedisStore($redis)))->createSemaphore($key, 4, 1, 10.0);
            return [function () use ($s) { while (!$s->acquire()) { usleep(5000); } return true; }, fn() => $s->release()];
        })(),
        'sem:laravel' => (function () use ($key, $redis) {
            $limiter = new Illuminate\Redis\Limiters\ConcurrencyLimiter(new LaravelEvalAdapter($redis), $key, 4, 10);
            // block() runs the section as its callback (see the loop below).
            return [fn() => $limiter, null];
        })(),
        'rw:redis_lock' => (function () use ($key, $opts, $writer) {
            $l = new Lock($key, 60, 10, $opts);
            return [$writer ? fn() => $l->addLock() : fn() => $l->addReadLock(), fn() => $l->releaseLock()];
        })(),
        'rw:symfony' => (function () use ($key, $redis, $writer) {
            $l = (new Symfony\Component\Lock\LockFactory(new Symfony\Component\Lock\Store\RedisStore($redis)))->createLock($key, 10.0);
            return [$writer ? fn() => $l->acquire(true) : fn() => $l->acquireRead(true), fn() => $l->release()];
        })(),
    };
    while (microtime(true) < $start) { usleep(1000); }
    $waits = [];
    for ($i = 0; $i < $sections; $i++) {
        $section = function () use ($enter, $gauge, $mine) { $enter($mine); usleep(1000); $gauge->decrBy('in', $mine); };
        $t0 = hrtime(true);
        if ($give === null) {
            // Laravel: the wait ends when block() starts the callback.
            $limiter = $take();
            $limiter->block(60, function () use (&$waits, $t0, $section) { $waits[] = (hrtime(true) - $t0) / 1e6; $section(); });
            continue;
        }
        if (!$take()) { throw new RuntimeException("$impl: no hold within 60 s"); }
        $waits[] = (hrtime(true) - $t0) / 1e6;
        $section();
        $give();
    }
    return ['waits' => $waits, 'end' => microtime(true), 'writer' => $writer];
}
