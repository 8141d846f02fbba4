--TEST--
Redlock over 5 independent servers: a second client is refused; with 2 of 5 killed it still acquires without stalling; with 3 of 5 killed it throws LockConnectionException naming them and leaves nothing on the survivors; a stalled node costs one per-node timeout
--CONFLICTS--
all # a stalled node checked to cost 80 ms over its timeout: alone
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$nodes = rl_start_many(5);
$servers = array_column($nodes, 'dsn');
$exists = fn($key) => array_sum(array_map(fn($n) => rl_cmd($n['dsn'], 'EXISTS', $key), $nodes));
try {
    $opts = ['servers' => $servers, 'read_timeout' => 0.2, 'connect_timeout' => 0.2];
    $key = rl_key('redlock');
    $a = new Lock($key, 0, 5, $opts);
    $b = new Lock($key, 0, 5, $opts);
    $t = $a->addLock();
    echo "a holds it on ", $exists($key), " of 5 nodes; b refused: ", var_export($b->tryLock(), true), "\n";
    $ttl = $a->getTtl();
    var_dump($a->isOwned(), $b->isOwned(), $b->isLocked(), $ttl > 4.5 && $ttl <= 5, $a->getFencingToken());
    var_dump($a->extendLock(null, 20), $a->getTtl() > 19);
    var_dump($b->extendLock($t . 'x', 60), $a->releaseLock(), $exists($key), $a->isLocked(), $a->getTtl());

    // Two of five killed: a majority (3) is still there.
    rl_kill_redis($nodes[0]); rl_kill_redis($nodes[1]);
    $t0 = microtime(true);
    $t = $a->addLock();
    $took = microtime(true) - $t0;
    echo "2 of 5 down: acquired ", var_export(is_string($t), true), ", without stalling: ", var_export($took < 0.2, true), "\n";
    var_dump($b->tryLock(), $a->isOwned(), $a->releaseLock());

    // Three of five killed: no majority can exist. Nothing may stay on the two left.
    rl_kill_redis($nodes[2]);
    try {
        $a->tryLock();
        echo "no exception\n";
    } catch (LockConnectionException $e) {
        $m = $e->getMessage();
        $named = str_contains($m, $servers[0]) && str_contains($m, $servers[1]) && str_contains($m, $servers[2]);
        echo "3 of 5 down: ", get_class($e), ", names the dead nodes: ", var_export($named, true),
            ", spares the live ones: ", var_export(!str_contains($m, $servers[3]) && !str_contains($m, $servers[4]), true), "\n";
    }
    echo "left on the survivors: ", rl_cmd($servers[3], 'EXISTS', $key) + rl_cmd($servers[4], 'EXISTS', $key), "\n";
} finally {
    foreach ($nodes as $n) { rl_stop_redis($n); }
}

// A stalled node (SIGSTOP) costs at most the per-node timeout, once per call.
$nodes = rl_start_many(5);
try {
    $key = rl_key('redlock-stall');
    $l = new Lock($key, 0, 5, ['servers' => array_column($nodes, 'dsn'), 'read_timeout' => 0.1]);
    $l->isLocked();                          // connections made
    posix_kill($nodes[4]['pid'], SIGSTOP);
    $t0 = microtime(true);
    $t = $l->addLock();
    $acq = microtime(true) - $t0;
    $t0 = microtime(true);
    $ok = $l->releaseLock();
    $rel = microtime(true) - $t0;
    echo "1 of 5 stalled: acquired ", var_export(is_string($t), true), " in about one timeout: ", var_export($acq < 0.18, true),
        ", released ", var_export($ok, true), " in about one timeout: ", var_export($rel < 0.18, true), "\n";
    posix_kill($nodes[4]['pid'], SIGCONT);
} finally {
    foreach ($nodes as $n) { rl_stop_redis($n); }
}

// Bad Redlock settings are caught at construction.
foreach ([['servers' => ['redis://127.0.0.1:1', 'http://x']], ['servers' => []], ['servers' => 'redis://127.0.0.1:1'],
          ['servers' => ['redis://127.0.0.1:1'], 'fair' => true]] as $bad) {
    try { new Lock('k', 0, 1, $bad); echo "accepted\n"; }
    catch (Error $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
}
?>
--EXPECT--
a holds it on 5 of 5 nodes; b refused: false
bool(true)
bool(false)
bool(true)
bool(true)
NULL
bool(true)
bool(true)
bool(false)
bool(true)
int(0)
bool(false)
NULL
2 of 5 down: acquired true, without stalling: true
bool(false)
bool(true)
bool(true)
3 of 5 down: LockConnectionException, names the dead nodes: true, spares the live ones: true
left on the survivors: 0
1 of 5 stalled: acquired true in about one timeout: true, released true in about one timeout: true
ValueError: invalid dsn "http://x": expected redis://[user:pass@]host[:port][/db], rediss://... or unix:///path/to.sock
ValueError: option "servers" must list at least one server
TypeError: option "servers" must be of type array (a list of dsn strings), string given
ValueError: option "fair" needs a queue, which Redlock ("servers") does not keep
