<?php
// make demo: many PHP processes contend for one lock and do a deliberately
// non-atomic read-modify-write under it, first with the article's class (the
// baseline, bench/ArticleLock.php), then with this extension. Prints live
// progress, then both side by side: whether any update was lost, the throughput,
// and how long the workers waited for the lock.
// Settings: REDIS_LOCK_DSN (default: the throwaway server make demo starts),
// DEMO_WORKERS (8), DEMO_ROUNDS (150 per worker), DEMO_HOLD_US (1000).
$dsn = getenv('REDIS_LOCK_DSN') ?: getenv('REDIS_LOCK_TEST_DSN') ?: 'redis://127.0.0.1:6379';
$workers = (int) (getenv('DEMO_WORKERS') ?: 8);
$rounds = (int) (getenv('DEMO_ROUNDS') ?: 150);
$holdUs = (int) (getenv('DEMO_HOLD_US') ?: 1000);
$u = parse_url($dsn);
// The counter goes through phpredis where it is installed, else through the
// repository's stand-in for it (RespRedis, tools/lib/resp.php: Debian ships no
// phpredis for PHP 8.5 and 8.6).
$phpredis = class_exists('Redis');
require __DIR__ . '/../tools/lib/resp.php';
$redis = function () use ($u, $phpredis) {
    $r = $phpredis ? new Redis() : new RespRedis();
    $r->connect($u['host'] ?? '127.0.0.1', $u['port'] ?? 6379, 2.0);
    if (isset($u['pass'])) { $r->auth(isset($u['user']) ? [$u['user'], $u['pass']] : $u['pass']); }
    return $r;
};
require __DIR__ . '/ArticleLock.php';
printf("redis-lock demo: %d processes × %d critical sections, each holding the lock %.1f ms, on %s\n",
    $workers, $rounds, $holdUs / 1000, preg_replace('~//[^@/]*@~', '//***@', $dsn));

/** One run of $impl ('article' or 'native'); returns the counter, the time taken and every wait. */
function run_demo(string $impl, callable $redis, string $dsn, array $u, int $workers, int $rounds, int $holdUs): array {
    $run = bin2hex(random_bytes(4));
    $lockKey = "demo:$run:lock";
    $counterKey = "demo:$run:counter";
    $tmp = sys_get_temp_dir() . "/redis-lock-demo-$run";
    @mkdir($tmp);
    $redis()->set($counterKey, 0);
    $t0 = microtime(true);
    $pids = [];
    for ($w = 0; $w < $workers; $w++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $r = $redis();
            $lock = $impl === 'article'
                ? new ArticleLock($lockKey, 30, 5, $u['host'] ?? '127.0.0.1', $u['port'] ?? 6379)
                : new Lock($lockKey, 30, 5, ['dsn' => $dsn]);
            $waits = [];
            for ($i = 0; $i < $rounds; $i++) {
                $s = hrtime(true);
                $token = $lock->addLock();
                if ($token === false) { fwrite(STDERR, "worker $w: gave up waiting\n"); exit(1); }
                $waits[] = (hrtime(true) - $s) / 1e6;
                $v = (int) $r->get($counterKey);       // not atomic on purpose: the lock must make it safe
                usleep($holdUs);
                $r->set($counterKey, $v + 1);
                $impl === 'article' ? $lock->releaseLock1($token) : $lock->releaseLock($token);
            }
            file_put_contents("$tmp/$w", implode("\n", $waits));
            exit(0);
        }
        $pids[] = $pid;
    }
    $r = $redis();
    $total = $workers * $rounds;
    $running = $pids;
    $label = $impl === 'article' ? 'article ' : 'redis_lock';
    while ($running) {
        foreach ($running as $i => $pid) {
            if (pcntl_waitpid($pid, $status, WNOHANG) > 0) { unset($running[$i]); }
        }
        $done = (int) $r->get($counterKey);
        $el = microtime(true) - $t0;
        $bar = str_repeat('#', (int) (30 * $done / $total)) . str_repeat('.', 30 - (int) (30 * $done / $total));
        printf("\r%-10s [%s] %5d/%d sections  %6.0f/s  %5.1f s", $label, $bar, $done, $total, $done / max($el, 1e-3), $el);
        usleep(100000);
    }
    echo "\n";
    $elapsed = microtime(true) - $t0;
    $waits = [];
    for ($w = 0; $w < $workers; $w++) {
        foreach (explode("\n", (string) @file_get_contents("$tmp/$w")) as $x) { if ($x !== '') { $waits[] = (float) $x; } }
        @unlink("$tmp/$w");
    }
    @rmdir($tmp);
    sort($waits);
    $counter = (int) $r->get($counterKey);
    $r->del($counterKey, $lockKey);
    return ['counter' => $counter, 'total' => $total, 'elapsed' => $elapsed, 'waits' => $waits];
}

$results = [];
// The article's class connects to a plain host:port without credentials, as written.
$impls = ['native'];
if (!$phpredis) {
    printf("(no phpredis for PHP %s here, and the article's class is written on it: only this extension's Lock runs)\n", PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION);
} elseif (($u['scheme'] ?? '') !== 'redis' || isset($u['pass'])) {
    echo "(the article's class cannot use this dsn: it knows no TLS, socket or password; skipped)\n";
} else {
    $impls = ['article', 'native'];
    printf("The same load runs twice: first on the article's class (phpredis, SET NX and a 5 ms sleep\nbetween tries), then on this extension's Lock.\n");
}
foreach ($impls as $impl) {
    $results[$impl] = run_demo($impl, $redis, $dsn, $u, $workers, $rounds, $holdUs);
}
$pct = fn(array $w, $p) => $w ? $w[min(count($w) - 1, (int) floor($p / 100 * count($w)))] : NAN;
$cells = function (callable $f) use ($results) { return array_map($f, $results); };
$row = isset($results['article'])
    ? fn(string $name, array $c) => printf("%-20s %-28s %-28s\n", $name, $c['article'], $c['native'])
    : fn(string $name, array $c) => printf("%-20s %-28s\n", $name, $c['native']);
echo "\n";
$row('', ['article' => "article's class (phpredis)", 'native' => 'redis_lock']);
$row('counter', $cells(fn($x) => sprintf('%d of %d: %s', $x['counter'], $x['total'], $x['counter'] === $x['total'] ? 'exact' : 'LOST ' . ($x['total'] - $x['counter']))));
$row('throughput', $cells(fn($x) => sprintf('%.0f sections/s', $x['total'] / $x['elapsed'])));
$row('wait p50', $cells(fn($x) => sprintf('%.1f ms', $pct($x['waits'], 50))));
$row('wait p99', $cells(fn($x) => sprintf('%.1f ms', $pct($x['waits'], 99))));
$row('wait max', $cells(fn($x) => sprintf('%.1f ms', $x['waits'] ? end($x['waits']) : NAN)));
if (isset($results['article'])) {
    echo "\nThe article's class polls: whoever sleeps through a release waits another 5 ms, so a few\n",
        "waiters starve while others win again. redis_lock queues its waiters and hands the lock\n",
        "to the next one on release: the waits stay close to the fair share.\n";
}
exit($results['native']['counter'] === $results['native']['total'] ? 0 : 1);
