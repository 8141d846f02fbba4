<?php
// What durable grants cost (`durable => 1`), beside the plain lock and `wait_replicas
// => 1` (best effort), on a throwaway master with one replica on loopback, in one run
// (interleaved rounds, so that drift on a noisy machine hits every case):
// - uncontended acquire+release cycles: µs per cycle, the master's CPU per cycle
//   (INFO cpu), the commands it ran per cycle (commandstats, scripts' inner commands
//   included) and the client's round trips per cycle (its SETs, scripts and WAITs:
//   the renewal and the WAIT after it go in one round trip, counted once);
// - 8 processes contending for one key, 1 ms holds: sections per second, wait p50 and
//   p99, the master's CPU per section. Every hand-over to a durable waiter is checked
//   by that waiter (its renewal and WAIT) before it counts.
// Ratios are medians over the rounds of each round's ratio to the plain lock.
// Prints a Markdown table and writes bench/results/durable.md.
// Usage: php ... bench/durable.php [cycles [sections]]
require __DIR__ . '/../php-tests/_helper.inc';
require_once __DIR__ . '/lib.php';

$cycles = (int) ($argv[1] ?? 3000);
$sections = (int) ($argv[2] ?? 800);
$rounds = (int) (getenv('BENCH_ROUNDS') ?: 5);
$master = rl_start_redis();
$replica = rl_start_redis(['--replicaof', '127.0.0.1', (string) $master['port']]);
try {
    $up = microtime(true) + 15;
    while (!str_contains((string) rl_poll($replica['dsn'], 'INFO', 'replication'), 'master_link_status:up')) {
        if (microtime(true) > $up) { throw new RuntimeException('the replica did not sync'); }
        usleep(20000);
    }
    $dsn = $master['dsn'];
    $cases = [
        'plain' => ['dsn' => $dsn],
        'wait_replicas 1 (best effort)' => ['dsn' => $dsn, 'wait_replicas' => 1],
        'durable 1' => ['dsn' => $dsn, 'durable' => 1],
    ];
    $calls = function (string $info, string ...$names): int {
        $n = 0;
        foreach ($names as $name) { preg_match("/^cmdstat_$name:calls=(\\d+)/m", $info, $m); $n += (int) ($m[1] ?? 0); }
        return $n;
    };
    // One case's uncontended cycles: µs per cycle, and the master's CPU µs, commands
    // and round trips per cycle.
    $cycle = function (array $o, int $n) use ($dsn, $calls): array {
        $l = new Lock('bench:durable', 0, 10, $o);
        for ($i = 0; $i < 50; $i++) { $l->releaseLock($l->addLock()); }   // connected, scripts loaded
        rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
        $cpu0 = server_cpu(rl_cmd($dsn, 'INFO', 'cpu'));
        $t0 = hrtime(true);
        for ($i = 0; $i < $n; $i++) {
            $t = $l->addLock();
            if ($t === false || !$l->releaseLock($t)) { throw new RuntimeException('cycle failed'); }
        }
        $us = (hrtime(true) - $t0) / 1e3 / $n;
        $cpu = server_cpu(rl_cmd($dsn, 'INFO', 'cpu')) - $cpu0;
        $info = rl_cmd($dsn, 'INFO', 'commandstats');
        // A WAIT goes in one round trip with the renewal before it: the client's SETs and
        // scripts are its round trips.
        $trips = $calls($info, 'set', 'evalsha', 'eval');
        return ['us' => $us, 'cpu' => 1e6 * $cpu / $n, 'commands' => command_count($info) / $n, 'trips' => $trips / $n];
    };
    // One case's contended run: 8 processes, 1 ms holds.
    $contend = function (array $o, int $total) use ($dsn): array {
        $workers = 8;
        $each = intdiv($total, $workers);
        $cpu0 = server_cpu(rl_cmd($dsn, 'INFO', 'cpu'));
        $tmp = sys_get_temp_dir() . '/rl-bench-durable-' . getmypid();
        $start = microtime(true) + 0.3;
        $pids = [];
        for ($w = 0; $w < $workers; $w++) {
            $pid = pcntl_fork();
            if ($pid === 0) {
                $l = new Lock('bench:durable-c', 5.0, 10, $o);
                $l->isLocked();
                time_sleep_until($start);
                $waits = [];
                for ($i = 0; $i < $each; $i++) {
                    $t0 = hrtime(true);
                    $t = $l->addLock();
                    $waits[] = (hrtime(true) - $t0) / 1e6;
                    if ($t === false) { exit(1); }
                    usleep(1000);
                    $l->releaseLock($t);
                }
                file_put_contents("$tmp-$w", json_encode(['waits' => $waits, 'end' => microtime(true)]));
                exit(0);
            }
            $pids[] = $pid;
        }
        foreach ($pids as $pid) { pcntl_waitpid($pid, $st); if (pcntl_wexitstatus($st) !== 0) { throw new RuntimeException('a worker failed'); } }
        $waits = [];
        $end = $start;
        for ($w = 0; $w < $workers; $w++) {
            $d = json_decode(file_get_contents("$tmp-$w"), true);
            unlink("$tmp-$w");
            $waits = array_merge($waits, $d['waits']);
            $end = max($end, $d['end']);
        }
        $n = $each * $workers;
        return ['rate' => $n / ($end - $start), 'p50' => pct($waits, 50), 'p99' => pct($waits, 99),
                'cpu' => 1e6 * (server_cpu(rl_cmd($dsn, 'INFO', 'cpu')) - $cpu0) / $n];
    };
    $u = $c = [];
    for ($r = 0; $r < $rounds; $r++) {
        $names = array_keys($cases);
        if ($r % 2) { $names = array_reverse($names); }
        foreach ($names as $name) { $u[$name][] = $cycle($cases[$name], $cycles); }
        foreach ($names as $name) { $c[$name][] = $contend($cases[$name], $sections); }
    }
    $med = fn(array $xs) => pct($xs, 50);
    $ratio = fn(array $of, string $name, string $what) => $med(array_map(fn($a, $b) => $a[$what] / $b[$what], $of[$name], $of['plain']));
    $rows = ["| lock | µs per cycle (vs plain) | round trips per cycle | commands per cycle (master) | master CPU per cycle (vs plain) | 8 × 1 ms: sections/s (vs plain) | wait p50 / p99 (ms) | master CPU per section (vs plain) |",
             "|---|---|---|---|---|---|---|---|"];
    foreach ($cases as $name => $_) {
        $col = fn(array $of, string $what) => $med(array_column($of[$name], $what));
        $rows[] = sprintf('| %s | %.0f (%.2f×) | %.1f | %.1f | %.1f µs (%.2f×) | %.0f (%.2f×) | %.1f / %.1f | %.1f µs (%.2f×) |', $name,
            $col($u, 'us'), $ratio($u, $name, 'us'), $col($u, 'trips'), $col($u, 'commands'), $col($u, 'cpu'), $ratio($u, $name, 'cpu'),
            $col($c, 'rate'), $ratio($c, $name, 'rate'), $col($c, 'p50'), $col($c, 'p99'), $col($c, 'cpu'), $ratio($c, $name, 'cpu'));
    }
    $v = rl_cmd($dsn, 'INFO', 'server');
    preg_match('/redis_version:(\S+)/', $v, $ver);
    $md = "# Durable grants: what they cost\n\n"
        . "`php -n -d extension=posix -d extension=target/release/libredis_lock.so bench/durable.php $cycles $sections` (`make bench-durable`): "
        . "Redis {$ver[1]}, a master and one replica on loopback, $rounds interleaved rounds; $cycles uncontended cycles and $sections contended sections per case and round. "
        . "Medians; ratios are medians of per-round ratios to the plain lock.\n\n" . implode("\n", $rows) . "\n";
    echo $md;
    if ((getenv('BENCH_WRITE') ?: '1') === '1') { file_put_contents(__DIR__ . '/results/durable.md', $md); }
} finally {
    rl_stop_redis($replica);
    rl_stop_redis($master);
}
