--TEST--
MultiLock on Redlock (3 servers): every node runs the all-or-none take, held with a majority; a Lock on one of its keys keeps it waiting until released; with one node killed it still takes; a majority of nodes holding one of its keys refuses it and leaves nothing behind; extendLock, isOwned, getTtl; no fencing; INF and fair refused
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$nodes = rl_start_many(3);
try {
    $servers = array_column($nodes, 'dsn');
    $opts = ['servers' => $servers, 'read_timeout' => 0.3, 'connect_timeout' => 0.3, 'retry_delay' => 0.02];
    [$a, $b] = [rl_key('ra'), rl_key('rb')];
    $on = fn($k) => implode(',', array_map(fn($d) => (int) rl_cmd($d, 'EXISTS', $k), $servers));

    $m = new MultiLock([$a, $b], 0, 5, $opts);
    $t = $m->addLock();
    echo "taken: ", json_encode(is_string($t)), ", a on {$on($a)}, b on {$on($b)}, holds the token everywhere: ",
        json_encode(array_map(fn($d) => rl_cmd($d, 'GET', $a) === $t && rl_cmd($d, 'GET', $b) === $t, $servers)), "\n";
    echo "owned ", json_encode($m->isOwned()), ", ttl ", $m->getTtl() > 4 ? 'about 5' : $m->getTtl(), ", fencing ", json_encode($m->getFencingToken()), "\n";
    echo "extend to 20 s: ", json_encode($m->extendLock(null, 20)), ", ttl ", $m->getTtl() > 19 ? 'about 20' : $m->getTtl(), "\n";
    $l = new Lock($b, 0, 5, $opts);
    echo "a Lock on one of its keys: ", var_export($l->tryLock(), true), "\n";
    var_dump($m->releaseLock());
    echo "after the release: a on {$on($a)}, b on {$on($b)}\n";

    // A Lock holds b: the MultiLock polls until the Lock's release.
    $tb = $l->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) { usleep(300000); exit((new Lock($b, 0, 5, ['servers' => $servers]))->releaseLock($tb) ? 0 : 1); }
    $w = new MultiLock([$b, $a], 3, 5, $opts);
    $s = microtime(true);
    $t = $w->addLock();
    $took = microtime(true) - $s;
    pcntl_waitpid($pid, $st);
    echo "after the Lock's release: ", json_encode(is_string($t)), ", in ", $took >= 0.25 && $took < 1.5 ? 'well under its wait' : "$took s", "\n";
    $w->releaseLock();

    // b held on 2 of 3 nodes by someone else: no majority can take both; nothing left.
    rl_cmd($servers[0], 'SET', $b, 'other', 'PX', '5000');
    rl_cmd($servers[1], 'SET', $b, 'other', 'PX', '5000');
    var_dump($m->tryLock());
    echo "a left on {$on($a)}\n";
    rl_cmd($servers[0], 'DEL', $b); rl_cmd($servers[1], 'DEL', $b);

    // One node killed: a majority still takes.
    rl_kill_redis($nodes[2]);
    $t = $m->addLock();
    echo "one node down: ", json_encode(is_string($t)), ", released ", json_encode($m->releaseLock()), "\n";

    foreach ([[INF, []], [5, ['fair' => true]]] as [$lockOut, $more]) {
        try { new MultiLock([$a], 0, $lockOut, $opts + $more); echo "no error\n"; }
        catch (ValueError $e) { echo "ValueError: ", $e->getMessage(), "\n"; }
    }
} finally {
    foreach ($nodes as $n) { rl_stop_redis($n); }
}
?>
--EXPECT--
taken: true, a on 1,1,1, b on 1,1,1, holds the token everywhere: [true,true,true]
owned true, ttl about 5, fencing null
extend to 20 s: true, ttl about 20
a Lock on one of its keys: false
bool(true)
after the release: a on 0,0,0, b on 0,0,0
after the Lock's release: true, in well under its wait
bool(false)
a left on 0,0,0
one node down: true, released true
ValueError: MultiLock::__construct(): Argument #3 ($lockOut) must be finite with Redlock ("servers"): its safety rests on the lease
ValueError: option "fair" needs a queue, which Redlock ("servers") does not keep
