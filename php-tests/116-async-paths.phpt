--TEST--
Waits an event loop drives take every path a blocking wait takes: fencing (the grant's number, above the last holder's), the watchdog (a 1 s lease held 2.5 s in a fiber that sleeps), a durable grant (acknowledged by a replica, WAIT counted), a Sentinel failover mid-wait (the master killed; the wait gets the lock from the promoted replica), a server without RESP3 (HELLO renamed away: a subscriber of its own per wait, 12 fibers on 2 keys, every counter exact, the subscribers given back), and a server that dies mid-wait, which ends the async wait with the same exception class and message as the blocking wait's
--CONFLICTS--
cpu # sentinels and a failover
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/../docs/examples/fibers.php';
$dsn = rl_dsn();

// Fencing: the number the grant carries, above the last holder's.
$k = rl_key('fence');
$opts = ['dsn' => $dsn, 'fencing' => true];
$h = new Lock($k, 0, 10, $opts);
$ht = $h->addLock();
$first = $h->getFencingToken();
$a = new Lock($k, 5, 10, $opts);
$r = rl_run_fibers([
    'wait' => fn() => rl_await($a->addLockAsync()),
    'release' => function () use ($h, $ht) { rl_fiber_sleep(0.05); return $h->releaseLock($ht); },
]);
echo "fencing: handed over: ", var_export(is_string($r['wait']), true), ", number above the last: ", var_export(rl_is_fence($a->getFencingToken(), $first), true), "\n";
$a->releaseLock();

// synchronized() for a fiber (docs/examples/fibers.php): the callable's value, the
// lock released after; busy past its timeOut: LockTimeoutException, as synchronized().
$k = rl_key('fsync');
$opts = ['dsn' => $dsn];
$h = new Lock($k, 0, 10, $opts);
$ht = $h->addLock();
$r = rl_run_fibers([
    'sync' => fn() => rl_fiber_synchronized(new Lock($k, 5, 10, $opts), fn() => 'ran'),
    'timeout' => function () use ($k, $opts) {
        try { rl_fiber_synchronized(new Lock($k, 0.1, 10, $opts), fn() => 'ran'); } catch (LockTimeoutException $e) { return get_class($e); }
        return 'no exception';
    },
    'release' => function () use ($h, $ht) { rl_fiber_sleep(0.2); return $h->releaseLock($ht); },
]);
echo "fiber synchronized: ", $r['sync'], ", then free: ", var_export(!(new Lock($k, 0, 10, $opts))->isLocked(), true), ", busy: ", $r['timeout'], "\n";

// The watchdog: a 1 s lease, held 2.5 s by a fiber that sleeps meanwhile.
$k = rl_key('renew');
$opts = ['dsn' => $dsn, 'auto_renew' => true];
$h = new Lock($k, 0, 1, $opts);
$ht = $h->addLock();
$a = new Lock($k, 5, 1, $opts);
$r = rl_run_fibers([
    'wait' => function () use ($a) {
        $t = rl_await($a->addLockAsync());
        rl_fiber_sleep(2.5);
        return [is_string($t), $a->isOwned($t), $a->releaseLock($t)];
    },
    'release' => function () use ($h, $ht) { rl_fiber_sleep(0.05); return $h->releaseLock($ht); },
]);
echo "watchdog: got it, still owned after 2.5 s, released: ", json_encode($r['wait']), "\n";

// A durable grant: a master and its replica.
$m = rl_start_redis();
$rep = rl_start_redis(['--replicaof', '127.0.0.1', (string) $m['port']]);
try {
    rl_wait_synced($rep, microtime(true) + 10);
    $waits = fn() => preg_match('/^cmdstat_wait:calls=(\d+)/m', (string) rl_cmd($m['dsn'], 'INFO', 'commandstats'), $x) ? (int) $x[1] : 0;
    $k = rl_key('durable');
    $opts = ['dsn' => $m['dsn'], 'durable' => 1] + RL_PATIENT;
    $h = new Lock($k, 0, 10, $opts);
    $ht = $h->addLock();
    $w0 = $waits();
    $a = new Lock($k, 5, 10, $opts);
    $r = rl_run_fibers([
        'wait' => fn() => rl_await($a->addLockAsync()),
        'release' => function () use ($h, $ht) { rl_fiber_sleep(0.05); return $h->releaseLock($ht); },
    ]);
    echo "durable: got it: ", var_export(is_string($r['wait']), true), ", WAIT counted: ", var_export($waits() > $w0, true),
        ", on the replica: ", var_export(rl_cmd($rep['dsn'], 'GET', $k) === $r['wait'], true), "\n";
    $a->releaseLock();
} finally {
    rl_stop_redis($rep);
    rl_stop_redis($m);
}

