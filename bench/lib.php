<?php
// What the benches share: percentiles, the wait picture, and the contended workers.
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

/**
 * One contended run on $lockSrv (bench/contention.php, bench/peers.php): $workers forked
 * processes each do $rounds sections of acquire, a deliberately non-atomic GET/SET
 * increment of a counter on $dataSrv held $holdUs, release, then $outUs outside.
 * $impl: 'article' (bench/ArticleLock.php), 'native' (Lock) or 'semaphore' (a
 * Semaphore of one permit). Returns its totals and every wait in ms.
 */
function contend_once(string $impl, int $workers, int $holdUs, int $outUs, int $rounds, array $lockSrv, array $dataSrv): array
{
    $run = bin2hex(random_bytes(4));
    $lockKey = "bench:$run:lock";
    $counterKey = "bench:$run:counter";
    $tmp = sys_get_temp_dir() . "/redis-lock-bench-$run";
    mkdir($tmp);
    rl_cmd($dataSrv['dsn'], 'SET', $counterKey, '0');
    rl_cmd($lockSrv['dsn'], 'SCRIPT', 'FLUSH');      // both pay their first script load
    rl_cmd($lockSrv['dsn'], 'CONFIG', 'RESETSTAT');
    $cpu0 = server_cpu(rl_cmd($lockSrv['dsn'], 'INFO', 'cpu'));
    $start = microtime(true) + 0.3 + $workers * 0.01;  // every worker is ready by then
    $pids = [];
    for ($w = 0; $w < $workers; $w++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            pcntl_sigprocmask(SIG_BLOCK, [SIGUSR1]);
            $rc = 1;
            try { $rc = contend_worker($impl, $w, $rounds, $holdUs, $outUs, $lockKey, $counterKey, $lockSrv, $dataSrv, $start, $tmp); }
            catch (Throwable $e) { fwrite(STDERR, "worker $w: $e\n"); touch("$tmp/$w.failed"); }
            pcntl_sigwaitinfo([SIGUSR1]);
            exit($rc);
        }
        $pids[] = $pid;
    }
    // Workers that finish stay alive, idle, until all have finished: process exits
    // must not load the machine while others still contend.
    $ready = fn() => count(glob("$tmp/*.json")) + count(glob("$tmp/*.failed"));
    while ($ready() < $workers) {
        if (pcntl_waitpid(-1, $status, WNOHANG) > 0) { throw new RuntimeException("a $impl worker died early"); }
        usleep(20000);
    }
    foreach ($pids as $pid) { posix_kill($pid, SIGUSR1); }
    $failed = 0;
    foreach ($pids as $pid) { pcntl_waitpid($pid, $status); $failed += pcntl_wexitstatus($status) !== 0 ? 1 : 0; }
    if ($failed) { throw new RuntimeException("$failed $impl workers failed"); }
    array_map('unlink', glob("$tmp/*.failed"));
    $waits = [];
    $end = $start;
    $gaveUp = 0;
    for ($w = 0; $w < $workers; $w++) {
        $d = json_decode(file_get_contents("$tmp/$w.json"), true);
        $waits = array_merge($waits, $d['waits']);
        $end = max($end, $d['end']);
        $gaveUp += $d['gave_up'];
        unlink("$tmp/$w.json");
    }
    rmdir($tmp);
    $stats = rl_cmd($lockSrv['dsn'], 'INFO', 'commandstats');
    $cpu = server_cpu(rl_cmd($lockSrv['dsn'], 'INFO', 'cpu')) - $cpu0;
    $server = command_count($stats);
    $detail = command_detail($stats);
    $sections = $workers * $rounds;
    $counter = (int) rl_cmd($dataSrv['dsn'], 'GET', $counterKey);
    return [
        'sections' => $sections, 'seconds' => $end - $start, 'lost' => $sections - $gaveUp - $counter,
        'gave_up' => $gaveUp, 'server' => $server, 'waits' => $waits, 'cpu' => $cpu, 'detail' => $detail,
    ];
}

function contend_worker(string $impl, int $w, int $rounds, int $holdUs, int $outUs, string $lockKey, string $counterKey,
                array $lockSrv, array $dataSrv, float $start, string $tmp): int
{
    require_once __DIR__ . '/ArticleLock.php';
    require_once __DIR__ . '/../tools/lib/resp.php';
    $data = class_exists('Redis') ? new Redis() : new RespRedis();
    $data->connect('127.0.0.1', $dataSrv['port']);
    [$lock, $acquire, $release] = match ($impl) {
        'article' => [new ArticleLock($lockKey, 60, 5, '127.0.0.1', $lockSrv['port']), 'addLock', 'releaseLock1'],
        'native' => [new Lock($lockKey, 60, 5, ['dsn' => $lockSrv['dsn']]), 'addLock', 'releaseLock'],
        'semaphore' => [new Semaphore($lockKey, 1, 60, 5, ['dsn' => $lockSrv['dsn']]), 'acquire', 'release'],
    };
    while (microtime(true) < $start) { usleep(1000); }
    $waits = [];
    $gaveUp = 0;
    for ($i = 0; $i < $rounds; $i++) {
        $t0 = hrtime(true);
        $token = $lock->$acquire();
        $waits[] = (hrtime(true) - $t0) / 1e6;
        if ($token === false) { $gaveUp++; continue; }
        $v = (int) $data->get($counterKey);     // not atomic on purpose: only the lock makes it safe
        if ($holdUs > 0) { usleep($holdUs); }
        $data->set($counterKey, $v + 1);
        $lock->$release($token);
        if ($outUs > 0) { usleep($outUs); }
    }
    // Written under another name and renamed, so the parent never reads half a file.
    file_put_contents("$tmp/$w.tmp", json_encode(['waits' => $waits, 'end' => microtime(true), 'gave_up' => $gaveUp]));
    rename("$tmp/$w.tmp", "$tmp/$w.json");
    return 0;
}
