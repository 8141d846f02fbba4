--TEST--
A user whose ACL forbids pub/sub waits by polling; its release cannot wake listeners, who still find the lock within about a second, not at the end of its 10 s lease
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
try {
    $p = $srv['port'];
    // No channel permission: SUBSCRIBE and PUBLISH are refused for this user.
    rl_cmd($dsn, 'ACL', 'SETUSER', 'nochan', 'on', '>pw', '~*', '+@all', 'resetchannels');
    $nochan = "redis://nochan:pw@127.0.0.1:$p";
    $key = rl_key('nopubsub');
    // Patient timeouts (5 s): the default 0.5 s is not what this is about, and its own
    // server, starved of a core beside other tests under a CPU hog (make test-stress,
    // 3 at a time, a load of 6), once took longer than that to answer the holder.
    $holder = new Lock($key, 0, 10, ['dsn' => $nochan] + RL_PATIENT);
    $holder->addLock() or die("holder failed\n");
    $pid = pcntl_fork();
    if ($pid === 0) {
        $l = new Lock($key, 3, 5, ['dsn' => $nochan] + RL_PATIENT);   // polls every 2..50 ms
        $t0 = microtime(true);
        $t = $l->addLock();
        $l->releaseLock($t);
        exit($t !== false && microtime(true) - $t0 < 1.0 ? 0 : 1);
    }
    usleep(300000);
    $holder->releaseLock();
    pcntl_waitpid($pid, $st);
    echo "polling waiter: ", pcntl_wexitstatus($st) === 0 ? "acquired soon after the release" : "FAILED", "\n";
    // A listening waiter is not told when a pub/sub-less user releases: it rechecks every second.
    $holder->addLock() or die("holder failed\n");
    $pid = pcntl_fork();
    if ($pid === 0) {
        $l = new Lock($key, 3, 5, ['dsn' => $dsn, 'retry_delay' => 2.0, 'retry_delay_max' => 2.0] + RL_PATIENT);
        $t0 = microtime(true);
        $t = $l->addLock();
        exit($t !== false && microtime(true) - $t0 < 1.5 ? 0 : 1);
    }
    usleep(300000);
    var_dump($holder->releaseLock());
    pcntl_waitpid($pid, $st);
    echo "listening waiter: ", pcntl_wexitstatus($st) === 0 ? "acquired within a second and a half" : "FAILED", "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
polling waiter: acquired soon after the release
bool(true)
listening waiter: acquired within a second and a half
