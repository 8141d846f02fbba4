--TEST--
Fair mode: staggered waiters get the lock first come, first served; a waiter killed in the queue is skipped at once; tryLock() does not jump the queue
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('fair');
$opts = ['dsn' => $dsn, 'fair' => true];
$holder = new Lock($key, 0, 10, $opts);
$holder->addLock() or die("holder failed\n");
$pids = [];
for ($i = 0; $i < 6; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $l = new Lock($key, 10, 10, $opts);
        $t = $l->addLock();
        rl_cmd($dsn, 'RPUSH', "$key:order", (string) $i);
        usleep(20000);
        $l->releaseLock($t);
        exit($t === false ? 1 : 0);
    }
    $pids[$i] = $pid;
    // Staggered arrivals; each is in the queue before the next comes.
    $deadline = microtime(true) + 2;
    while (rl_cmd($dsn, 'LLEN', "{{$key}}:queue") < $i + 1 && microtime(true) < $deadline) { usleep(2000); }
}
posix_kill($pids[2], SIGKILL);                        // dies while queued
pcntl_waitpid($pids[2], $st);
unset($pids[2]);
var_dump((new Lock($key, 0, 10, $opts))->tryLock());  // held, and others wait: no
$t0 = microtime(true);
$holder->releaseLock();
foreach ($pids as $pid) { pcntl_waitpid($pid, $st); if (pcntl_wexitstatus($st) !== 0) { echo "a waiter failed\n"; } }
$took = microtime(true) - $t0;
echo implode(',', rl_cmd($dsn, 'LRANGE', "$key:order", '0', '-1')), "\n";
// Five holds of 20 ms: the dead waiter must not cost its 10 s lease, nor a poll.
echo $took < 1.0 ? "no stall\n" : sprintf("stalled: %.3f s\n", $took);
?>
--EXPECT--
bool(false)
0,1,3,4,5
no stall
