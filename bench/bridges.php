<?php
// The framework bridges against the frameworks' own Redis locks, through the
// frameworks' own APIs (Debian's packages).
//
// - Laravel: 8 worker processes, each section held 1 ms, taken with
//   Cache::lock($name, 10)->block(5): Laravel's own RedisLock (block() polls every
//   250 ms) against the bridge's (woken by the release).
// - Symfony: the same load through LockFactory::createLock()->acquire(true):
//   symfony/lock's RedisStore (not a blocking store: Lock retries every ~100 ms)
//   against the bridge's LockStore.
//
// A section whose block() timed out is counted and tried again. Each round runs
// every implementation in turn (the order rotates) on a server of its own; "vs
// bridge" is the median over the rounds of each round's throughput ratio. Prints a
// Markdown table, writes bench/results/bridges.{md,svg}.
//
// Usage: BENCH_ROUNDS=3 php -d extension=redis -d extension=redis_lock bench/bridges.php
require __DIR__ . '/../php-tests/_helper.inc';
require __DIR__ . '/lib.php';
foreach (['Symfony/Component/Lock', 'Illuminate'] as $package) {
    if (!is_file($autoload = "/usr/share/php/$package/autoload.php")) {
        fwrite(STDERR, "bridges bench: $autoload is missing (php-symfony-lock, php-laravel-framework: tools/env/deps.sh installs them)\n");
        exit(2);
    }
    require_once $autoload;
}
require_once __DIR__ . '/../bridges/autoload.php';

use Illuminate\Contracts\Cache\LockTimeoutException;

$rounds = (int) (getenv('BENCH_ROUNDS') ?: 3);
$workers = 8;
$sections = (int) (getenv('BENCH_SECTIONS') ?: 40);
$scenarios = [
    "Laravel lock()->block(5), $workers workers × 1 ms" => ['bridge-laravel', 'laravel'],
    "Symfony acquire(true), $workers workers × 1 ms" => ['bridge-symfony', 'symfony'],
];
$results = [];
foreach ($scenarios as $name => $impls) {
    $acc = [];
    $ratios = [];
    for ($round = 0; $round < $rounds; $round++) {
        $order = $impls;
        if ($round % 2) { $order = array_reverse($order); }
        $tput = [];
        foreach ($order as $impl) {
            $r = run_once($impl, $workers, $sections);
            $tput[$impl] = $r['sections'] / $r['seconds'];
            $a = &$acc[$impl];
            $a['sections'] = ($a['sections'] ?? 0) + $r['sections'];
            $a['seconds'] = ($a['seconds'] ?? 0) + $r['seconds'];
            $a['waits'] = array_merge($a['waits'] ?? [], $r['waits']);
            $a['writer_waits'] = [];
            $a['timeouts'] = ($a['timeouts'] ?? 0) + $r['timeouts'];
            $a['bad'] = ($a['bad'] ?? 0) + $r['bad'];
            unset($a);
            fprintf(STDERR, "  %-15s %6.0f sections/s, wait p99 %7.1f ms, %d timeouts\n", $impl, $tput[$impl], pct($r['waits'], 99), $r['timeouts']);
        }
        foreach ($impls as $impl) { $ratios[$impl][] = $tput[$impl] / $tput[$impls[0]]; }
    }
    foreach ($ratios as $impl => $rs) { sort($rs); $acc[$impl]['ratio'] = $rs[intdiv(count($rs), 2)]; }
    $results[$name] = array_merge(array_flip($impls), $acc);
}
$md = "| load | implementation | sections/s | vs bridge (median of per-round ratios) | block() timeouts | overlaps | wait p50 | wait p99 | wait max |\n|---|---|---|---|---|---|---|---|---|\n";
foreach ($results as $name => $acc) {
    foreach ($acc as $impl => $a) {
        $md .= sprintf("| %s | %s | %.0f | %.2f× | %d | %d | %.1f ms | %.1f ms | %.1f ms |\n", $name, bridge_label($impl), $a['sections'] / $a['seconds'],
            $a['ratio'], $a['timeouts'], $a['bad'], pct($a['waits'], 50), pct($a['waits'], 99), max($a['waits']));
    }
}
echo $md;
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/bridges.md', $md);
file_put_contents(__DIR__ . '/results/bridges.svg', svg($results, 'bridge_label'));
fwrite(STDERR, "wrote bench/results/bridges.md and bench/results/bridges.svg\n");

function bridge_label(string $impl): string
{
    return ['bridge-laravel' => 'bridge (RedisLockServiceProvider)', 'laravel' => "Laravel's RedisLock",
            'bridge-symfony' => 'bridge (LockStore)', 'symfony' => "Symfony's RedisStore"][$impl];
}

/** One run: forked workers, each doing $sections sections under the lock. */
function run_once(string $impl, int $workers, int $sections): array
{
    $run = run_workers($workers, 0.5 + $workers * 0.05, fn(int $w, array $srv, float $start) => bridge_worker($impl, $sections, $srv, $start));
    return ['sections' => $workers * $sections, 'seconds' => $run['seconds'], 'bad' => $run['bad'],
            'waits' => array_merge(...array_column($run['results'], 'waits')),
            'timeouts' => array_sum(array_column($run['results'], 'timeouts'))];
}

function bridge_worker(string $impl, int $sections, array $srv, float $start): array
{
    $gauge = new Redis();                               // the overlap check, on a connection of its own
    $gauge->connect('127.0.0.1', $srv['port']);
    if (str_ends_with($impl, 'laravel')) {
        $app = laravel_app($srv, [
            'laravel' => ['driver' => 'redis', 'connection' => 'default'],
            'bridge-laravel' => ['driver' => 'redis_lock', 'connection' => 'default'],
        ]);
        $store = $app['cache']->store($impl);
        $take = function () use ($store) { $lock = $store->lock('bench', 10); $lock->block(5); return $lock; };
    } else {
        $store = $impl === 'symfony'
            ? new Symfony\Component\Lock\Store\RedisStore((function () use ($srv) { $r = new Redis(); $r->connect('127.0.0.1', $srv['port']); return $r; })())
            : new RedisLock\Bridge\Symfony\LockStore($srv['dsn']);
        $factory = new Symfony\Component\Lock\LockFactory($store);
        $take = function () use ($factory) { $lock = $factory->createLock('bench', 10); $lock->acquire(true); return $lock; };
    }
    while (microtime(true) < $start) { usleep(1000); }
    $waits = [];
    $timeouts = 0;
    for ($i = 0; $i < $sections; $i++) {
        $t0 = hrtime(true);
        try {
            $held = $take();
        } catch (LockTimeoutException) {
            $timeouts++;
            $i--;
            continue;
        }
        $waits[] = (hrtime(true) - $t0) / 1e6;
        if ($gauge->incr('in') > 1) { $gauge->incr('bad'); }
        usleep(1000);
        $gauge->decr('in');
        $held->release();
    }
    return ['waits' => $waits, 'end' => microtime(true), 'timeouts' => $timeouts];
}
