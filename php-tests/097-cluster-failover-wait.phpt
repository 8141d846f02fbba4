--TEST--
Redis Cluster: a failover is a passing state. A master is killed; until its replica is promoted (node timeout, then an election), a blocking addLock(), acquire() and MultiLock's addLock() wait it out and get their hold with no exception, a wait shorter than the election ends after about the wait with a LockConnectionException naming the slot's state and the master's address, and a call that does not wait answers at once (a release there too, with an exception)
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/_failover.inc';
$c = rl_start_cluster();
try {
    $seeds = $c['seeds'];
    $opts = ['cluster' => $seeds, 'read_timeout' => 0.3, 'connect_timeout' => 0.3];
    $k = rl_key('failover');
    $master = rl_cluster_master_of($seeds[0], $k);
    $on = function (string $name, bool $there = true) use ($seeds, $master) {
        do { $key = rl_key($name); } while ((rl_cluster_master_of($seeds[0], $key) === $master) !== $there);
        return $key;
    };
    $keys = ['lock' => $k, 'held' => $on('held'), 'sem' => $on('sem'), 'multi' => [$on('multi'), $on('multi-elsewhere', false)]];
    // Every kind once before the kill: the process knows the slot map and has its connections.
    foreach ([new Lock($k, 0, 5, $opts), new MultiLock($keys['multi'], 0, 5, $opts)] as $l) { $l->addLock(); $l->releaseLock(); }
    $victim = current(array_filter($c['nodes'], fn($n) => $n['dsn'] === $master));
    $out = rl_failover_during($opts, $keys, fn() => rl_kill_redis($victim), 0.4, 20);
    // A cluster-node-timeout of 1 s passes before the master is even marked failed.
    rl_failover_report($out, 'has no master', '127.0.0.1:' . $victim['port'], 0.4, 1.0);
    $other = current(array_filter($seeds, fn($d) => $d !== $master));
    echo "the slot has a new master: ", var_export(rl_cluster_master_of($other, $k) !== $master, true), "\n";
} finally {
    rl_stop_cluster($c);
}
?>
--EXPECT--
no wait: LockConnectionException naming the state and the address: true, at once: true
a release there: LockConnectionException, at once: true
a 0.4 s wait: LockConnectionException naming the state and the address: true, and the wait: true, after about the wait: true
a long wait, Lock: acquired, after the election: true
a long wait, Semaphore: acquired, after the election: true
a long wait, MultiLock: acquired, after the election: true
the slot has a new master: true
