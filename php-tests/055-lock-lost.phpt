--TEST--
LockLostException: synchronized() whose lease ran out under the work while another process took the lock throws it (the result is not returned) on one server, on Redlock, on Sentinel and on Cluster, for a semaphore too; found by the watchdog, the message says how long before the work finished
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
var_dump(get_parent_class('LockLostException'), (new ReflectionClass('LockLostException'))->isFinal());

/** synchronized() with a 0.3 s lease, no renewal; another process takes the lock meanwhile. */
function lose(string $name, array $o): void {
    $key = rl_key('lost');
    $pid = pcntl_fork();
    if ($pid === 0) {
        usleep(50000);
        // Waits for the lease to run out, then takes the lock for a while.
        $l = new Lock($key, 3, 5, $o);
        $t = $l->addLock();
        usleep(500000);
        exit($t === false ? 1 : 0);
    }
    $taken = null;
    $result = 'unset';
    try {
        $result = (new Lock($key, 0, 0.3, $o + ['auto_renew' => false]))->synchronized(function () use (&$taken, $key, $o) {
            usleep(600000);
            $taken = (new Lock($key, 0, 1, $o))->isLocked();
            return 'result';
        });
    } catch (LockLostException $e) {
        printf("%s: %s, held by the other process meanwhile: %s, result returned: %s\n  %s\n", $name, get_class($e),
            var_export($taken, true), $result === 'unset' ? 'no' : 'yes', str_replace($key, 'KEY', $e->getMessage()));
    }
    pcntl_waitpid($pid, $st);
    if (pcntl_wexitstatus($st) !== 0) { echo "$name: the other process did not get the lock\n"; }
}

$one = rl_dsn();
lose('one server', ['dsn' => $one]);

// Kept to its end, the same work is no loss.
$ok = (new Lock(rl_key('kept'), 0, 5, ['dsn' => $one]))->synchronized(fn() => 'done');
echo "kept: $ok\n";

// A semaphore's permits, the same way.
$skey = rl_key('lost-sem');
$pid = pcntl_fork();
if ($pid === 0) { usleep(50000); $s = new Semaphore($skey, 1, 3, 5, ['dsn' => $one]); $t = $s->acquire(); usleep(500000); exit($t === false ? 1 : 0); }
try {
    (new Semaphore($skey, 1, 0, 0.3, ['dsn' => $one]))->synchronized(fn() => usleep(600000) ?? 'result');
} catch (LockLostException $e) {
    echo "semaphore: ", get_class($e), "\n  ", str_replace($skey, 'KEY', $e->getMessage()), "\n";
}
pcntl_waitpid($pid, $st);

// Found by the watchdog: the lock is force-released under the work and taken by another.
$wkey = rl_key('lost-watchdog');
$pid = pcntl_fork();
if ($pid === 0) {
    usleep(100000);
    $l = new Lock($wkey, 2, 5, ['dsn' => $one]);
    $l->forceReleaseLock();
    $t = $l->addLock();
    usleep(700000);
    exit($t === false ? 1 : 0);
}
try {
    (new Lock($wkey, 0, 0.3, ['dsn' => $one, 'auto_renew' => true]))->synchronized(fn() => usleep(600000));
} catch (LockLostException $e) {
    echo "watchdog: ", preg_replace('/gone \d\.\d{3} s before/', 'gone N s before', str_replace($wkey, 'KEY', $e->getMessage())), "\n";
}
pcntl_waitpid($pid, $st);

$nodes = rl_start_many(3);
try {
    lose('redlock', ['servers' => array_column($nodes, 'dsn')]);
} finally {
    foreach ($nodes as $n) { rl_stop_redis($n); }
}

$set = rl_start_sentinel_set();
try {
    lose('sentinel', ['sentinels' => array_column($set['sentinels'], 'dsn'), 'service' => 'mymaster']);
} finally {
    rl_stop_sentinel_set($set);
}

$c = rl_start_cluster();
try {
    lose('cluster', ['cluster' => $c['seeds']]);
} finally {
    rl_stop_cluster($c);
}
?>
--EXPECT--
string(13) "LockException"
bool(false)
one server: LockLostException, held by the other process meanwhile: true, result returned: no
  redis-lock: the lock "KEY" was lost before the work finished (its lease ran out, or someone else took it; the release at the end of the work found it gone): part of the work ran unprotected
kept: done
semaphore: LockLostException
  redis-lock: the semaphore "KEY" was lost before the work finished (its lease ran out, or someone else took it; the release at the end of the work found it gone): part of the work ran unprotected
watchdog: redis-lock: the lock "KEY" was lost before the work finished (its lease ran out, or someone else took it; the watchdog found it gone N s before the work finished): part of the work ran unprotected
redlock: LockLostException, held by the other process meanwhile: true, result returned: no
  redis-lock: the lock "KEY" was lost before the work finished (its lease ran out, or someone else took it; the release at the end of the work found it gone): part of the work ran unprotected
sentinel: LockLostException, held by the other process meanwhile: true, result returned: no
  redis-lock: the lock "KEY" was lost before the work finished (its lease ran out, or someone else took it; the release at the end of the work found it gone): part of the work ran unprotected
cluster: LockLostException, held by the other process meanwhile: true, result returned: no
  redis-lock: the lock "KEY" was lost before the work finished (its lease ran out, or someone else took it; the release at the end of the work found it gone): part of the work ran unprotected
