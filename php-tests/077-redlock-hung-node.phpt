--TEST--
Redlock with hung nodes (SIGSTOP: the host accepts and acknowledges, the server never answers): with 1 of 5 hung, acquire + release cycles take far less than read_timeout once it is known silent, the lock still excludes a second (forked) process, and the node is skipped, then probed after its back-off without stalling a call, and rejoins after SIGCONT; 2 of 5 hung still work; 3 of 5 throw LockConnectionException naming the silent three after a read_timeout (needed for a majority, skipped nodes are asked again), while a release does not wait for them; nothing is left on any node. Over TLS the nodes are read together as over plain TCP: a hung node costs nothing, its first call included
--CONFLICTS--
all # 7 s of CPU, and 5 servers of its own that must each answer within read_timeout (1 s): beside two other tests under a CPU hog (make test-stress, 3 at a time), a live one did not
--SKIPIF--
<?php if (!function_exists('posix_kill') || !function_exists('pcntl_fork')) die('skip posix and pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
// 1 s, not less: a live node's reply that comes later than read_timeout counts it
// as silent, and on a busy machine (a CPU hog, a load of 10 on 2 cores) a reply can
// wait a good part of that for a core. A wait that should take no read_timeout is
// bounded by half of one, so that it still shows if it waits one. With 0.5 s, one
// run in about 25 of make test-stress failed a first try.
$rt = 1.0;
$yes = fn(bool $b) => $b ? 'yes' : 'NO';
$median = function (array $xs): float { sort($xs); return $xs[intdiv(count($xs), 2)]; };
/** Runs $n acquire + release cycles of $l; returns each cycle's seconds (a failed one is INF). */
$cycles = function (Lock $l, int $n): array {
    $took = [];
    for ($i = 0; $i < $n; $i++) {
        $t0 = microtime(true);
        $t = $l->addLock();
        $ok = is_string($t) && $l->releaseLock($t);
        $took[] = $ok ? microtime(true) - $t0 : INF;
    }
    return $took;
};
/**
 * $count() once it is 0, or its last value after 2 s: a release or an undo that a
 * node has been sent but not yet run (a busy machine) is waited for; a key that
 * only its lease (5 s) would clear still shows.
 */
$settled = function (callable $count) {
    $deadline = microtime(true) + 2;
    while (($n = $count()) && microtime(true) < $deadline) { usleep(10000); }
    return $n;
};
/** Runs $fn; returns [its result or the Throwable it threw, seconds taken]. */
$timed = function (callable $fn): array {
    $t0 = microtime(true);
    try { $r = $fn(); } catch (Throwable $e) { $r = $e; }
    return [$r, microtime(true) - $t0];
};

$nodes = rl_start_many(5);
$servers = array_column($nodes, 'dsn');
$stopped = [];
$stop = function (int $i) use (&$stopped, $nodes) { posix_kill($nodes[$i]['pid'], SIGSTOP); $stopped[$i] = true; };
try {
    $opts = ['servers' => $servers, 'read_timeout' => $rt, 'connect_timeout' => $rt];
    $key = rl_key('redlock-hung');
    $a = new Lock($key, 0, 5, $opts);
    $cycles($a, 20);                      // connections made, scripts cached

    echo "1 of 5 hung\n";
    $stop(4);
    $first = $cycles($a, 1)[0];
    $took = $cycles($a, 300);
    echo "  every cycle completes: ", $yes(max($took) < INF), ", the first too: ", $yes($first < INF), "\n";
    echo "  median cycle below 50 ms: ", $yes($median($took) < 0.05), " (read_timeout is ", $rt * 1000, " ms)\n";

    // Held: a second process (forked: it must not read the parent's owed replies) is refused.
    $t = $a->addLock();
    $holders = count(array_filter([0, 1, 2, 3], fn($i) => rl_cmd($servers[$i], 'GET', $key) === $t));
    echo "  held on the 4 answering nodes: ", $yes($holders === 4), "\n";
    [$code] = rl_fork(1, function () use ($key, $opts) {
        $b = new Lock($key, 0, 5, $opts);
        return $b->tryLock() === false ? 0 : 1;
    });
    echo "  a second process is refused: ", $yes($code === 0), ", and the holder still holds it: ", $yes($a->isOwned()),
        ", releases it: ", $yes($a->releaseLock($t)), "\n";

    // Well past the first back-off (1 s) and into the second: the probes go on the
    // connection the node has, and cost nothing.
    $until = microtime(true) + 2.5;
    $took = [];
    while (microtime(true) < $until) { $took = array_merge($took, $cycles($a, 20)); }
    $stalls = count(array_filter($took, fn($s) => $s >= $rt));
    echo "  for 2.5 s across its back-off and probes: every cycle completes: ", $yes(max($took) < INF),
        ", median below 50 ms: ", $yes($median($took) < 0.05), ", cycles of a read_timeout or more: ", $stalls <= 1 ? 'none' : $stalls, "\n";

    echo "2 of 5 hung\n";
    $stop(3);
    $took = $cycles($a, 1);
    $took = $cycles($a, 200);
    echo "  every cycle completes: ", $yes(max($took) < INF), ", median below 50 ms: ", $yes($median($took) < 0.05), "\n";

    echo "3 of 5 hung\n";
    $stop(2);
    $b = new Lock($key, 0, 5, $opts);
    $names = function ($r) use ($servers): string {
        if (!$r instanceof LockConnectionException) { return 'no exception: ' . var_export($r, true); }
        $m = $r->getMessage();
        $silent = str_contains($m, $servers[2]) && str_contains($m, $servers[3]) && str_contains($m, $servers[4]);
        $live = str_contains($m, $servers[0]) || str_contains($m, $servers[1]);
        return 'LockConnectionException naming the three: ' . ($silent ? 'yes' : 'NO') . ', and not the two others: ' . ($live ? 'NO' : 'yes');
    };
    [$r, $s] = $timed(fn() => $b->tryLock());
    echo "  tryLock: ", $names($r), ", within about read_timeout: ", $yes($s < 2 * $rt + 0.1), "\n";
    // Skipped, but no majority can be had without them: they are asked again (a
    // probe each) rather than refused at once, so that a quorum that comes back is
    // used without waiting out a back-off.
    [$r, $s] = $timed(fn() => $b->tryLock());
    echo "  again at once, needed for a majority, asked again: ", $names($r), ", a read_timeout spent: ", $yes($s >= $rt * 0.9 && $s < 2 * $rt + 0.1), "\n";
    // A release with no majority to be had does not wait for the silent ones.
    [$r, $s] = $timed(fn() => $b->releaseLock('not-held'));
    echo "  a release meanwhile, in under half a read_timeout: ", $yes($s < $rt / 2), "\n";
    usleep(1100000);                      // node 2's first back-off (1 s) ends
    [$r, $s] = $timed(fn() => $b->tryLock());
    echo "  after the back-off, asked again (a read_timeout spent on the probe): ", $yes($s >= $rt * 0.9 && $s < 2 * $rt + 0.1),
        ", still ", $names($r), "\n";
    echo "  left on the two live nodes: ", $settled(fn() => rl_cmd($servers[0], 'EXISTS', $key) + rl_cmd($servers[1], 'EXISTS', $key)), "\n";

    echo "SIGCONT\n";
    foreach (array_keys($stopped) as $i) { posix_kill($nodes[$i]['pid'], SIGCONT); }
    $stopped = [];
    // Each node rejoins once it answers: its owed replies are read at the next call,
    // or its next probe (at most 16 s away) finds it.
    $deadline = microtime(true) + 20;
    $all = false;
    while (!$all && microtime(true) < $deadline) {
        // Until they answer, a majority may still be skipped: that is an exception.
        try { $t = $a->addLock(); } catch (LockConnectionException $e) { $t = false; }
        $all = is_string($t) && count(array_filter($servers, fn($d) => rl_cmd($d, 'GET', $key) === $t)) === 5;
        if (is_string($t)) { $a->releaseLock($t); }
        if (!$all) { usleep(20000); }
    }
    echo "  all 5 hold the lock again: ", $yes($all), "\n";
    $settled(fn() => array_sum(array_map(fn($d) => rl_cmd($d, 'DBSIZE'), $servers)));
    $left = array_map(fn($d) => rl_cmd($d, 'DBSIZE'), $servers);
    echo "  keys left on the nodes: ", implode(',', $left), "\n";
} finally {
    foreach ($nodes as $n) { posix_kill($n['pid'], SIGCONT); rl_stop_redis($n); }
}

echo "TLS, 1 of 3 hung\n";
$d = sys_get_temp_dir() . '/rl-tls-hung-' . getmypid();
rl_make_certs($d);
$tls = [];
try {
    for ($i = 0; $i < 3; $i++) {
        $port = rl_free_port();
        $tls[] = rl_start_redis(rl_tls_args($d, $port)) + ['tls' => $port];
    }
    // A longer read_timeout here: waiting for the hung node would cost a whole one,
    // and half of it leaves a busy machine room for the cycle it really takes.
    $rtTls = 2.0;
    $opts = ['servers' => array_map(fn($n) => "rediss://127.0.0.1:{$n['tls']}", $tls), 'tls_ca_file' => "$d/ca.crt",
             'read_timeout' => $rtTls, 'connect_timeout' => $rt];
    $key = rl_key('redlock-hung-tls');
    $a = new Lock($key, 0, 5, $opts);
    $cycles($a, 5);
    posix_kill($tls[2]['pid'], SIGSTOP);
    $first = $cycles($a, 1)[0];
    $took = $cycles($a, 100);
    // Read together, as over plain TCP: the majority answers, and nobody waits for the third.
    echo "  the first cycle, the hung node's first call, waits for it less than half a read_timeout: ", $yes($first < $rtTls / 2),
        "; then, the node skipped, every cycle completes: ", $yes(max($took) < INF), ", median below 50 ms: ", $yes($median($took) < 0.05), "\n";
    posix_kill($tls[2]['pid'], SIGCONT);
    echo "  keys left on the answering nodes: ", $settled(fn() => rl_cmd("redis://127.0.0.1:{$tls[0]['port']}", 'DBSIZE') + rl_cmd("redis://127.0.0.1:{$tls[1]['port']}", 'DBSIZE')), "\n";
} finally {
    foreach ($tls as $n) { posix_kill($n['pid'], SIGCONT); rl_stop_redis($n); }
    rl_remove_dir($d);
}
?>
--EXPECT--
1 of 5 hung
  every cycle completes: yes, the first too: yes
  median cycle below 50 ms: yes (read_timeout is 1000 ms)
  held on the 4 answering nodes: yes
  a second process is refused: yes, and the holder still holds it: yes, releases it: yes
  for 2.5 s across its back-off and probes: every cycle completes: yes, median below 50 ms: yes, cycles of a read_timeout or more: none
2 of 5 hung
  every cycle completes: yes, median below 50 ms: yes
3 of 5 hung
  tryLock: LockConnectionException naming the three: yes, and not the two others: yes, within about read_timeout: yes
  again at once, needed for a majority, asked again: LockConnectionException naming the three: yes, and not the two others: yes, a read_timeout spent: yes
  a release meanwhile, in under half a read_timeout: yes
  after the back-off, asked again (a read_timeout spent on the probe): yes, still LockConnectionException naming the three: yes, and not the two others: yes
  left on the two live nodes: 0
SIGCONT
  all 5 hold the lock again: yes
  keys left on the nodes: 0,0,0,0,0
TLS, 1 of 3 hung
  the first cycle, the hung node's first call, waits for it less than half a read_timeout: yes; then, the node skipped, every cycle completes: yes, median below 50 ms: yes
  keys left on the answering nodes: 0
