--TEST--
Redis Cluster: a master is killed; locking resumes once its replica is promoted, a lock taken with wait_replicas is still held there and its holder releases it; no lost update under contention; the watchdog renews cluster locks
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$c = rl_start_cluster();
try {
    $seeds = $c['seeds'];
    $opts = ['cluster' => $seeds, 'read_timeout' => 0.3, 'connect_timeout' => 0.3];

    // Auto-renewal: the watchdog renews on the key's master.
    $r = new Lock(rl_key('renewed'), 0, 0.3, $opts + ['auto_renew' => true]);
    $r->addLock();
    usleep(1000000);
    echo "renewed past three leases: ", var_export($r->isOwned() && $r->getTtl() > 0.1, true), "\n";
    $r->releaseLock();

    $k1 = rl_key('held');
    $a = new Lock($k1, 0, 60, $opts + ['wait_replicas' => 1]);
    $t = $a->addLock();
    $master = rl_cluster_master_of($seeds[0], $k1);
    preg_match('/slave0:ip=([^,]+),port=(\d+)/', rl_cmd($master, 'INFO', 'replication'), $m);
    $replica = "redis://{$m[1]}:{$m[2]}";
    echo "on the master: ", var_export(rl_cmd($master, 'GET', $k1) === $t, true), "\n";
    // A cluster replica answers reads only on a connection in READONLY mode.
    $conn = new Resp($replica, readTimeout: 60);
    $conn->ask('READONLY');
    echo "replica has the token: ", var_export($conn->ask('GET', $k1) === $t, true), "\n";
    $conn->close();

    // Another key on the same master, never locked before the failover.
    do { $k2 = rl_key('after'); } while (rl_cluster_master_of($seeds[0], $k2) !== $master);

    // A waiter for the held lock, queued on the master about to die.
    $handed = tempnam(sys_get_temp_dir(), 'rl-cluster-waiter');
    $waiter = pcntl_fork();
    if ($waiter === 0) {
        $w = new Lock($k1, 30, 10, $opts);
        $got = $w->addLock();
        file_put_contents($handed, (string) $got);
        // Held a while, so that the parent reads the key before this releases it.
        usleep(500000);
        $w->releaseLock();
        exit(0);
    }
    for ($i = 0; $i < 100 && !rl_cmd($master, 'LLEN', "{{$k1}}:queue"); $i++) { usleep(20000); }

    $node = current(array_filter($c['nodes'], fn($n) => $n['dsn'] === $master));
    rl_kill_redis($node);
    $t0 = microtime(true);
    $b = new Lock($k2, 0, 30, $opts);
    $got = false; $errors = 0;
    while (microtime(true) - $t0 < 20) {
        try { $got = $b->tryLock(); break; }
        catch (LockConnectionException $e) { $errors++; usleep(100000); }
    }
    $resumed = microtime(true) - $t0;
    echo "locking resumed after the failover: ", var_export(is_string($got), true), ", within 10 s: ", var_export($resumed < 10, true),
        ", refused while no master served the slot: ", var_export($errors > 0, true), "\n";
    $other = current(array_filter($seeds, fn($d) => $d !== $master));
    echo "served by the promoted replica now: ", var_export(rl_cluster_master_of($other, $k2) === $replica, true), "\n";
    // The lock taken with wait_replicas survived the failover.
    $probe = new Lock($k1, 0, 5, $opts);
    var_dump($probe->tryLock(), $a->isOwned());
    // The waiter's connection died with the old master; it listens again on the
    // new one, where the release hands the lock over.
    $listening = false;
    for ($i = 0; $i < 250 && !$listening; $i++) {
        foreach ((array) rl_cmd($replica, 'LRANGE', "{{$k1}}:queue", '0', '-1') as $entry) {
            // A sharded channel (Redis 7 and later) names the slot: redis_lock:wake:{…
            $ch = rl_queue_entry($entry)[1];
            $numsub = rl_cmd($replica, 'PUBSUB', ($ch[16] ?? '') === '{' ? 'SHARDNUMSUB' : 'NUMSUB', $ch);
            if ($numsub[1] > 0) { $listening = true; }
        }
        if (!$listening) { usleep(20000); }
    }
    $released = $a->releaseLock();
    $after = rl_cmd($replica, 'GET', $k1);
    pcntl_waitpid($waiter, $st);
    echo "waiter queued again on the new master: ", var_export($listening, true),
        "; handed over by the release: ", var_export($released && $after === file_get_contents($handed), true), "\n";
    unlink($handed);
    var_dump(is_string($probe->tryLock()), $probe->releaseLock(), $b->releaseLock());
    // Shared locks on the promoted master.
    $s1 = new Lock($k2, 0, 5, $opts);
    $s2 = new Lock($k2, 0, 5, $opts);
    $both = is_string($s1->tryReadLock()) && is_string($s2->tryReadLock());
    echo "after the failover: two readers ", var_export($both && rl_cmd($replica, 'ZCARD', "{{$k2}}:readers") === 2, true),
        ", a writer refused ", var_export((new Lock($k2, 0, 5, $opts))->tryLock(), true);
    $s1->releaseLock();
    $s2->releaseLock();
    echo ", then taken once they left: ", var_export(is_string((new Lock($k2, 0, 5, $opts))->tryLock()), true), "\n";
    $sem = [new Semaphore("$k2:sem", 1, 0, 5, $opts), new Semaphore("$k2:sem", 1, 0, 5, $opts)];
    echo "semaphore after the failover: ", var_export(is_string($sem[0]->tryAcquire()), true), ", full: ", var_export($sem[1]->tryAcquire(), true), "\n";
    $sem[0]->release();

    // No lost update: 6 processes add 1 to a value 40 times each, read and written
    // separately, under the lock.
    $ck = rl_key('counter');
    $file = tempnam(sys_get_temp_dir(), 'rl-cluster-counter');
    file_put_contents($file, '0');
    $codes = rl_fork(6, function () use ($ck, $opts, $file) {
        $l = new Lock($ck, 10, 5, $opts);
        for ($i = 0; $i < 40; $i++) {
            if (!is_string($l->addLock())) { return 2; }
            $v = (int) file_get_contents($file);
            usleep(100);
            file_put_contents($file, (string) ($v + 1));
            if (!$l->releaseLock()) { return 3; }
        }
        return 0;
    });
    echo "workers: ", implode(',', $codes), "; counter: ", file_get_contents($file), "\n";
    unlink($file);
} finally {
    rl_stop_cluster($c);
}
?>
--EXPECT--
renewed past three leases: true
on the master: true
replica has the token: true
locking resumed after the failover: true, within 10 s: true, refused while no master served the slot: true
served by the promoted replica now: true
bool(false)
bool(true)
waiter queued again on the new master: true; handed over by the release: true
bool(true)
bool(true)
bool(true)
after the failover: two readers true, a writer refused false, then taken once they left: true
semaphore after the failover: true, full: false
workers: 0,0,0,0,0,0; counter: 240
