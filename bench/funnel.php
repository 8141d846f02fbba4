<?php
// Laravel's funnels side by side: at most 4 sections at once, 16 worker processes,
// each section held 1 ms, through Laravel's own APIs (Debian's php-laravel-framework).
//
// - Redis::funnel(): Laravel's Redis concurrency limiter, one script over the 4 slot
//   keys a try, and 250 ms of sleep between tries.
// - Cache::funnel() on the redis_lock store: the bridge's, on the extension's
//   Semaphore (one script a try, woken by the release).
// - Cache::funnel() on Laravel's own redis store, where Laravel has it (13.x): each
//   slot tried as a lock (up to 4 scripts a try), then 250 ms of sleep.
//
// The funnel runs on a server of its own, so its INFO commandstats count the funnel's
// traffic only: "scripts/section" (EVAL and EVALSHA, each a client's round trip) and
// "commands/section" (everything Redis ran, the scripts' own commands included,
// pub/sub too), and the CPU the server used per section; the limit
// check (how many are inside at once) runs on another. Each round runs every
// implementation in turn (the order rotates); "vs bridge" is the median over the
// rounds of each round's throughput ratio. Prints a Markdown table, writes
// bench/results/funnel.{md,svg}.
//
// Usage: BENCH_ROUNDS=5 php -d extension=redis -d extension=redis_lock bench/funnel.php
require __DIR__ . '/../php-tests/_helper.inc';
require __DIR__ . '/lib.php';
if (!is_file($autoload = '/usr/share/php/Illuminate/autoload.php')) {
    fwrite(STDERR, "funnel bench: $autoload is missing (php-laravel-framework: tools/env/deps.sh installs it)\n");
    exit(2);
}
require_once $autoload;
require_once __DIR__ . '/../bridges/autoload.php';

const LIMIT = 4;
$rounds = (int) (getenv('BENCH_ROUNDS') ?: 5);
$workers = 16;
$sections = (int) (getenv('BENCH_SECTIONS') ?: 40);
$impls = ['bridge', 'redis'];
if (method_exists(Illuminate\Cache\Repository::class, 'funnel')) {
    $impls[] = 'cache';
}
$gauge = rl_start_redis();
$acc = [];
$ratios = [];
try {
    for ($round = 0; $round < $rounds; $round++) {
        $order = $impls;
        for ($i = 0; $i < $round % count($order); $i++) { $order[] = array_shift($order); }
        $tput = [];
        foreach ($order as $impl) {
            rl_cmd($gauge['dsn'], 'SET', 'in', '0');
            rl_cmd($gauge['dsn'], 'SET', 'bad', '0');
            $run = run_workers($workers, 0.5 + $workers * 0.05, fn(int $w, array $srv, float $start) => funnel_worker($impl, $sections, $srv, $gauge, $start));
            $seconds = $run['seconds'];
            $tput[$impl] = $workers * $sections / $seconds;
            $waits = array_merge(...array_column($run['results'], 'waits'));
            $a = &$acc[$impl];
            $a['sections'] = ($a['sections'] ?? 0) + $workers * $sections;
            $a['seconds'] = ($a['seconds'] ?? 0) + $seconds;
            $a['waits'] = array_merge($a['waits'] ?? [], $waits);
            $a['writer_waits'] = [];
            $a['commands'] = ($a['commands'] ?? 0) + $run['commands'];
            $a['scripts'] = ($a['scripts'] ?? 0) + $run['scripts'];
            $a['cpu'] = ($a['cpu'] ?? 0) + $run['cpu'];
            $a['timeouts'] = ($a['timeouts'] ?? 0) + array_sum(array_column($run['results'], 'timeouts'));
            $a['bad'] = ($a['bad'] ?? 0) + (int) rl_cmd($gauge['dsn'], 'GET', 'bad');
            unset($a);
            fprintf(STDERR, "  %-7s %6.0f sections/s, wait p99 %7.1f ms, %.1f scripts and %.1f commands/section\n", $impl, $tput[$impl], pct($waits, 99),
                $run['scripts'] / ($workers * $sections), $run['commands'] / ($workers * $sections));
        }
        foreach ($impls as $impl) { $ratios[$impl][] = $tput[$impl] / $tput['bridge']; }
    }
} finally {
    rl_stop_redis($gauge);
}
foreach ($ratios as $impl => $rs) { sort($rs); $acc[$impl]['ratio'] = $rs[intdiv(count($rs), 2)]; }
$name = "$workers workers, limit " . LIMIT . ', 1 ms';
$md = "| load | implementation | sections/s | vs bridge (median of per-round ratios) | scripts/section | commands/section run by Redis | Redis CPU µs/section | timeouts | limit broken | wait p50 | wait p99 | wait max |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
foreach ($acc as $impl => $a) {
    $md .= sprintf("| %s | %s | %.0f | %.2f× | %.1f | %.1f | %.0f | %d | %d | %.1f ms | %.1f ms | %.1f ms |\n", $name, funnel_label($impl), $a['sections'] / $a['seconds'], $a['ratio'],
        $a['scripts'] / $a['sections'], $a['commands'] / $a['sections'], 1e6 * $a['cpu'] / $a['sections'], $a['timeouts'], $a['bad'], pct($a['waits'], 50), pct($a['waits'], 99), max($a['waits']));
}
echo $md;
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/funnel.md', $md);
file_put_contents(__DIR__ . '/results/funnel.svg', svg([$name => $acc], 'funnel_label'));
fwrite(STDERR, "wrote bench/results/funnel.md and bench/results/funnel.svg\n");

function funnel_label(string $impl): string
{
    return ['bridge' => 'Cache::funnel(), redis_lock store (bridge)', 'redis' => "Laravel's Redis::funnel()",
            'cache' => "Cache::funnel(), Laravel's redis store"][$impl];
}

/** One worker: $sections sections through its funnel; a section whose wait timed out is tried again. */
function funnel_worker(string $impl, int $sections, array $srv, array $gauge, float $start): array
{
    $in = new Redis();                                  // the limit check, on a server of its own
    $in->connect('127.0.0.1', $gauge['port']);
    $app = laravel_app($srv, [
        'redis' => ['driver' => 'redis', 'connection' => 'default'],
        'bridge' => ['driver' => 'redis_lock', 'connection' => 'default'],
    ]);
    $funnel = match ($impl) {
        'redis' => fn() => $app['redis']->connection('default')->funnel('bench'),
        'bridge' => fn() => $app['cache']->store('bridge')->funnel('bench'),
        'cache' => fn() => $app['cache']->store('redis')->funnel('bench'),
    };
    while (microtime(true) < $start) { usleep(1000); }
    $waits = [];
    $timeouts = 0;
    for ($i = 0; $i < $sections; $i++) {
        $t0 = hrtime(true);
        $ran = $funnel()->limit(LIMIT)->releaseAfter(10)->block(5)->then(function () use (&$waits, $t0, $in) {
            $waits[] = (hrtime(true) - $t0) / 1e6;     // the wait ends as the section starts
            if ($in->incr('in') > LIMIT) { $in->incr('bad'); }
            usleep(1000);
            $in->decr('in');
            return true;
        }, fn() => false);
        if (!$ran) { $timeouts++; $i--; }
    }
    return ['waits' => $waits, 'end' => microtime(true), 'timeouts' => $timeouts];
}
