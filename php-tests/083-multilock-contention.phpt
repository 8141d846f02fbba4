--TEST--
MultiLock under contention: 8 processes take random 3-key subsets of 10 keys (and 2 more take single keys with Lock); every per-key counter is exact, no wait times out, nothing is left in Redis but the fencing counters (and a Lock's expiring patience); a stream of Lock holders on one key does not starve a MultiLock that also wants it
--CONFLICTS--
cpu # 10 processes, 3 s of CPU
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$base = rl_key('mc');
$keys = array_map(fn($i) => "$base:k$i", range(0, 9));
$rounds = 120;
$codes = rl_fork(10, function ($w) use ($dsn, $keys, $rounds) {
    mt_srand(1000 + $w);
    for ($i = 0; $i < $rounds; $i++) {
        if ($w < 8) {
            $pick = array_rand(array_flip($keys), 3);
            shuffle($pick);                      // any order: the MultiLock orders them
            $l = new MultiLock($pick, 20, 5, ['dsn' => $dsn] + RL_PATIENT);
        } else {
            $pick = [$keys[mt_rand(0, 9)]];
            $l = new Lock($pick[0], 20, 5, ['dsn' => $dsn] + RL_PATIENT);
        }
        if ($l->addLock() === false) { return 2; }
        foreach ($pick as $k) {
            $v = (int) rl_cmd($dsn, 'GET', "$k:n");
            rl_cmd($dsn, 'SET', "$k:n", (string) ($v + 1));
        }
        if (!$l->releaseLock()) { return 3; }
        file_put_contents(sys_get_temp_dir() . "/mc-$w-" . getmypid(), implode("\n", $pick) . "\n", FILE_APPEND);
    }
    return 0;
});
$want = array_fill_keys($keys, 0);
foreach (glob(sys_get_temp_dir() . '/mc-*') as $f) {
    foreach (file($f, FILE_IGNORE_NEW_LINES) as $k) { if (isset($want[$k])) { $want[$k]++; } }
    unlink($f);
}
$exact = true;
foreach ($keys as $k) { $exact = $exact && (int) rl_cmd($dsn, 'GET', "$k:n") === $want[$k]; }
$left = [];
foreach ($keys as $k) {
    foreach ([$k, "{{$k}}:queue", "{{$k}}:readers", "{{$k}}:owner"] as $x) {
        if (rl_cmd($dsn, 'EXISTS', $x)) { $left[] = $x; }
    }
    // A Lock's short holds may leave the first waiter's patience, which expires.
    if (rl_cmd($dsn, 'EXISTS', "{{$k}}:patience") && rl_cmd($dsn, 'PTTL', "{{$k}}:patience") < 0) { $left[] = "$k patience without expiry"; }
}
echo "exits ", implode(',', array_unique($codes)), ", keys taken ", array_sum($want), ", counters exact: ", json_encode($exact), ", left: ", json_encode($left), "\n";

// A stream of single-key holders of a: 3 processes take and hold it 20 ms, over and
// over. A MultiLock for {a, b} waits in a's queue and gets both within a few holds.
$a = "$base:a"; $b = "$base:b";
$stop = sys_get_temp_dir() . '/mc-stop-' . getmypid();
$pids = [];
for ($w = 0; $w < 3; $w++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $l = new Lock($a, 5, 5, ['dsn' => $dsn]);
        while (!file_exists($stop)) { if ($l->addLock() !== false) { usleep(20000); $l->releaseLock(); } }
        exit(0);
    }
    $pids[] = $pid;
}
usleep(200000);
$waits = [];
for ($i = 0; $i < 5; $i++) {
    $m = new MultiLock([$a, $b], 5, 5, ['dsn' => $dsn]);
    $s = microtime(true);
    $t = $m->addLock();
    $waits[] = is_string($t) ? microtime(true) - $s : INF;
    $m->releaseLock();
    usleep(50000);
}
touch($stop);
foreach ($pids as $pid) { pcntl_waitpid($pid, $st); }
unlink($stop);
sort($waits);
echo "MultiLock beside a stream of Lock holders: 5 of 5 taken, slowest ", max($waits) < 1.0 ? 'under a second' : max($waits) . ' s', "\n";
?>
--EXPECT--
exits 0, keys taken 3120, counters exact: true, left: []
MultiLock beside a stream of Lock holders: 5 of 5 taken, slowest under a second
