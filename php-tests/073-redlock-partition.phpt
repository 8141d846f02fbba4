--TEST--
Redlock with 2 of 5 nodes partitioned (fault proxy: one partitioned, one half-open): acquire and release still work by majority, each within about read_timeout; the SET that waited in the partition lands late, on a minority, and the release queued behind it on the same connection clears it. With 3 of 5 cut off, acquire throws LockConnectionException naming exactly those three, leaves nothing on the reachable nodes, and the lock stays free to take once they heal
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_fault.inc';
/** How many SETs the server at $dsn has run, from INFO commandstats. */
function rl_set_calls(string $dsn): int {
    return preg_match('/^cmdstat_set:calls=(\d+)/m', (string) rl_cmd($dsn, 'INFO', 'commandstats'), $m) ? (int) $m[1] : 0;
}
$nodes = rl_start_many(5);
// Nodes 0, 1 and 2 are reached through proxies, 3 and 4 directly.
$px = [];
try {
    for ($i = 0; $i < 3; $i++) { $px[] = rl_fault_proxy($nodes[$i]['port']); }
    $servers = [$px[0]['dsn'], $px[1]['dsn'], $px[2]['dsn'], $nodes[3]['dsn'], $nodes[4]['dsn']];
    $rt = 0.3;
    $lease = 2;
    $opts = ['servers' => $servers, 'read_timeout' => $rt, 'connect_timeout' => $rt];
    $yes = fn(bool $b) => $b ? 'yes' : 'NO';
    // Which nodes hold $key with $token, read on the servers themselves.
    $holding = function (string $key, string $token) use ($nodes): string {
        $on = [];
        foreach ($nodes as $i => $n) { if (rl_cmd($n['dsn'], 'GET', $key) === $token) { $on[] = $i; } }
        return $on ? implode(',', $on) : 'none';
    };
    $keyed = function (string $key) use ($nodes): string {
        $on = [];
        foreach ($nodes as $i => $n) { if (rl_cmd($n['dsn'], 'EXISTS', $key)) { $on[] = $i; } }
        return $on ? implode(',', $on) : 'none';
    };

    $key = rl_key('redlock-partition');
    $a = new Lock($key, 0, $lease, $opts);
    // Connections to all five first (and the scripts cached): the faults hit open connections.
    $a->addLock();
    $a->releaseLock();
    // A busy machine may leave the warm-up's release on a node past read_timeout (a
    // release does not wait for a slow node): the faults start with the key nowhere.
    for ($i = 0; $i < 300 && $keyed($key) !== 'none'; $i++) { usleep(10000); }

    echo "2 of 5: node 0 partitioned, node 1 half-open\n";
    rl_proxy($px[0], 'partition');
    rl_proxy($px[1], 'halfopen');
    [$t, $took] = rl_timed(fn() => $a->addLock());
    echo "  acquire: ", is_string($t) ? 'a token' : rl_outcome($t), ", within about read_timeout: ", $yes($took < $rt + 0.4),
        ", held on nodes ", is_string($t) ? $holding($key, $t) : '-', "\n";
    $b = new Lock($key, 0, $lease, $opts);
    [$r, $took] = rl_timed(fn() => $b->tryLock());
    echo "  another client: ", rl_outcome($r), "\n";
    [$r, $took] = rl_timed(fn() => $a->releaseLock());
    echo "  release: ", rl_outcome($r), ", within about read_timeout: ", $yes($took < $rt + 0.4),
        ", left on nodes ", $keyed($key), "\n";
    // The SET sent to node 0 waited in the partition: it lands now, after the call
    // returned, and the release, sent on the same connection behind it, clears it.
    $sets = rl_set_calls($nodes[0]['dsn']);
    rl_heal($px[0]);
    echo "  after the heal, node 0 ran the late SETs: ", $yes(rl_set_calls($nodes[0]['dsn']) > $sets),
        ", and the release behind them: left on nodes ", $keyed($key), "\n";
    [$t, $took] = rl_timed(fn() => $b->tryLock());
    echo "  another client takes it at once: ", $yes(is_string($t)), ", releases it: ", rl_outcome($b->releaseLock()), "\n";

    echo "3 of 5: nodes 0 and 2 partitioned, node 1 half-open\n";
    // A fresh name: node 0 still holds the late SET above until its lease ends.
    $key = rl_key('redlock-partition-3');
    $a = new Lock($key, 0, $lease, $opts);
    $b = new Lock($key, 0, $lease, $opts);
    $a->isLocked();        // open connections on every node again
    rl_proxy($px[0], 'partition');
    rl_proxy($px[1], 'halfopen');
    rl_proxy($px[2], 'partition');
    [$r, $took] = rl_timed(fn() => $a->tryLock());
    $m = $r instanceof Throwable ? $r->getMessage() : '';
    echo "  tryLock: ", $r instanceof Throwable ? get_class($r) : rl_outcome($r),
        ", names the three: ", $yes(str_contains($m, $servers[0]) && str_contains($m, $servers[1]) && str_contains($m, $servers[2])),
        ", and not the two others: ", $yes(!str_contains($m, $servers[3]) && !str_contains($m, $servers[4])),
        ", within a few read_timeouts: ", $yes($took < 3 * $rt + 0.5), "\n";
    // The undo: nothing on the nodes that answer; 0 and 2 have not seen the SET yet, and
    // their undo waits behind it on the same connection.
    echo "  held on any node after it: ", $keyed($key), "\n";
    rl_heal($px[0]);
    rl_heal($px[2]);
    // The SETs that waited in the partition land now, on 2 of 5 nodes at most, within their lease.
    $late = array_filter([0, 2], fn($i) => rl_cmd($nodes[$i]['dsn'], 'EXISTS', $key));
    $bounded = array_filter($late, fn($i) => rl_cmd($nodes[$i]['dsn'], 'PTTL', $key) <= $lease * 1000);
    echo "  after the heal: late SETs only on 0 and 2, within their lease: ", $yes(count($bounded) === count($late)
        && rl_cmd($nodes[1]['dsn'], 'EXISTS', $key) + rl_cmd($nodes[3]['dsn'], 'EXISTS', $key) + rl_cmd($nodes[4]['dsn'], 'EXISTS', $key) === 0), "\n";
    [$t, $took] = rl_timed(fn() => $b->tryLock());
    echo "  another client takes it at once: ", $yes(is_string($t)), ", releases it: ", rl_outcome($b->releaseLock()), "\n";
} finally {
    foreach ($px as $q) { rl_stop_proxy($q); }
    foreach ($nodes as $n) { rl_stop_redis($n); }
}
?>
--EXPECT--
2 of 5: node 0 partitioned, node 1 half-open
  acquire: a token, within about read_timeout: yes, held on nodes 2,3,4
  another client: false
  release: true, within about read_timeout: yes, left on nodes none
  after the heal, node 0 ran the late SETs: yes, and the release behind them: left on nodes none
  another client takes it at once: yes, releases it: true
3 of 5: nodes 0 and 2 partitioned, node 1 half-open
  tryLock: LockConnectionException, names the three: yes, and not the two others: yes, within a few read_timeouts: yes
  held on any node after it: none
  after the heal: late SETs only on 0 and 2, within their lease: yes
  another client takes it at once: yes, releases it: true
