--TEST--
Redlock whose majority takes the lock only after its validity ran out (every node reached through a proxy that delays each direction): not "someone else holds it" but Redis trouble, a LockConnectionException that says so, from tryLock() at once and from addLock() at its deadline (a passing state, tried again until then); nothing is left on any node; a held lock is still false, and the same nodes without the delay take it
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_fault.inc';
$nodes = rl_start_many(5);
$px = [];
try {
    // 40 ms each way: a round trip of 80 ms, against a lease of 60 ms.
    foreach ($nodes as $n) { $px[] = rl_fault_proxy($n['port'], 40); }
    $opts = ['servers' => array_column($px, 'dsn'), 'read_timeout' => 1, 'connect_timeout' => 1];
    $key = rl_key('redlock-slow');
    $outcome = function (callable $f): string {
        try {
            return 'returned ' . var_export($f(), true);
        } catch (LockException $e) {
            return get_class($e) . ': ' . $e->getMessage();
        }
    };
    $left = function () use ($nodes, $key): string {
        $on = [];
        foreach ($nodes as $i => $n) { if (rl_cmd($n['dsn'], 'EXISTS', $key)) { $on[] = $i; } }
        return $on ? implode(',', $on) : 'none';
    };
    $l = new Lock($key, 0, 0.06, $opts);
    $l->isLocked();  // the connections are made first
    echo "tryLock: ", $outcome(fn() => $l->tryLock()), "\n";
    echo "  left on the nodes: ", $left(), "\n";
    $w = new Lock($key, 0.5, 0.06, $opts);
    $t0 = microtime(true);
    echo "addLock: ", $outcome(fn() => $w->addLock()), "\n";
    $took = microtime(true) - $t0;
    echo "  at its deadline: ", $took >= 0.45 && $took < 1.5 ? 'yes' : "no ($took s)", "\n";
    echo "  left on the nodes: ", $left(), "\n";
    // Held by someone: false, as always, however slow the servers.
    $direct = ['servers' => array_column($nodes, 'dsn')];
    $h = new Lock($key, 0, 30, $direct);
    $h->tryLock();
    echo "held by another: ", $outcome(fn() => $l->tryLock()), "\n";
    $h->releaseLock();
    // The same nodes, without the delay.
    echo "without the delay: ", $outcome(fn() => is_string((new Lock($key, 0, 0.06, $direct))->tryLock())), "\n";
} finally {
    foreach ($px as $p) { rl_stop_proxy($p); }
    foreach ($nodes as $n) { rl_stop_redis($n); }
}
?>
--EXPECTF--
tryLock: LockConnectionException: redis-lock: Redis at %d of the 5 Redlock servers is not serving for now: a majority took the lock, but only after its validity had run out (%d ms of a 60 ms lease, less 2 ms for clock drift): the servers answered too slowly; undone on every server
  left on the nodes: none
addLock: LockConnectionException: redis-lock: Redis at %d of the 5 Redlock servers is not serving for now: a majority took the lock, but only after its validity had run out (%d ms of a 60 ms lease, less 2 ms for clock drift): the servers answered too slowly; undone on every server; still so after %f s
  at its deadline: yes
  left on the nodes: none
held by another: returned false
without the delay: returned true
