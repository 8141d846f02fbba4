--TEST--
A holder killed with SIGKILL never releases: the waiter still gets the lock when its lease runs out, not a polling interval later
--CONFLICTS--
all # a wake-up checked to 50 ms of the expiry: alone
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('killed');
$holder = pcntl_fork();
if ($holder === 0) {
    $l = new Lock($key, 0, 1.0, ['dsn' => $dsn]);
    $l->addLock() or exit(1);
    rl_cmd($dsn, 'SET', "$key:taken", sprintf('%.6f', microtime(true)));
    sleep(30);
    exit(0);
}
while (!rl_cmd($dsn, 'EXISTS', "$key:taken")) { usleep(5000); }
$waiter = pcntl_fork();
if ($waiter === 0) {
    // Polling every 5 s: only the wake-up at the holder's expiry can be on time.
    $l = new Lock($key, 4, 5, ['dsn' => $dsn, 'retry_delay' => 5.0, 'retry_delay_max' => 5.0]);
    $t = $l->addLock();
    rl_cmd($dsn, 'SET', "$key:got", sprintf('%.6f', microtime(true)));
    exit($t === false ? 1 : 0);
}
usleep(200000);
posix_kill($holder, SIGKILL);
pcntl_waitpid($holder, $st);
pcntl_waitpid($waiter, $st);
$expiry = (float) rl_cmd($dsn, 'GET', "$key:taken") + 1.0;
$late = (float) rl_cmd($dsn, 'GET', "$key:got") - $expiry;
printf("waiter exit %d, acquired %s\n", pcntl_wexitstatus($st),
    $late > -0.05 && $late < 0.15 ? 'when the lease ran out' : sprintf('%+.3f s from the expiry', $late));
?>
--EXPECT--
waiter exit 0, acquired when the lease ran out
