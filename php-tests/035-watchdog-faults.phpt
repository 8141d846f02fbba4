--TEST--
Watchdog under faults: a Redis stall shorter than the lease is ridden out by retried renewals; one longer than the lease marks the lock lost, which isOwned() and releaseLock() then report without asking the stalled server
--CONFLICTS--
all # an answer without a round trip checked to 50 ms: alone
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
try {
    // A stall (SIGSTOP) shorter than the lease.
    $key = rl_key('blip');
    $l = new Lock($key, 0, 0.6, ['dsn' => $dsn, 'auto_renew' => true, 'read_timeout' => 0.1, 'connect_timeout' => 0.1]);
    $l->addLock() or die("not acquired\n");
    usleep(250000);
    posix_kill($srv['pid'], SIGSTOP);
    usleep(250000);
    posix_kill($srv['pid'], SIGCONT);
    usleep(1000000);                           // well past the lease
    echo "after a short stall: owned ", var_export($l->isOwned(), true), ", released ", var_export($l->releaseLock(), true), "\n";

    // A stall longer than the lease.
    $key = rl_key('stall');
    $l = new Lock($key, 0, 0.3, ['dsn' => $dsn, 'auto_renew' => true, 'read_timeout' => 0.1, 'connect_timeout' => 0.1]);
    $l->addLock() or die("not acquired\n");
    posix_kill($srv['pid'], SIGSTOP);
    usleep(700000);                            // renewals fail for more than a lease
    $t0 = microtime(true);
    $owned = $l->isOwned();                    // the server is still stopped: no round trip may be needed
    $released = $l->releaseLock();
    $took = microtime(true) - $t0;
    posix_kill($srv['pid'], SIGCONT);
    echo "during a long stall: owned ", var_export($owned, true), ", released ", var_export($released, true),
        ", answered at once: ", var_export($took < 0.05, true), "\n";
    usleep(50000);
    echo "the key is gone once Redis runs again: ", var_export(rl_cmd($dsn, 'EXISTS', $key) === 0, true), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
after a short stall: owned true, released true
during a long stall: owned false, released false, answered at once: true
the key is gone once Redis runs again: true
