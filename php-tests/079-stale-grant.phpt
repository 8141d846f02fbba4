--TEST--
No stale hold reaches PHP: a waiter paused (SIGSTOP) while the lock was handed to it, until its lease ran out and another process took the lock, does not return that grant; it waits for the other holder's release and gets the lock after it, with a higher fencing number (stats: stale). A try whose reply comes after the lease ended (a link slower than the lease) is no acquisition either: false, with or without time to wait
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('stale');
$opts = ['dsn' => $dsn, 'fencing' => true];

// 1. A grant read late.
$a = new Lock($key, 0, 10, $opts);
$a->addLock() or die("holder failed\n");
$a->getFencingToken();                      // this process, and its forks, issue numbers at once
$pid = pcntl_fork();
if ($pid === 0) {
    $w = new Lock($key, 6, 0.5, $opts);
    $t = $w->addLock();
    $at = microtime(true);
    // Whether the lock is this waiter's when addLock() returns, and with what number.
    $held = $t !== false && rl_cmd($dsn, 'GET', $key) === $t;
    rl_cmd($dsn, 'SET', "$key:w", json_encode(['at' => $at, 'held' => $held, 'fence' => $w->getFencingToken(),
        'stale' => redis_lock_stats()['stale']]));
    if ($t !== false) { $w->releaseLock(); }
    exit(0);
}
usleep(300000);                             // the waiter is queued by now
posix_kill($pid, SIGSTOP);
$a->releaseLock();                          // handed to the paused waiter, for 0.5 s
usleep(900000);                             // its lease runs out
$b = new Lock($key, 0, 10, $opts);
$tb = $b->addLock();
echo "another process takes the lock after the lease: ", var_export(is_string($tb), true), "\n";
$fb = $b->getFencingToken();
posix_kill($pid, SIGCONT);
usleep(600000);
echo "the waiter has not returned while the other holds it: ", var_export(rl_cmd($dsn, 'EXISTS', "$key:w") === 0, true), "\n";
$released = microtime(true);
$b->releaseLock();
pcntl_waitpid($pid, $st);
$w = json_decode((string) rl_cmd($dsn, 'GET', "$key:w"), true);
echo "the waiter got it after the release: ", var_export($w['held'] && $w['at'] >= $released, true), "\n";
echo "its number is above the other holder's: ", var_export($w['fence'] > $fb, true), "\n";
echo "counted as stale: ", var_export($w['stale'] >= 1, true), "\n";

// 2. Replies that come after the lease: 300 ms each way is longer than a 0.2 s lease.
$port = (int) parse_url($dsn, PHP_URL_PORT);
$p = rl_fault_proxy($port, 300);
try {
    $o = ['dsn' => $p['dsn'], 'read_timeout' => 2, 'connect_timeout' => 3];
    $before = redis_lock_stats()['stale'];
    $l = new Lock($key, 0, 0.2, $o);
    echo "one try: ", var_export($l->addLock(), true), "\n";
    $l = new Lock($key, 1.5, 0.2, $o);
    echo "with a wait: ", var_export($l->addLock(), true), "\n";
    echo "stale counted: ", var_export(redis_lock_stats()['stale'] - $before >= 2, true), "\n";
} finally {
    rl_stop_proxy($p);
}
usleep(250000);
echo "nothing left behind: ", var_export(rl_cmd($dsn, 'EXISTS', $key) === 0, true), "\n";
?>
--EXPECT--
another process takes the lock after the lease: true
the waiter has not returned while the other holds it: true
the waiter got it after the release: true
its number is above the other holder's: true
counted as stale: true
one try: false
with a wait: false
stale counted: true
nothing left behind: true
