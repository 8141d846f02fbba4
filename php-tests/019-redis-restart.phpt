--TEST--
Redis restarts (SIGKILL, then back from its AOF) while a holder is dead and a waiter waits: the waiter reconnects and gets the lock when the lease runs out
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$aof = ['--appendonly', 'yes', '--appendfsync', 'always'];
$srv = rl_start_redis($aof);
$dsn = $srv['dsn'];
$key = rl_key('restart');
try {
    $holder = pcntl_fork();
    if ($holder === 0) {
        // Patient timeouts (5 s) for the take, which is not what this is about: its
        // server fsyncs every write, and under make test-stress's hog beside two other
        // tests it once answered later than the default 0.5 s.
        $l = new Lock($key, 0, 1.5, ['dsn' => $dsn] + RL_PATIENT);
        $l->addLock() or exit(1);
        file_put_contents("{$srv['dir']}/taken", sprintf('%.6f', microtime(true)));
        sleep(30);
        exit(0);
    }
    // A holder that failed ends the test here, not at run-tests.php's 300 s timeout.
    $deadline = microtime(true) + 10;
    while (!is_file("{$srv['dir']}/taken") && microtime(true) < $deadline) { usleep(5000); }
    posix_kill($holder, SIGKILL);
    pcntl_waitpid($holder, $st);
    $waiter = pcntl_fork();
    if ($waiter === 0) {
        $l = new Lock($key, 5, 5, ['dsn' => $dsn, 'retry_delay' => 0.01, 'retry_delay_max' => 0.05]);
        $t = $l->addLock();
        file_put_contents("{$srv['dir']}/got", sprintf('%.6f', microtime(true)));
        exit($t === false ? 1 : 0);
    }
    usleep(300000);                               // the waiter is asleep on its subscriber
    posix_kill($srv['pid'], SIGKILL);
    // Gone once its port refuses (a zombie can linger far longer than its sockets).
    while ($c = @stream_socket_client("tcp://127.0.0.1:{$srv['port']}", $e, $m, 0.1)) { fclose($c); usleep(5000); }
    usleep(200000);                               // down for a while
    $srv = rl_start_redis($aof, $srv['port']);
    pcntl_waitpid($waiter, $st);
    $expiry = (float) file_get_contents("{$srv['dir']}/taken") + 1.5;
    $late = (float) file_get_contents("{$srv['dir']}/got") - $expiry;
    printf("waiter exit %d, acquired %s\n", pcntl_wexitstatus($st),
        $late > -0.05 && $late < 0.25 ? 'when the lease ran out' : sprintf('%+.3f s from the expiry', $late));
} finally {
    rl_stop_redis($srv);
    exec('rm -rf ' . escapeshellarg($srv['dir']));
}
?>
--EXPECT--
waiter exit 0, acquired when the lease ran out
