<?php
// What the framework benches share: percentiles and the wait picture.
require_once __DIR__ . '/commands.php';

/**
 * One run on a throwaway server: $workers forked processes, each calling
 * $work($w, $srv, $start) from $start on, which returns what it measured (an array,
 * 'end' its finishing time). Returns the workers' results, the run's length from
 * $start to the last worker's end, the server's "bad" counter (sections that saw
 * the limit broken), the commands and scripts it ran and the CPU seconds it used.
 *
 * @return array{results: list<array>, seconds: float, bad: int, commands: int, scripts: int, cpu: float}
 */
function run_workers(int $workers, float $lead, callable $work): array
{
    $srv = rl_start_redis();
    $tmp = sys_get_temp_dir() . '/redis-lock-bench-' . bin2hex(random_bytes(4));
    mkdir($tmp);
    $start = microtime(true) + $lead;
    $pids = [];
    try {
        for ($w = 0; $w < $workers; $w++) {
            $pid = pcntl_fork();
            if ($pid === 0) {
                $rc = 1;
                try {
                    file_put_contents("$tmp/$w.json", json_encode($work($w, $srv, $start)));
                    $rc = 0;
                } catch (Throwable $e) {
                    fwrite(STDERR, "worker $w: $e\n");
                }
                exit($rc);
            }
            $pids[] = $pid;
        }
        foreach ($pids as $pid) { pcntl_waitpid($pid, $st); if (pcntl_wexitstatus($st) !== 0) { throw new RuntimeException('a worker failed'); } }
        $results = [];
        $end = $start;
        for ($w = 0; $w < $workers; $w++) {
            $results[] = $d = json_decode(file_get_contents("$tmp/$w.json"), true);
            $end = max($end, $d['end']);
            unlink("$tmp/$w.json");
        }
        $stats = rl_cmd($srv['dsn'], 'INFO', 'commandstats');   // before the GET below adds one
        $cpu = server_cpu(rl_cmd($srv['dsn'], 'INFO', 'cpu'));
        return ['results' => $results, 'seconds' => $end - $start, 'bad' => (int) rl_cmd($srv['dsn'], 'GET', 'bad'),
                'commands' => command_count($stats), 'scripts' => script_count($stats), 'cpu' => $cpu];
    } finally {
        @rmdir($tmp);
        rl_stop_redis($srv);
    }
}

function pct(array $xs, float $p): float
{
    if (!$xs) { return NAN; }
    sort($xs);
    return $xs[min(count($xs) - 1, (int) floor($p / 100 * count($xs)))];
}

/** Wait p50 and p99 per implementation, one panel per scenario, log scale. */
/** @param callable(string): string $label an implementation's name in the picture */
function svg(array $results, callable $label): string
{
    [$pw, $ml, $mt] = [380, 230, 30];
    $rows = 0;
    foreach ($results as $acc) { foreach ($acc as $a) { $rows += $a['writer_waits'] ? 2 : 1; } }
    $h = $rows * 40 + count($results) * 50 + 20;
    $palette = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a'];
    $out = "<svg xmlns='http://www.w3.org/2000/svg' width='" . ($ml + $pw + 40) . "' height='$h' font-family='sans-serif' font-size='12'>\n";
    $out .= "<rect width='100%' height='100%' fill='white'/>\n";
    $x = fn(float $ms) => $ml + $pw * (log10(max($ms, 0.1)) + 1) / 5;   // 0.1 ms .. 10 s
    $y0 = $mt;
    foreach ($results as $name => $acc) {
        $out .= "<text x='10' y='" . ($y0 - 8) . "' font-weight='bold'>" . htmlspecialchars($name) . ": wait p50 (bar) and p99 (tick), ms, log scale</text>\n";
        $row = 0;
        foreach (array_keys($acc) as $k => $impl) {
            $a = $acc[$impl];
            $series = ['' => $a['waits']] + ($a['writer_waits'] ? [', writers' => $a['writer_waits']] : []);
            foreach ($series as $suffix => $waits) {
                $yy = $y0 + $row * 40;
                [$p50, $p99] = [pct($waits, 50), pct($waits, 99)];
                $out .= "<text x='10' y='" . ($yy + 18) . "'>" . htmlspecialchars($label($impl) . $suffix) . "</text>\n";
                $out .= sprintf("<rect x='%d' y='%d' width='%.1f' height='20' fill='%s'/>\n", $ml, $yy + 4, max(1, $x($p50) - $ml), $palette[$k % 4]);
                $out .= sprintf("<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='black' stroke-width='2'/>\n", $x($p99), $x($p99), $yy, $yy + 28);
                $out .= sprintf("<text x='%.1f' y='%d' font-size='10'>%.1f / %.1f</text>\n", $x($p99) + 4, $yy + 18, $p50, $p99);
                $row++;
            }
        }
        foreach ([0.1, 1, 10, 100, 1000, 10000] as $t) {
            $out .= sprintf("<text x='%.1f' y='%d' font-size='10' fill='#666'>%s</text>\n", $x($t) - 6, $y0 + $row * 40 + 12, $t >= 1 ? (string) $t : '0.1');
        }
        $y0 += $row * 40 + 50;
    }
    return $out . "</svg>\n";
}

/**
 * A minimal Laravel application on the run's server, with $stores in cache.stores (its
 * phpredis connection "default", the bridge's driver registered), booted.
 */
function laravel_app(array $srv, array $stores): Illuminate\Foundation\Application
{
    $app = new Illuminate\Foundation\Application(sys_get_temp_dir());
    $app->instance('config', new Illuminate\Config\Repository([
        'database' => ['redis' => ['client' => 'phpredis', 'default' => ['host' => '127.0.0.1', 'port' => $srv['port'], 'database' => 0]]],
        'cache' => ['prefix' => 'bench', 'stores' => $stores],
    ]));
    $app->register(Illuminate\Redis\RedisServiceProvider::class);
    $app->register(Illuminate\Cache\CacheServiceProvider::class);
    $app->register(RedisLock\Bridge\Laravel\RedisLockServiceProvider::class);
    $app->boot();
    return $app;
}