// A Sentinel failover mid-wait.
$set = rl_start_sentinel_set();
try {
    $opts = ['sentinels' => array_column($set['sentinels'], 'dsn'), 'service' => 'mymaster', 'read_timeout' => 0.3, 'connect_timeout' => 0.3];
    $k = rl_key('failover');
    $h = new Lock($k, 0, 30, $opts);
    $h->addLock();
    $a = new Lock($k, 20, 10, $opts);
    $r = rl_run_fibers([
        'wait' => function () use ($a) {
            $t0 = microtime(true);
            try { $t = rl_await($a->addLockAsync()); } catch (LockException $e) { return get_class($e) . ': ' . $e->getMessage(); }
            return [is_string($t), microtime(true) - $t0 > 0.5];
        },
        // The master killed; once the replica is promoted, the holder releases there.
        'kill' => function () use ($set, $h) {
            rl_fiber_sleep(0.2);
            rl_kill_redis($set['master']);
            for ($until = microtime(true) + 15; microtime(true) < $until; rl_fiber_sleep(0.1)) {
                try { return $h->releaseLock(); } catch (LockException $e) {}
            }
            return false;
        },
    ]);
    echo "sentinel failover mid-wait: released on the promoted replica: ", var_export($r['kill'], true), ", the wait got it after the election: ", json_encode($r['wait']), "\n";
    echo "  the replica is the master now: ", rl_cmd($set['replica']['dsn'], 'ROLE')[0], "\n";
} finally {
    rl_stop_sentinel_set($set);
}

// A server without RESP3: a subscriber of its own per wait.
$old = rl_start_redis(['--rename-command', 'HELLO', '']);
try {
    $opts = ['dsn' => $old['dsn']] + RL_PATIENT;
    $keys = [rl_key('old0'), rl_key('old1')];
    $n = [0, 0];
    $fns = [];
    for ($f = 0; $f < 12; $f++) {
        $fns[$f] = function () use ($f, $keys, $opts, $old, &$n) {
            $k = $keys[$f % 2];
            $l = new Lock($k, 10, 10, $opts);
            for ($j = 0; $j < 4; $j++) {
                $t = rl_await($l->addLockAsync());
                if ($t === false) { return false; }
                $v = (int) rl_cmd($old['dsn'], 'GET', "$k:count");
                rl_fiber_sleep(0.002);
                rl_cmd($old['dsn'], 'SET', "$k:count", (string) ($v + 1));
                $l->releaseLock($t);
                $n[$f % 2]++;
            }
            return true;
        };
    }
    $r = rl_run_fibers($fns);
    $counts = array_map(fn($k) => (int) rl_cmd($old['dsn'], 'GET', "$k:count"), $keys);
    echo "without RESP3: ", count(array_filter($r)), " of 12 fibers done, counters exact: ", var_export($counts === $n && $n === [24, 24], true), "\n";
    $chans = count((array) rl_cmd($old['dsn'], 'PUBSUB', 'CHANNELS', 'redis_lock:wake:*'));
    echo "  channels still listened to after: $chans\n";
} finally {
    rl_stop_redis($old);
}

// A server that dies mid-wait: the async wait ends as the blocking one does.
$ends = [];
foreach (['blocking', 'async'] as $how) {
    $srv = rl_start_redis();
    $opts = ['dsn' => $srv['dsn'], 'connect_timeout' => 0.3, 'read_timeout' => 0.3];
    $k = 'dies';
    $h = new Lock($k, 0, 30, $opts);
    $h->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) { usleep(200000); rl_kill_redis($srv); exit(0); }
    $a = new Lock($k, 1.0, 10, $opts);
    try {
        $r = $how === 'blocking' ? $a->addLock() : rl_run_fibers(['w' => fn() => rl_await($a->addLockAsync())])['w'];
        $ends[$how] = 'returned ' . var_export($r, true);
    } catch (LockException $e) {
        $ends[$how] = get_class($e) . ': ' . preg_replace(['/\d+(\.\d+)? ?(s|ms)\b/', '/127\.0\.0\.1:\d+/'], ['N s', 'ADDR'], $e->getMessage());
    }
    pcntl_waitpid($pid, $st);
    unset($h, $a);
}
echo "server dies mid-wait, same end: ", var_export($ends['blocking'] === $ends['async'], true), "\n";
if ($ends['blocking'] !== $ends['async']) { print_r($ends); }
echo "  ", explode(':', $ends['async'])[0], "\n";
--EXPECT--
fencing: handed over: true, number above the last: true
fiber synchronized: ran, then free: true, busy: LockTimeoutException
watchdog: got it, still owned after 2.5 s, released: [true,true,true]
durable: got it: true, WAIT counted: true, on the replica: true
sentinel failover mid-wait: released on the promoted replica: true, the wait got it after the election: [true,true]
  the replica is the master now: master
without RESP3: 12 of 12 fibers done, counters exact: true
  channels still listened to after: 0
server dies mid-wait, same end: true
  LockConnectionException
