--TEST--
Redis killed mid-process: LockConnectionException within about a second, naming the address, never the password; the same process recovers once Redis is back
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis(['--requirepass', 'pw-s3cret']);
$dsn = "redis://:pw-s3cret@127.0.0.1:{$srv['port']}";
try {
    $key = rl_key('killed');
    $l = new Lock($key, 0, 10, ['dsn' => $dsn]);
    var_dump(is_string($l->addLock()));
    posix_kill($srv['pid'], SIGKILL);
    usleep(100000);
    foreach (['tryLock', 'addLock', 'isLocked', 'releaseLock'] as $m) {
        $s = hrtime(true);
        try {
            $l->$m();
            echo "$m: no exception\n";
        } catch (LockConnectionException $e) {
            $ms = (hrtime(true) - $s) / 1e6;
            $msg = $e->getMessage();
            echo "$m: ", get_class($e),
                str_contains($msg, "127.0.0.1:{$srv['port']}") ? ', names address' : ", no address: $msg",
                str_contains($msg, 's3cret') ? ', LEAKS PASSWORD' : '',
                $ms < 1200 ? ', in time' : ", took $ms ms", "\n";
        }
    }
    // A waiting addLock does not wait out its deadline when Redis is down.
    $w = new Lock($key, 5, 10, ['dsn' => $dsn]);
    $s = hrtime(true);
    try { $w->addLock(); } catch (LockConnectionException $e) { echo "waiting addLock: thrown after ", (hrtime(true) - $s) / 1e6 < 1200 ? "under a second\n" : "too long\n"; }

    // Back on the same port: the same process, the same objects, carry on.
    $srv = rl_start_redis(['--requirepass', 'pw-s3cret'], $srv['port']);
    $t = $l->tryLock();
    var_dump(is_string($t), $l->isLocked(), $l->releaseLock($t), $l->isLocked());
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
bool(true)
tryLock: LockConnectionException, names address, in time
addLock: LockConnectionException, names address, in time
isLocked: LockConnectionException, names address, in time
releaseLock: LockConnectionException, names address, in time
waiting addLock: thrown after under a second
bool(true)
bool(true)
bool(true)
bool(false)
