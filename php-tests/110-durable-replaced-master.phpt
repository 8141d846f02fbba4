--TEST--
A durable wait rides out a master the sentinels replaced while it was stalled: the master SIGSTOPped past down-after, a replica promoted and the other one moved to it, the old master resumed (still a master, alone, for seconds until the sentinels demote it, its connections intact); a durable addLock() on the connection it kept there is not acknowledged (0 of 1 replicas), asks the sentinels, finds they name another master, and gets the lock there within its timeOut; the watchdog's durable hold is renewed on the new master, not lost
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$set = rl_start_sentinel_set(false, 2, 2000);
try {
    $sentinels = array_column($set['sentinels'], 'dsn');
    $old = $set['master'];
    $opts = ['sentinels' => $sentinels, 'service' => 'mymaster', 'durable' => 1, 'durable_timeout' => 0.5] + RL_PATIENT;
    $k = rl_key('replaced');
    $a = new Lock($k, 4.0, 10, $opts);
    // The connection this process keeps goes to the master named now.
    $t = $a->addLock() or die("not acquired before the stall\n");
    $a->releaseLock($t);
    // A watchdog hold, taken there too (its own connection), with a lease the stall
    // and the failover do not outlast.
    $wk = rl_key('replaced-watched');
    $w = new Lock($wk, 0, 6, ['auto_renew' => true] + $opts);
    $wt = $w->addLock() or die("the watched lock not acquired\n");

    // Stalled past down-after: the sentinels promote a replica and move the other to it.
    posix_kill($old['pid'], SIGSTOP);
    $named = null;
    $moved = false;
    $until = microtime(true) + 20;
    while (microtime(true) < $until) {
        $n = rl_poll($sentinels[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster');
        if (is_array($n) && (int) $n[1] !== $old['port']) {
            $named = (int) $n[1];
            $other = array_values(array_filter($set['replicas'], fn($r) => $r['port'] !== $named))[0];
            $info = (string) rl_poll($other['dsn'], 'INFO', 'replication');
            if (str_contains($info, "master_port:$named") && str_contains($info, 'master_link_status:up')) { $moved = true; break; }
        }
        usleep(50000);
    }
    posix_kill($old['pid'], SIGCONT);
    $role = rl_poll($old['dsn'], 'ROLE');
    echo "failed over, the other replica moved: ", var_export($moved, true), "; the old master resumed a master: ",
        var_export(is_array($role) && $role[0] === 'master', true), "\n";

    $s0 = redis_lock_stats();
    $t = null;
    try { $t = $a->addLock(); }
    catch (LockException $e) { echo get_class($e), ": ", $e->getMessage(), "\n"; }
    $s1 = redis_lock_stats();
    $role = rl_poll($old['dsn'], 'ROLE');
    $new = array_values(array_filter($set['replicas'], fn($r) => $r['port'] === $named))[0];
    // The path ran: a check on the old master went unacknowledged while it was still a
    // master, then the lock was granted on the master named.
    echo "acquired: ", var_export(is_string($t), true), ", on the master named: ", var_export(is_string($t) && rl_cmd($new['dsn'], 'GET', $k) === $t, true),
        ", checks not acknowledged first: ", var_export($s1['not_durable'] > $s0['not_durable'], true),
        ", the old master still a master then: ", var_export(is_array($role) && $role[0] === 'master', true), "\n";
    if (is_string($t)) { var_dump($a->releaseLock($t)); }

    // Longer than its lease since it was taken: renewed on the new master meanwhile.
    usleep(3000000);
    echo "watched: owned ", var_export($w->isOwned(), true), ", on the master named: ", var_export(rl_cmd($new['dsn'], 'GET', $wk) === $wt, true),
        ", released ", var_export($w->releaseLock($wt), true), "\n";
} finally {
    @posix_kill($set['master']['pid'], SIGCONT);
    rl_stop_sentinel_set($set);
}
?>
--EXPECT--
failed over, the other replica moved: true; the old master resumed a master: true
acquired: true, on the master named: true, checks not acknowledged first: true, the old master still a master then: true
bool(true)
watched: owned true, on the master named: true, released true
