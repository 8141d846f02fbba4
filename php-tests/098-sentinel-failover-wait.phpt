--TEST--
Sentinel: a failover is a passing state. The master is killed behind its proxy, which still accepts and closes each connection at its first command; until the sentinels have promoted its replica (down-after, a vote, the promotion), a blocking addLock(), acquire() and MultiLock's addLock() wait it out and get their hold with no exception, a wait shorter than the failover ends after about the wait with a LockConnectionException naming the failover in progress and the master's address, and a call that does not wait answers at once (a release there too, with an exception)
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/_failover.inc';
// Each node behind a proxy that stays up, as a load balancer or a proxy in front of a
// real master does: the killed master's address still accepts, and closes each
// connection at its first command (a refused connection, the other way a master is
// gone, is tests/failover.rs's).
$set = rl_start_sentinel_set(proxied: true);
try {
    $opts = ['sentinels' => array_column($set['sentinels'], 'dsn'), 'service' => 'mymaster', 'read_timeout' => 0.3, 'connect_timeout' => 0.3];
    $keys = ['lock' => rl_key('failover'), 'held' => rl_key('held'), 'sem' => rl_key('sem'), 'multi' => [rl_key('multi'), rl_key('multi')]];
    foreach ([new Lock($keys['lock'], 0, 5, $opts), new MultiLock($keys['multi'], 0, 5, $opts)] as $l) { $l->addLock(); $l->releaseLock(); }
    $out = rl_failover_during($opts, $keys, fn() => rl_kill_redis($set['master']), 0.4, 20);
    // The sentinels' down-after-milliseconds (0.5 s) passes before they even agree it is down.
    rl_failover_report($out, 'sentinel failover of mymaster in progress', '127.0.0.1:' . $set['proxies'][0]['port'], 0.4, 0.5);
    echo "the replica is the master now: ", rl_cmd($set['replica']['dsn'], 'ROLE')[0], "\n";
} finally {
    rl_stop_sentinel_set($set);
}
?>
--EXPECT--
no wait: LockConnectionException naming the state and the address: true, at once: true
a release there: LockConnectionException, at once: true
a 0.4 s wait: LockConnectionException naming the state and the address: true, and the wait: true, after about the wait: true
a long wait, Lock: acquired, after the election: true
a long wait, Semaphore: acquired, after the election: true
a long wait, MultiLock: acquired, after the election: true
the replica is the master now: master
