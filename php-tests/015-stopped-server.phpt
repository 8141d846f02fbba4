--TEST--
A stalled Redis (SIGSTOP) costs at most about a second, is reported, and leaves no lock behind
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
try {
    $key = rl_key('stopped');
    $l = new Lock($key, 0, 10, ['dsn' => $srv['dsn']]);
    var_dump($l->isLocked());
    posix_kill($srv['pid'], SIGSTOP);
    $s = hrtime(true);
    try {
        $l->tryLock();
        echo "no exception\n";
    } catch (LockConnectionException $e) {
        $ms = (hrtime(true) - $s) / 1e6;
        echo get_class($e), str_contains($e->getMessage(), 'timed out') ? ' (timed out)' : ' ' . $e->getMessage(),
            $ms < 1300 ? ' in time' : " after $ms ms", "\n";
    }
    posix_kill($srv['pid'], SIGCONT);
    usleep(100000);
    // The SET may have landed once Redis resumed; the object remembers its token.
    $l->releaseLock();
    var_dump($l->isLocked());
    var_dump(is_string($l->tryLock()), $l->releaseLock());
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
bool(false)
LockConnectionException (timed out) in time
bool(false)
bool(true)
bool(true)
