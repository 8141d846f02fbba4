<?php
// make demo: many PHP processes contend for one lock and do a deliberately
// non-atomic read-modify-write under it. Prints live progress, then whether
// any update was lost and how long the workers waited for the lock.
// Settings: REDIS_LOCK_DSN (default: the throwaway server make demo starts),
// DEMO_WORKERS (8), DEMO_ROUNDS (150 per worker), DEMO_HOLD_US (1000).
$dsn = getenv('REDIS_LOCK_DSN') ?: getenv('REDIS_LOCK_TEST_DSN') ?: 'redis://127.0.0.1:6379';
$workers = (int) (getenv('DEMO_WORKERS') ?: 8);
$rounds = (int) (getenv('DEMO_ROUNDS') ?: 150);
$holdUs = (int) (getenv('DEMO_HOLD_US') ?: 1000);
$u = parse_url($dsn);
$redis = function () use ($u) {
    $r = new Redis();
    $r->connect($u['host'] ?? '127.0.0.1', $u['port'] ?? 6379, 2.0);
    if (isset($u['pass'])) { $r->auth(isset($u['user']) ? [$u['user'], $u['pass']] : $u['pass']); }
    return $r;
};
$run = bin2hex(random_bytes(4));
$lockKey = "demo:$run:lock";
$counterKey = "demo:$run:counter";
$tmp = sys_get_temp_dir() . "/redis-lock-demo-$run";
@mkdir($tmp);
$redis()->set($counterKey, 0);
printf("redis-lock demo: %d processes × %d critical sections, each holding the lock %.1f ms, on %s\n",
    $workers, $rounds, $holdUs / 1000, preg_replace('~//[^@/]*@~', '//***@', $dsn));

$t0 = microtime(true);
$pids = [];
for ($w = 0; $w < $workers; $w++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $r = $redis();
        $lock = new Lock($lockKey, 30, 5, ['dsn' => $dsn]);
        $waits = [];
        for ($i = 0; $i < $rounds; $i++) {
            $s = hrtime(true);
            $token = $lock->addLock();
            if ($token === false) { fwrite(STDERR, "worker $w: gave up waiting\n"); exit(1); }
            $waits[] = (hrtime(true) - $s) / 1e6;
            $v = (int) $r->get($counterKey);       // not atomic on purpose: the lock must make it safe
            usleep($holdUs);
            $r->set($counterKey, $v + 1);
            $lock->releaseLock($token);
        }
        file_put_contents("$tmp/$w", implode("\n", $waits));
        exit(0);
    }
    $pids[] = $pid;
}
$r = $redis();
$total = $workers * $rounds;
$running = $pids;
while ($running) {
    foreach ($running as $i => $pid) {
        if (pcntl_waitpid($pid, $status, WNOHANG) > 0) { unset($running[$i]); }
    }
    $done = (int) $r->get($counterKey);
    $el = microtime(true) - $t0;
    $bar = str_repeat('#', (int) (30 * $done / $total)) . str_repeat('.', 30 - (int) (30 * $done / $total));
    printf("\r[%s] %5d/%d sections  %6.0f/s  %5.1f s", $bar, $done, $total, $done / max($el, 1e-3), $el);
    usleep(100000);
}
$elapsed = microtime(true) - $t0;
$waits = [];
for ($w = 0; $w < $workers; $w++) {
    foreach (explode("\n", (string) @file_get_contents("$tmp/$w")) as $x) { if ($x !== '') { $waits[] = (float) $x; } }
    @unlink("$tmp/$w");
}
@rmdir($tmp);
sort($waits);
$pct = fn($p) => $waits ? $waits[min(count($waits) - 1, (int) floor($p / 100 * count($waits)))] : NAN;
$counter = (int) $r->get($counterKey);
$r->del($counterKey);
echo "\n\n";
printf("counter           %d of %d expected: %s\n", $counter, $total, $counter === $total ? 'exact, no lost update' : 'LOST ' . ($total - $counter) . ' UPDATES');
printf("throughput        %.0f critical sections/s over %.1f s\n", $total / $elapsed, $elapsed);
printf("wait for the lock p50 %.1f ms   p90 %.1f ms   p99 %.1f ms   max %.1f ms\n", $pct(50), $pct(90), $pct(99), end($waits));
exit($counter === $total ? 0 : 1);
