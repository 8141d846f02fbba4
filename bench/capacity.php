<?php
// Capacity: what locks cost one Redis, beside the article's class (phpredis) in the
// same run, each part on a redis-server of its own started for it.
//
// 1. Many keys, no contention: P processes (8), each cycling over 1000 keys of its
//    own (addLock(), releaseLock()). Lock cycles/s, and the Redis CPU per cycle
//    (INFO cpu, user and system), whose inverse is the cycles one Redis core can
//    serve. Beside them, redis-benchmark's SET NX PX and DEL on the same server: a
//    cycle of two plain commands, the ceiling of any lock.
// 2. One key, W waiters (8, then 500): a holder holds, W processes queue behind it
//    (addLock(), fair mode), and the release starts a chain of W hand-overs (each
//    holder releases at once). Hand-overs/s, which should not fall as the queue
//    grows; Redis memory per waiter while they wait (in keys: the queue's MEMORY
//    USAGE; in all: INFO used_memory, which counts each waiter's connection as it
//    does any client's); Redis CPU per second while they wait on a held
//    lock, against the article's class, whose waiters poll; keys left at the end.
// 3. 100,000 locks held at once (CAP_LOCKS): Redis memory per held lock against
//    the article's plain key, and keys left after every release.
//
// Usage: php -n -d extension=posix -d extension=redis_lock [phpredis] bench/capacity.php
//   CAP_PROCS, CAP_CYCLES (per process), CAP_WAITERS ("8,500"), CAP_LOCKS, BENCH_ROUNDS
// Prints a Markdown table and writes bench/results/capacity.md.
require __DIR__ . '/ArticleLock.php';
require __DIR__ . '/../php-tests/_helper.inc';
require __DIR__ . '/commands.php';

$article = class_exists('Redis');
if (!$article) {
    echo "(no phpredis for this PHP, and the article's class is written on it: only redis_lock runs; bench/results/capacity.md is left as it is)\n";
}
$procs = (int) (getenv('CAP_PROCS') ?: 8);
$cycles = (int) (getenv('CAP_CYCLES') ?: 3000);
$waiterCounts = array_map('intval', explode(',', getenv('CAP_WAITERS') ?: '8,500'));
$locks = (int) (getenv('CAP_LOCKS') ?: 100000);
$rounds = (int) (getenv('BENCH_ROUNDS') ?: 3);
$rows = [];

/** INFO's field $name (a number). */
function info_num(string $dsn, string $section, string $name): float
{
    preg_match('/^' . preg_quote($name, '/') . ':([0-9.]+)/m', rl_cmd($dsn, 'INFO', $section), $m);
    return (float) ($m[1] ?? 0);
}

/** Keys on the server, the fencing counters (`…:fence`, kept for good) apart. */
function keys_left(string $dsn): int
{
    $n = 0;
    $cursor = '0';
    do {
        [$cursor, $batch] = rl_cmd($dsn, 'SCAN', $cursor, 'COUNT', '1000');
        foreach ($batch as $k) { if (!str_ends_with($k, ':fence')) { $n++; } }
    } while ($cursor !== '0');
    return $n;
}

/** Forks $n workers running $fn($i); waits for all; returns the wall seconds from $start. */
function fork_all(int $n, callable $fn): void
{
    $pids = [];
    for ($i = 0; $i < $n; $i++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $rc = 1;
            try { $rc = $fn($i) ? 0 : 1; } catch (Throwable $e) { fwrite(STDERR, "worker $i: $e\n"); }
            exit($rc);
        }
        $pids[] = $pid;
    }
    $failed = 0;
    foreach ($pids as $pid) { pcntl_waitpid($pid, $st); $failed += pcntl_wexitstatus($st) !== 0 ? 1 : 0; }
    if ($failed) { throw new RuntimeException("$failed workers failed"); }
}

function median(array $xs): float { sort($xs); $n = count($xs); return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2; }

