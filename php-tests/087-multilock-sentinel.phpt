--TEST--
MultiLock on Sentinel: every key taken on the master found through the sentinels, a waiter woken by a Lock's release there, and after the master is killed the MultiLock resumes on the promoted replica
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$set = rl_start_sentinel_set();
try {
    $sentinels = array_column($set['sentinels'], 'dsn');
    $opts = ['sentinels' => $sentinels, 'service' => 'mymaster', 'read_timeout' => 0.3, 'connect_timeout' => 0.3];
    [$a, $b] = [rl_key('sa'), rl_key('sb')];
    $m = new MultiLock([$a, $b], 0, 5, $opts);
    $t = $m->addLock();
    echo "on the master: ", json_encode([rl_cmd($set['master']['dsn'], 'GET', $a) === $t, rl_cmd($set['master']['dsn'], 'GET', $b) === $t]), "\n";
    var_dump($m->releaseLock());

    $l = new Lock($b, 0, 5, $opts);
    $tb = $l->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) {
        usleep(300000);
        exit((new Lock($b, 0, 5, ['sentinels' => $sentinels, 'service' => 'mymaster']))->releaseLock($tb) ? 0 : 1);
    }
    $w = new MultiLock([$a, $b], 3, 5, $opts);
    $s = microtime(true);
    $t = $w->addLock();
    $took = microtime(true) - $s;
    pcntl_waitpid($pid, $st);
    echo "woken by the release: ", json_encode(is_string($t)), ", after ", $took >= 0.25 && $took < 0.8 ? '0.3 s' : "$took s", "\n";
    var_dump($w->releaseLock());

    // The master killed: the sentinels promote the replica, and the MultiLock goes on there.
    rl_kill_redis($set['master']);
    $deadline = microtime(true) + 20;
    $t = false;
    while ($t === false && microtime(true) < $deadline) {
        try { $t = $m->tryLock(); } catch (LockConnectionException $e) { usleep(200000); }
    }
    echo "after the failover: ", json_encode(is_string($t)), ", on the promoted replica: ",
        json_encode(is_string($t) && rl_cmd($set['replica']['dsn'], 'GET', $a) === $t && rl_cmd($set['replica']['dsn'], 'GET', $b) === $t), "\n";
    var_dump($m->releaseLock());
} finally {
    rl_stop_sentinel_set($set);
}
?>
--EXPECT--
on the master: [true,true]
bool(true)
woken by the release: true, after 0.3 s
bool(true)
after the failover: true, on the promoted replica: true
bool(true)
