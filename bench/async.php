<?php
// Waits an event loop drives (docs/async.md): one process with N pending waits on N
// keys (default 200), held by another process. Measured: the waiting process's
// memory for them (PHP's, and its resident set), its CPU while they idle (2 s of
// stream_select() on their streams: the only work is each wait's look every second,
// RECHECK_EVERY, whatever the holder's lease), and how fast a release wakes them: the
// holder releases the keys one by one, 5 ms apart, and each wait notes when poll()
// returned its token. The same releases wake B blocking waiters (default 20
// processes, one key each) in the same run, alternately, ROUNDS rounds; quoted: the
// p50 and p99 of each side's wake latencies, and the median over rounds of the
// ratio of the p99s.
//
// Usage: php -n -d extension=... -d extension=posix bench/async.php [N [B [ROUNDS]]]
// Writes bench/results/async.md.
require __DIR__ . '/../php-tests/_helper.inc';

[$n, $b, $rounds] = [(int) ($argv[1] ?? 200), (int) ($argv[2] ?? 20), (int) ($argv[3] ?? 5)];
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$opts = ['dsn' => $dsn];
$dir = sys_get_temp_dir() . '/rl-bench-async-' . getmypid();
@mkdir($dir);

/** The holder: takes $keys, signals, then releases them 5 ms apart, noting each release's start. */
function holder(array $keys, array $opts, string $file): int {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $locks = $tokens = [];
        foreach ($keys as $k) { $locks[$k] = new Lock($k, 0, 60, $opts); $tokens[$k] = $locks[$k]->addLock(); }
        touch("$file.held");
        while (!file_exists("$file.go")) { usleep(1000); }
        $at = [];
        foreach ($keys as $k) { $at[$k] = microtime(true); $locks[$k]->releaseLock($tokens[$k]); usleep(5000); }
        file_put_contents($file, json_encode($at));
        exit(0);
    }
    while (!file_exists("$file.held")) { usleep(1000); }
    return $pid;
}

function pct(array $xs, float $p): float { sort($xs); return $xs[(int) min(count($xs) - 1, floor($p * count($xs)))]; }

$rows = [];
for ($r = 0; $r < $rounds; $r++) {
    foreach ($r % 2 ? ['blocking', 'async'] : ['async', 'blocking'] as $side) {
        $count = $side === 'async' ? $n : $b;
        $keys = [];
        for ($i = 0; $i < $count; $i++) { $keys[] = "bench-async:$r:$side:$i"; }
        $file = "$dir/$r-$side";
        $hpid = holder($keys, $opts, $file);
        $got = [];
        if ($side === 'async') {
            $m0 = memory_get_usage();
            $locks = $waits = [];
            foreach ($keys as $k) { $locks[$k] = new Lock($k, 30, 60, $opts); $waits[$k] = $locks[$k]->addLockAsync(); }
            $mem = memory_get_usage() - $m0;
            $rss = (int) preg_replace('/\D/', '', (string) shell_exec('grep VmRSS /proc/' . getmypid() . '/status'));
            // Idle: 2 s of the loop with nothing released.
            $ru0 = getrusage();
            $until = microtime(true) + 2.0;
            while (($left = $until - microtime(true)) > 0) {
                $rs = array_map(fn($w) => $w->stream(), $waits);
                $x = $y = null;
                if (@stream_select($rs, $x, $y, 0, (int) ($left * 1e6)) > 0) {
                    foreach ($rs as $k => $_) { $waits[$k]->poll(); }
                }
            }
            $ru1 = getrusage();
            $cpu = ($ru1['ru_utime.tv_sec'] - $ru0['ru_utime.tv_sec']) + ($ru1['ru_utime.tv_usec'] - $ru0['ru_utime.tv_usec']) / 1e6
                 + ($ru1['ru_stime.tv_sec'] - $ru0['ru_stime.tv_sec']) + ($ru1['ru_stime.tv_usec'] - $ru0['ru_stime.tv_usec']) / 1e6;
            touch("$file.go");
            while ($waits) {
                $rs = array_map(fn($w) => $w->stream(), $waits);
                $x = $y = null;
                if (stream_select($rs, $x, $y, 5, 0) === false) { break; }
                foreach ($rs as $k => $_) {
                    if ($waits[$k]->poll()) { $got[$k] = microtime(true); unset($waits[$k]); }
                }
            }
        } else {
            $pids = [];
            foreach ($keys as $i => $k) {
                $pid = pcntl_fork();
                if ($pid === 0) {
                    $l = new Lock($k, 30, 60, $opts);
                    $l->addLock();
                    file_put_contents("$file.w$i", (string) microtime(true));
                    exit(0);
                }
                $pids[] = $pid;
            }
            usleep(300000);    // every waiter queued
            touch("$file.go");
            foreach ($pids as $pid) { pcntl_waitpid($pid, $st); }
            foreach ($keys as $i => $k) { $got[$k] = (float) @file_get_contents("$file.w$i"); @unlink("$file.w$i"); }
        }
        pcntl_waitpid($hpid, $st);
        $at = json_decode((string) file_get_contents($file), true);
        @unlink($file); @unlink("$file.held"); @unlink("$file.go");
        $lat = [];
        foreach ($keys as $k) { $lat[] = ($got[$k] - $at[$k]) * 1000; }
        $rows[$r][$side] = ['p50' => pct($lat, 0.5), 'p99' => pct($lat, 0.99)];
        if ($side === 'async') { $rows[$r]['mem'] = $mem; $rows[$r]['rss'] = $rss; $rows[$r]['cpu'] = $cpu; }
        unset($locks, $waits);
    }
}
rl_stop_redis($srv);
@rmdir($dir);
$med = fn(array $xs) => pct($xs, 0.5);
$col = fn(string $side, string $k) => array_map(fn($row) => $row[$side][$k], $rows);
$out = sprintf("| %d pending waits in one process | per round (median of %d) |\n|---|---|\n", $n, $rounds);
$out .= sprintf("| PHP memory for them | %.0f KiB (%.1f KiB a wait) |\n", $med(array_column($rows, 'mem')) / 1024, $med(array_column($rows, 'mem')) / 1024 / $n);
$out .= sprintf("| resident set of the process | %.1f MiB |\n", $med(array_column($rows, 'rss')) / 1024);
$out .= sprintf("| CPU while idle (2 s) | %.1f ms/s |\n", $med(array_column($rows, 'cpu')) / 2 * 1000);
$out .= sprintf("| wake latency p50 / p99, async (%d waits) | %.2f / %.2f ms |\n", $n, $med($col('async', 'p50')), $med($col('async', 'p99')));
$out .= sprintf("| wake latency p50 / p99, blocking (%d processes) | %.2f / %.2f ms |\n", $b, $med($col('blocking', 'p50')), $med($col('blocking', 'p99')));
$out .= sprintf("| async p99 / blocking p99 (median of per-round ratios) | %.2f |\n", $med(array_map(fn($row) => $row['async']['p99'] / max(1e-6, $row['blocking']['p99']), $rows)));
echo $out;
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/async.md', "# Waits an event loop drives (bench/async.php)\n\n"
    . "`php -n -d extension=… -d extension=posix bench/async.php $n $b $rounds`, " . php_uname('n') . ", " . date('Y-m-d') . ".\n\n" . $out);
