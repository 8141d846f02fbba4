--TEST--
Sentinel: the master is found through the sentinels and checked with ROLE; wait_replicas puts the lock on the replica before addLock() returns; after the master is killed, locking resumes on the promoted replica, and the replicated lock is still held there
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$set = rl_start_sentinel_set();
try {
    $sentinels = array_column($set['sentinels'], 'dsn');
    $opts = ['sentinels' => $sentinels, 'service' => 'mymaster', 'read_timeout' => 0.3, 'connect_timeout' => 0.3];
    // Settings that cannot work are reported clearly.
    try { (new Lock('k', 0, 1, ['sentinels' => $sentinels, 'service' => 'nosuch']))->tryLock(); }
    catch (LockConnectionException $e) { echo "unknown service: ", str_contains($e->getMessage(), 'does not know the service "nosuch"') ? 'named' : $e->getMessage(), "\n"; }
    try { new Lock('k', 0, 1, ['sentinels' => $sentinels]); }
    catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }

    $k1 = rl_key('sentinel-held');
    $a = new Lock($k1, 0, 30, $opts + ['wait_replicas' => 1]);
    $t = $a->addLock();
    echo "acquired on the master: ", rl_cmd($set['master']['dsn'], 'GET', $k1) === $t ? 'yes' : 'no',
        ", already on the replica: ", rl_cmd($set['replica']['dsn'], 'GET', $k1) === $t ? 'yes' : 'no', "\n";

    // With the replica frozen, WAIT runs out: the acquisition still succeeds (WAIT is
    // no guarantee), after about half a read_timeout.
    posix_kill($set['replica']['pid'], SIGSTOP);
    $w = new Lock(rl_key('sentinel-wait'), 0, 5, $opts + ['wait_replicas' => 1]);
    $t0 = microtime(true);
    $tw = $w->addLock();
    $waited = microtime(true) - $t0;
    posix_kill($set['replica']['pid'], SIGCONT);
    echo "replica frozen: acquired ", var_export(is_string($tw), true), " after waiting for it: ", var_export($waited > 0.12 && $waited < 0.4, true), "\n";
    $w->releaseLock();

    // Shared locks, on the master the sentinels name.
    $rk = rl_key('sentinel-shared');
    $r1 = new Lock($rk, 0, 30, $opts);
    $r2 = new Lock($rk, 0, 30, $opts);
    $both = is_string($r1->tryReadLock()) && is_string($r2->tryReadLock());
    echo "two readers on the master: ", var_export($both && rl_cmd($set['master']['dsn'], 'ZCARD', "{{$rk}}:readers") === 2, true),
        ", a writer refused: ", var_export((new Lock($rk, 0, 5, $opts))->tryLock(), true), "\n";
    var_dump($r1->releaseLock(), $r2->releaseLock());
    $sk = rl_key('sentinel-sem');
    $sem = [new Semaphore($sk, 2, 0, 30, $opts), new Semaphore($sk, 2, 0, 30, $opts), new Semaphore($sk, 2, 0, 30, $opts)];
    echo "semaphore on the master: ", var_export(is_string($sem[0]->tryAcquire()) && is_string($sem[1]->tryAcquire()), true),
        ", a third refused: ", var_export($sem[2]->tryAcquire(), true), ", holders there: ", rl_cmd($set['master']['dsn'], 'ZCARD', "{{$sk}}:readers"), "\n";
    $sem[0]->release();
    $sem[1]->release();

    rl_kill_redis($set['master']);
    $t0 = microtime(true);
    $k2 = rl_key('sentinel-after');
    $b = new Lock($k2, 0, 5, $opts);
    $got = false; $errors = 0;
    while (microtime(true) - $t0 < 20) {
        try { $got = $b->tryLock(); break; }
        catch (LockConnectionException $e) { $errors++; usleep(100000); }
    }
    $resumed = microtime(true) - $t0;
    echo "locking resumed after the failover: ", var_export(is_string($got), true), ", within 10 s: ", var_export($resumed < 10, true), "\n";
    $role = rl_cmd($set['replica']['dsn'], 'ROLE');
    echo "on the promoted replica: ", $role[0], ", key there: ", rl_cmd($set['replica']['dsn'], 'EXISTS', $k2), "\n";
    // The lock taken with wait_replicas survived: nobody else can take it, and its holder still owns it.
    $c = new Lock($k1, 0, 5, $opts);
    var_dump($c->tryLock(), $a->isOwned(), $a->releaseLock(), $b->releaseLock());
    // Shared locks on the promoted master.
    $s1 = new Lock($rk, 0, 5, $opts);
    $s2 = new Lock($rk, 0, 5, $opts);
    $both = is_string($s1->tryReadLock()) && is_string($s2->tryReadLock());
    echo "after the failover: two readers ", var_export($both && rl_cmd($set['replica']['dsn'], 'ZCARD', "{{$rk}}:readers") === 2, true),
        ", a writer refused ", var_export((new Lock($rk, 0, 5, $opts))->tryLock(), true);
    $s1->releaseLock();
    $s2->releaseLock();
    echo ", then taken once they left: ", var_export(is_string((new Lock($rk, 0, 5, $opts))->tryLock()), true), "\n";
    $sem = [new Semaphore($sk, 2, 0, 5, $opts), new Semaphore($sk, 2, 0, 5, $opts)];
    echo "semaphore after the failover: ", var_export(is_string($sem[0]->tryAcquire(2)), true), ", full: ", var_export($sem[1]->tryAcquire(), true),
        ", on the promoted master: ", rl_cmd($set['replica']['dsn'], 'ZCARD', "{{$sk}}:readers"), "\n";
    $sem[0]->release();
} finally {
    rl_stop_sentinel_set($set);
}
?>
--EXPECT--
unknown service: named
ValueError: option "sentinels" needs option "service", the name of the master they monitor
acquired on the master: yes, already on the replica: yes
replica frozen: acquired true after waiting for it: true
two readers on the master: true, a writer refused: false
bool(true)
bool(true)
semaphore on the master: true, a third refused: false, holders there: 2
locking resumed after the failover: true, within 10 s: true
on the promoted replica: master, key there: 1
bool(false)
bool(true)
bool(true)
bool(true)
after the failover: two readers true, a writer refused false, then taken once they left: true
semaphore after the failover: true, full: false, on the promoted master: 1
