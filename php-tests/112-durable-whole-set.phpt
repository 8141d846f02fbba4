--TEST--
Once every replica is online, no durable acquisition with a 2 s timeOut throws: a master and two replicas (AOF fsynced at every write), eight processes contending for one key (holds of 0.1–0.3 s: many waits end at their deadline) with durable => 1, the replicas slow now and then (stopped 0.4 s in every second, longer than durable_timeout, still listed online by the master): a check not acknowledged in time on a master that lists its replicas online waits again (ROLE, then WAIT) instead of giving the hold back; every acquisition gets the lock or, at its deadline, false; none throws
--CONFLICTS--
cpu # 8 processes, 3 servers fsyncing every write
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$aof = ['--appendonly', 'yes', '--appendfsync', 'always'];
$m = rl_start_redis($aof);
$replicas = [];
foreach ([1, 2] as $_) { $replicas[] = rl_start_redis(array_merge($aof, ['--replicaof', '127.0.0.1', (string) $m['port']])); }
$stats = fn(string $cmd): int => preg_match("/^cmdstat_$cmd:calls=(\\d+)/m", (string) rl_cmd($m['dsn'], 'INFO', 'commandstats'), $x) ? (int) $x[1] : 0;
$pids = [];
try {
    foreach ($replicas as $r) { rl_wait_synced($r, microtime(true) + 10); }
    $role = rl_cmd($m['dsn'], 'ROLE');
    echo "replicas online: ", count($role[2]), "\n";
    $k = rl_key('whole');
    $dir = sys_get_temp_dir() . '/rl-112-' . getmypid();
    @mkdir($dir);
    $roles0 = $stats('role');
    $until = microtime(true) + 6.0;
    for ($w = 0; $w < 8; $w++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $n = ['ok' => 0, 'false' => 0, 'thrown' => []];
            $lock = new Lock($k, 2.0, 2.0, ['dsn' => $m['dsn'], 'durable' => 1] + RL_PATIENT);
            while (microtime(true) < $until) {
                try {
                    $t = $lock->addLock();
                    if ($t === false) { $n['false']++; continue; }
                    $n['ok']++;
                    usleep(random_int(100000, 300000));
                    $lock->releaseLock($t);
                } catch (Throwable $e) { $n['thrown'][] = get_class($e) . ': ' . $e->getMessage(); }
            }
            file_put_contents("$dir/$w", json_encode($n));
            exit(0);
        }
        $pids[] = $pid;
    }
    // The replicas slow: stopped 0.4 s in each second. The master keeps them online
    // (repl-timeout is 60 s); WAIT cannot count them while they are stopped.
    while (microtime(true) < $until - 0.5) {
        foreach ($replicas as $r) { posix_kill($r['pid'], SIGSTOP); }
        usleep(400000);
        foreach ($replicas as $r) { posix_kill($r['pid'], SIGCONT); }
        usleep(600000);
    }
    foreach ($pids as $pid) { pcntl_waitpid($pid, $status); }
    $pids = [];
    $sum = ['ok' => 0, 'false' => 0, 'thrown' => []];
    for ($w = 0; $w < 8; $w++) {
        $n = json_decode((string) @file_get_contents("$dir/$w"), true) ?? ['ok' => 0, 'false' => 0, 'thrown' => ["worker $w left no count"]];
        $sum['ok'] += $n['ok'];
        $sum['false'] += $n['false'];
        array_push($sum['thrown'], ...$n['thrown']);
        @unlink("$dir/$w");
    }
    @rmdir($dir);
    // The path ran: checks waited again (ROLE asked) while the replicas were stopped.
    echo "acquired: ", var_export($sum['ok'] > 10, true), ", timed out: ", var_export($sum['false'] > 0, true), ", waited again: ", var_export($stats('role') > $roles0, true),
        ", thrown: ", count($sum['thrown']), "\n";
    foreach (array_slice(array_unique($sum['thrown']), 0, 3) as $e) { echo "  $e\n"; }
    echo "replicas online after: ", count(rl_cmd($m['dsn'], 'ROLE')[2]), "\n";
} finally {
    foreach ($pids as $pid) { posix_kill($pid, SIGKILL); pcntl_waitpid($pid, $status); }
    foreach ($replicas as $r) { @posix_kill($r['pid'], SIGCONT); rl_stop_redis($r); }
    rl_stop_redis($m);
}
?>
--EXPECT--
replicas online: 2
acquired: true, timed out: true, waited again: true, thrown: 0
replicas online after: 2