// 1. Many keys, no contention.
$srv = rl_start_redis();
try {
    $dsn = $srv['dsn'];
    $impls = $article ? ['article', 'native'] : ['native'];
    $per = [];
    for ($r = 0; $r < $rounds; $r++) {
        foreach ($r % 2 ? array_reverse($impls) : $impls as $impl) {
            $cpu0 = server_cpu(rl_cmd($dsn, 'INFO', 'cpu'));
            $t0 = microtime(true);
            fork_all($procs, function (int $p) use ($impl, $cycles, $srv) {
                $keys = array_map(fn($i) => "cap:$p:$i", range(0, 999));
                if ($impl === 'article') {
                    $a = new ArticleLock($keys[0], 5, 5, '127.0.0.1', $srv['port']);
                    for ($i = 0; $i < $cycles; $i++) { $a->key = $keys[$i % 1000]; $a->releaseLock1($a->addLock()); }
                } else {
                    $objs = array_map(fn($k) => new Lock($k, 5, 5, ['dsn' => $srv['dsn']]), $keys);
                    for ($i = 0; $i < $cycles; $i++) { $l = $objs[$i % 1000]; $l->releaseLock($l->addLock()); }
                }
                return true;
            });
            $secs = microtime(true) - $t0;
            $n = $procs * $cycles;
            $per[$impl][] = ['rate' => $n / $secs, 'cpu' => 1e6 * (server_cpu(rl_cmd($dsn, 'INFO', 'cpu')) - $cpu0) / $n];
        }
    }
    $left = keys_left($dsn);
    // The ceiling: SET NX PX and DEL of random keys, as many clients, one command a request.
    $bench = fn(string ...$cmd) => (function () use ($srv, $procs, $cycles, $cmd, $dsn) {
        $cpu0 = server_cpu(rl_cmd($dsn, 'INFO', 'cpu'));
        $n = $procs * $cycles;
        $out = shell_exec(implode(' ', array_map('escapeshellarg', array_merge([rl_bin('benchmark'), '-p', (string) $srv['port'], '-c', (string) $procs,
            '-n', (string) $n, '-r', '100000', '-q'], $cmd))) . ' 2>/dev/null');
        preg_match_all('/([0-9.]+) requests per second/', (string) $out, $m);
        return ['rate' => (float) end($m[1]), 'cpu' => 1e6 * (server_cpu(rl_cmd($dsn, 'INFO', 'cpu')) - $cpu0) / $n];
    })();
    $set = $bench('SET', 'cap:__rand_int__', 'x', 'NX', 'PX', '5000');
    $del = $bench('DEL', 'cap:__rand_int__');
    $ceiling = ['rate' => 1 / (1 / $set['rate'] + 1 / $del['rate']), 'cpu' => $set['cpu'] + $del['cpu']];
    foreach ($impls as $impl) {
        $rate = median(array_column($per[$impl], 'rate'));
        $cpu = median(array_column($per[$impl], 'cpu'));
        $rows[] = ["$procs processes, 1000 keys each, no contention", $impl === 'article' ? 'article class (phpredis)' : 'redis_lock',
            sprintf('%.0f cycles/s; Redis CPU %.1f µs/cycle, so %.0f cycles/s per Redis core', $rate, $cpu, 1e6 / $cpu)];
    }
    $rows[] = ["$procs processes, 1000 keys each, no contention", 'redis-benchmark SET NX PX + DEL (the ceiling)',
        sprintf('%.0f pairs/s; Redis CPU %.1f µs/pair, so %.0f pairs/s per Redis core', $ceiling['rate'], $ceiling['cpu'], 1e6 / $ceiling['cpu'])];
    if ($article) {
        $ratios = [];
        foreach ($per['native'] as $i => $n) { $ratios[] = $n['cpu'] / $per['article'][$i]['cpu']; }
        $rows[] = ["$procs processes, 1000 keys each, no contention", 'redis_lock vs article', sprintf('Redis CPU per cycle %.2f× (median of per-round ratios)', median($ratios))];
    }
    $rows[] = ["$procs processes, 1000 keys each, no contention", 'keys left after both', (string) $left];
} finally {
    rl_stop_redis($srv);
}

