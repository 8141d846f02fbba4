--TEST--
Waits an event loop drives: one process runs 50 fibers contending for 5 keys (fair) with 8 other processes that wait blocking, under a scheduler of a few lines over stream_select(), while a ticker fiber keeps a 10 ms beat: no beat is late by more than 50 ms while waits are pending; every counter (read, a pause, written, under the lock) is exact; on each key the fibers get the lock in the order they queued. The same ticker with one fiber's wait made blocking (addLock()) is late by far more: the check can fail
--CONFLICTS--
cpu # 9 processes, a 10 ms beat
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/../docs/examples/fibers.php';
$dsn = rl_dsn();
$opts = ['dsn' => $dsn, 'fair' => true] + RL_PATIENT;
$keys = [];
for ($i = 0; $i < 5; $i++) { $keys[] = rl_key("ticker$i"); }
$counter = fn(string $k) => "$k:count";
$until = microtime(true) + 4.0;

// Eight processes that wait blocking, each on the five keys in turn.
$others = [];
$done = [];
for ($p = 0; $p < 8; $p++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $n = array_fill(0, 5, 0);
        $i = $p;
        while (microtime(true) < $until) {
            $ki = $i++ % 5;
            $k = $keys[$ki];
            $lock = new Lock($k, 10, 5, $opts);
            $t = $lock->addLock();
            if ($t === false) { continue; }
            $v = (int) rl_cmd($dsn, 'GET', $counter($k));
            usleep(2000);
            rl_cmd($dsn, 'SET', $counter($k), (string) ($v + 1));
            $lock->releaseLock($t);
            $n[$ki]++;
        }
        file_put_contents(sys_get_temp_dir() . "/rl-113-" . posix_getppid() . "-$p", json_encode($n));
        exit(0);
    }
    $others[] = $pid;
}

// This process: 50 fibers and a ticker.
$late = 0.0;
$pending = 0;
$queued = array_fill(0, 5, []);   // per key: fiber ids in the order their waits were queued
$granted = array_fill(0, 5, []);  // per key: the order they got it
$ours = array_fill(0, 5, 0);
$fns = [];
for ($f = 0; $f < 50; $f++) {
    $fns["f$f"] = function () use ($f, $keys, $opts, $dsn, $counter, $until, &$pending, &$queued, &$granted, &$ours) {
        $ki = $f % 5;
        $k = $keys[$ki];
        $lock = new Lock($k, 10, 5, $opts);
        $got = 0;
        while (microtime(true) < $until) {
            $w = $lock->addLockAsync();
            $was = !$w->isDone();
            if ($was) { $queued[$ki][] = $f; $pending++; }
            $t = rl_await($w);
            if ($was) { $pending--; $granted[$ki][] = $f; }
            if ($t === false) { continue; }
            $v = (int) rl_cmd($dsn, 'GET', $counter($k));
            rl_fiber_sleep(0.002);
            rl_cmd($dsn, 'SET', $counter($k), (string) ($v + 1));
            $lock->releaseLock($t);
            $ours[$ki]++;
            $got++;
            rl_fiber_sleep(0.001);
        }
        return $got;
    };
}
$beats = 0;
$ticker = function (float $until) use (&$late, &$pending, &$beats) { return function () use (&$late, &$pending, &$beats, $until) {
    $next = microtime(true);
    while (microtime(true) < $until) {
        $next += 0.010;
        $was = $pending > 0;
        rl_fiber_sleep(max(0, $next - microtime(true)));
        $lateness = microtime(true) - $next;
        if ($was || $pending > 0) { $late = max($late, $lateness); $beats++; }
        if ($lateness > 0.010) { $next = microtime(true); }
    }
}; };
$fns['ticker'] = $ticker($until + 0.5);
$results = rl_run_fibers($fns);
foreach ($others as $pid) { pcntl_waitpid($pid, $status); }

echo "every fiber got the lock: ", min(array_map('intval', array_diff_key($results, ['ticker' => 1]))) > 0 ? 'yes' : 'no', "\n";
echo "beats while waits were pending: ", $beats > 100 ? 'many' : $beats, "\n";
printf("latest beat late by at most 50 ms: %s\n", $late <= 0.050 ? 'yes' : sprintf('no (%.1f ms)', $late * 1000));
// Every counter exact: each equals the holds taken of its key, by the fibers and by
// the blocking processes.
$exact = true;
foreach ($keys as $i => $k) {
    $want = $ours[$i];
    for ($p = 0; $p < 8; $p++) {
        $file = sys_get_temp_dir() . '/rl-113-' . getmypid() . "-$p";
        $want += json_decode((string) @file_get_contents($file), true)[$i] ?? 0;
    }
    $have = (int) rl_cmd($dsn, 'GET', $counter($k));
    if ($have !== $want) { $exact = false; echo "key $i: counter $have, holds $want\n"; }
}
for ($p = 0; $p < 8; $p++) { @unlink(sys_get_temp_dir() . '/rl-113-' . getmypid() . "-$p"); }
echo "counters exact: ", $exact ? 'yes' : 'no', "\n";
echo "fibers' holds: ", array_sum($ours) > 100 ? 'over 100' : array_sum($ours), "\n";
// Fair order per key: the fibers got each key in the order they queued for it.
$fair = true;
foreach ($queued as $i => $q) {
    if ($q !== $granted[$i]) { $fair = false; echo "key $i: queued ", implode(',', array_slice($q, 0, 20)), " granted ", implode(',', array_slice($granted[$i], 0, 20)), "\n"; }
}
echo "fair order: ", $fair ? 'yes' : 'no', "\n";
// Nothing held or queued after.
$left = 0;
foreach ($keys as $k) { $left += (new Lock($k, 0, 5, $opts))->isLocked() ? 1 : 0; }
$scan = rl_cmd($dsn, 'KEYS', 'rl-test:ticker*');
$queues = array_filter((array) $scan, fn($x) => !str_ends_with((string) $x, ':count'));
echo "left held: $left, other keys left: ", count($queues), "\n";

// The control: one fiber's wait made blocking. The key is held for 0.3 s by another
// process; the ticker must see a beat late by far more than 50 ms.
$k = rl_key('blocking');
$pid = pcntl_fork();
if ($pid === 0) {
    $l = new Lock($k, 0, 5, $opts);
    $l->addLock();
    usleep(300000);
    exit(0);
}
usleep(100000);
$late = 0.0;
$pending = 0;
$beats = 0;
rl_run_fibers([
    'ticker' => $ticker(microtime(true) + 0.6),
    'blocking' => function () use ($k, $opts, &$pending) {
        rl_fiber_sleep(0.05);
        $pending++;
        $t = (new Lock($k, 2, 5, $opts))->addLock();
        // Counted as pending until the ticker has had its turn.
        rl_fiber_sleep(0.02);
        $pending--;
        return $t !== false;
    },
]);
pcntl_waitpid($pid, $status);
printf("with a blocking wait, a beat late by over 50 ms: %s\n", $late > 0.050 ? 'yes' : sprintf('no (%.1f ms)', $late * 1000));
--EXPECT--
every fiber got the lock: yes
beats while waits were pending: many
latest beat late by at most 50 ms: yes
counters exact: yes
fibers' holds: over 100
fair order: yes
left held: 0, other keys left: 0
with a blocking wait, a beat late by over 50 ms: yes
