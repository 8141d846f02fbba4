--TEST--
A master short of the replicas its min-replicas-to-write asks for refuses writes (NOREPLICAS): that is a passing state, like a failover's. A try says so (LockConnectionException, naming the setting) and takes nothing; a blocking addLock() waits it out and gets the lock once the replica is back; a durable one too, acknowledged by it; a wait whose deadline passes first says what it waited for
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$m = rl_start_redis(['--min-replicas-to-write', '1', '--min-replicas-max-lag', '1']);
$r = rl_start_redis(['--replicaof', '127.0.0.1', (string) $m['port']]);
try {
    rl_wait_synced($r, microtime(true) + 10);
    $o = ['dsn' => $m['dsn']] + RL_PATIENT;
    // The replica stopped: once its last acknowledgement is older than the lag
    // allowed (it acknowledges every second), the master refuses writes. A refusal
    // alone does not show that: just after the sync the master counts no good
    // replica until its next second's count (seen: refused, then accepting for 2 s
    // more); the stopped replica's lag past the 1 s allowed does.
    $stoppedAndRefused = function () use ($m): bool {
        $until = microtime(true) + 15;
        while (microtime(true) < $until) {
            $lag = preg_match('/^slave0:.*lag=(\d+)/m', (string) rl_poll($m['dsn'], 'INFO', 'replication'), $l) ? (int) $l[1] : 0;
            $x = rl_poll($m['dsn'], 'SET', 'rl-test:probe', '1');
            if ($lag >= 2 && $x instanceof RuntimeException && str_starts_with($x->getMessage(), 'NOREPLICAS')) { return true; }
            usleep(100000);
        }
        return false;
    };
    posix_kill($r['pid'], SIGSTOP);
    $refused = $stoppedAndRefused();
    echo "refused: ", var_export($refused, true), "\n";

    $k = rl_key('noreplicas');
    $a = new Lock($k, 0, 10, $o);
    try { $a->tryLock(); echo "acquired without replicas\n"; }
    catch (LockException $e) { echo get_class($e), ": ", $e->getMessage(), "\n"; }
    echo "key left: ", rl_cmd($m['dsn'], 'EXISTS', $k), "\n";

    // A wait whose deadline passes while it lasts says what it waited for.
    $b = new Lock($k, 0.5, 10, $o);
    try { $b->addLock(); echo "acquired without replicas\n"; }
    catch (LockException $e) { echo get_class($e), ": ", $e->getMessage(), "\n"; }

    // A wait rides it out: the replica is back 0.5 s into it.
    foreach ([['plain', $o], ['durable', ['durable' => 1, 'durable_timeout' => 2.0] + $o]] as [$what, $opts]) {
        exec(sprintf('(sleep 0.5; kill -CONT %d) > /dev/null 2>&1 &', $r['pid']));
        $c = new Lock($k, 8.0, 10, $opts);
        $t = null;
        try { $t = $c->addLock(); }
        catch (LockException $e) { echo get_class($e), ": ", $e->getMessage(), "\n"; }
        echo "$what: acquired once the replica was back: ", var_export(is_string($t), true),
            ", on the replica: ", var_export(is_string($t) && rl_poll($r['dsn'], 'GET', $k) === $t, true), "\n";
        if (is_string($t)) { $c->releaseLock($t); }
        // Stopped again, and refused again, for the next.
        posix_kill($r['pid'], SIGSTOP);
        $stoppedAndRefused();
    }
} finally {
    @posix_kill($r['pid'], SIGCONT);
    rl_stop_redis($r);
    rl_stop_redis($m);
}
?>
--EXPECTF--
refused: true
LockConnectionException: redis-lock: Redis at %s is not serving for now: it has fewer good replicas than its min-replicas-to-write (NOREPLICAS Not enough good replicas to write.)
key left: 0
LockConnectionException: redis-lock: Redis at %s is not serving for now: it has fewer good replicas than its min-replicas-to-write (NOREPLICAS Not enough good replicas to write.%s
plain: acquired once the replica was back: true, on the replica: true
durable: acquired once the replica was back: true, on the replica: true