// 2. One key, W waiters.
foreach ($waiterCounts as $w) {
    $srv = rl_start_redis(['--maxclients', '10000']);
    try {
        $dsn = $srv['dsn'];
        $key = 'cap:one';
        $o = ['dsn' => $dsn, 'fair' => true];
        $holder = new Lock($key, 0, 60, $o);
        $token = $holder->addLock();
        // The scripts loaded, and this process listening, before the baseline: a wait
        // that gives up (queue, cancel) in a child.
        $pid = pcntl_fork();
        if ($pid === 0) { exit((new Lock($key, 0.05, 60, $o))->addLock() === false ? 0 : 1); }
        pcntl_waitpid($pid, $st);
        usleep(100000);
        $mem0 = info_num($dsn, 'memory', 'used_memory');
        $go = sys_get_temp_dir() . '/rl-cap-' . getmypid();
        @unlink($go);
        $pid = pcntl_fork();
        if ($pid === 0) {
            // The waiters: each queues, takes the lock when handed it, and releases at once.
            try {
                fork_all($w, function () use ($key, $o) {
                    $l = new Lock($key, 120, 60, $o);
                    $t = $l->addLock();
                    return $t !== false && $l->releaseLock($t);
                });
                exit(0);
            } catch (Throwable $e) { fwrite(STDERR, "$e\n"); exit(1); }
        }
        $deadline = microtime(true) + 120;
        while (rl_cmd($dsn, 'LLEN', "{{$key}}:queue") < $w && microtime(true) < $deadline) { usleep(20000); }
        $queued = (int) rl_cmd($dsn, 'LLEN', "{{$key}}:queue");
        usleep(200000);
        $mem = info_num($dsn, 'memory', 'used_memory') - $mem0;
        $inKeys = (int) rl_cmd($dsn, 'MEMORY', 'USAGE', "{{$key}}:queue");
        // A second of waiting on a held lock: what it costs the server.
        $cpu0 = server_cpu(rl_cmd($dsn, 'INFO', 'cpu'));
        sleep(1);
        $idle = 1e6 * (server_cpu(rl_cmd($dsn, 'INFO', 'cpu')) - $cpu0);
        $t0 = microtime(true);
        $holder->releaseLock($token);
        pcntl_waitpid($pid, $st);
        $secs = microtime(true) - $t0;
        $ok = pcntl_wexitstatus($st) === 0 && $queued === $w;
        $rows[] = ["one key, $w waiters (fair)", 'redis_lock', sprintf('%s%.0f hand-overs/s; while queued: %.0f bytes of Redis memory per waiter in keys (MEMORY USAGE of the queue), %.0f in all (INFO used_memory: its connection, as any client\'s, is most of it), Redis CPU %.0f µs per second; keys left %d',
            $ok ? '' : "(only $queued queued, or a waiter failed) ", $w / $secs, $inKeys / $w, $mem / $w, $idle, keys_left($dsn))];
        if ($article) {
            // The article's waiters poll: the same wait, measured on the server.
            $a = new ArticleLock("$key:a", 5, 60, '127.0.0.1', $srv['port']);
            $v = $a->addLock();
            $pid = pcntl_fork();
            if ($pid === 0) {
                fork_all($w, function () use ($key, $srv) {
                    $l = new ArticleLock("$key:a", 2, 60, '127.0.0.1', $srv['port']);
                    $l->addLock();
                    return true;
                });
                exit(0);
            }
            usleep(1000000);
            $cpu0 = server_cpu(rl_cmd($dsn, 'INFO', 'cpu'));
            sleep(1);
            $polling = 1e6 * (server_cpu(rl_cmd($dsn, 'INFO', 'cpu')) - $cpu0);
            pcntl_waitpid($pid, $st);
            $a->releaseLock1($v);
            $rows[] = ["one key, $w waiters", 'article class (phpredis)', sprintf('while waiting: Redis CPU %.0f µs per second (its waiters poll every 5 ms)', $polling)];
        }
    } finally {
        rl_stop_redis($srv);
    }
}

// 3. Many locks held at once.
$srv = rl_start_redis();
try {
    $dsn = $srv['dsn'];
    $mem = [];
    foreach ($article ? ['article', 'native'] : ['native'] as $impl) {
        rl_cmd($dsn, 'FLUSHALL');
        $m0 = info_num($dsn, 'memory', 'used_memory');
        $held = [];
        if ($impl === 'article') {
            $a = new ArticleLock('x', 1, 600, '127.0.0.1', $srv['port']);
            for ($i = 0; $i < $locks; $i++) { $a->key = "held:$i"; $held[] = $a->addLock(); }
        } else {
            for ($i = 0; $i < $locks; $i++) { $l = new Lock("held:$i", 0, 600, ['dsn' => $dsn]); $held[] = [$l, $l->tryLock()]; }
        }
        $mem[$impl] = (info_num($dsn, 'memory', 'used_memory') - $m0) / $locks;
        if ($impl === 'article') {
            foreach ($held as $i => $v) { $a->key = "held:$i"; $a->releaseLock1($v); }
        } else {
            foreach ($held as [$l, $t]) { $l->releaseLock($t); }
        }
        $left = keys_left($dsn);
        $rows[] = [number_format($locks) . " locks held at once", $impl === 'article' ? 'article class (phpredis)' : 'redis_lock',
            sprintf('%.0f bytes of Redis memory per held lock; keys left after every release: %d', $mem[$impl], $left)];
    }
    if ($article) {
        $rows[] = [number_format($locks) . " locks held at once", 'redis_lock vs article', sprintf('memory per held lock %.2f×', $mem['native'] / $mem['article'])];
    }
} finally {
    rl_stop_redis($srv);
}

$md = "| scenario | implementation | measured |\n|---|---|---|\n";
foreach ($rows as [$s, $i, $m]) { $md .= "| $s | $i | $m |\n"; }
echo $md;
if ($article) {
    @mkdir(__DIR__ . '/results');
    file_put_contents(__DIR__ . '/results/capacity.md', $md);
    fwrite(STDERR, "wrote bench/results/capacity.md\n");
}
