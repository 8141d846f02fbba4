--TEST--
The watchdog through a graceful Sentinel failover (SENTINEL FAILOVER: the master demoted, alive): a hold renewed by the watchdog (on a server with its own compare-and-delete, a hold taken alone, renewed by SET IFEQ) meets READONLY on its connection to the old master, finds the new master, and goes on being renewed there: not lost, owned, released true
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$set = rl_start_sentinel_set();
try {
    $sentinels = array_column($set['sentinels'], 'dsn');
    // A 6 s lease, renewed every 2 s: between the replica's promotion and the old
    // master's demotion the renewals still land on the old master (replication is
    // asynchronous), and the key lives on the new one only as long as the lease it
    // had there. A graceful failover takes a second or two here.
    $opts = ['sentinels' => $sentinels, 'service' => 'mymaster', 'auto_renew' => true] + RL_PATIENT;
    if (rl_cad($set['master']['dsn']) === null) {
        rl_untested('a hold taken alone meeting READONLY on its SET IFEQ renewal (the scripts ran instead)', 'this server has no compare-and-delete');
    }
    $key = rl_key('demoted');
    $a = new Lock($key, 0, 6, $opts);
    $s0 = redis_lock_stats();
    $t = $a->addLock() or die("not acquired\n");
    // Until the replica has the key: a graceful failover waits for it too.
    $until = microtime(true) + 5;
    while (rl_cmd($set['replica']['dsn'], 'GET', $key) !== $t && microtime(true) < $until) { usleep(10000); }
    rl_cmd($sentinels[0], 'SENTINEL', 'FAILOVER', 'mymaster');
    $promoted = false;
    $until = microtime(true) + 15;
    while (microtime(true) < $until) {
        $role = rl_poll($set['master']['dsn'], 'ROLE');
        $named = rl_poll($sentinels[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster');
        if (is_array($role) && $role[0] === 'slave' && is_array($named) && (int) $named[1] === $set['replica']['port']) { $promoted = true; break; }
        usleep(50000);
    }
    // Longer than a lease: renewed through the new master since.
    usleep(8000000);
    $s1 = redis_lock_stats();
    printf("failed over: %s; owned %s, on the new master %s, lost %d, released %s\n", var_export($promoted, true),
        var_export($a->isOwned(), true), var_export(rl_cmd($set['replica']['dsn'], 'GET', $key) === $t, true),
        $s1['lost'] - $s0['lost'], var_export($a->releaseLock(), true));
} finally {
    rl_stop_sentinel_set($set);
}
?>
--EXPECT--
failed over: true; owned true, on the new master true, lost 0, released true
