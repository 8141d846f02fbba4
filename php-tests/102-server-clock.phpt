--TEST--
A server's clock jumps (tools/test/clockshift/, the shim the nemesis's clock faults use): a redis-server under the shim sees TIME and its keys' expiry move with the offset while it runs; a forward jump past a lease lets a second holder in while the first one's bound lasts (the documented assumption), the first one learns it at its release, fencing numbers go on increasing through a jump forward and one back, and a hold handed over across a forward jump promises no more than its lease
--FILE--
<?php
require __DIR__ . '/_helper.inc';
putenv('REDIS_LOCK_TEST_CLOCKSHIFT=' . rl_clockshift());
$srv = rl_start_redis();
putenv('REDIS_LOCK_TEST_CLOCKSHIFT');
$dsn = $srv['dsn'];
// The server's clock less the host's, in seconds.
$skew = fn() => rl_server_us($dsn) / 1e6 - microtime(true);
$jump = function (float $to) use ($srv) {
    rl_clock_set($srv, $to);
    usleep(20000);  // read again within about 1 ms
};
$near = fn(float $got, float $want, float $by) => abs($got - $want) <= $by ? 'yes' : sprintf('no: %.3f, not %.3f', $got, $want);
try {
    echo "under the shim, no offset yet: TIME is the host's: ", $near($skew(), 0, 0.5), "\n";
    rl_cmd($dsn, 'SET', 'c:a', 'v', 'PX', '10000');
    rl_cmd($dsn, 'SET', 'c:b', 'v', 'PX', '30000');

    $jump(20);
    echo "+20 s: TIME moved: ", $near($skew(), 20, 0.5), "\n";
    echo "  a key with 10 s left is gone at once: ", var_export(rl_cmd($dsn, 'GET', 'c:a'), true), "\n";
    echo "  one with 30 s left has about 10: ", $near(rl_cmd($dsn, 'PTTL', 'c:b') / 1000, 10, 0.5), "\n";

    $jump(-20);
    echo "-20 s (40 back): TIME moved: ", $near($skew(), -20, 0.5), "\n";
    echo "  the key with 10 s left has about 50: ", $near(rl_cmd($dsn, 'PTTL', 'c:b') / 1000, 50, 0.5), "\n";
    $jump(0);
    rl_cmd($dsn, 'DEL', 'c:b');

    // The lock across a forward jump past its lease: the key expires on the server's
    // clock, while the holder's bound is kept on its own.
    $o = ['dsn' => $dsn, 'fencing' => true];
    $first = new Lock('c:lock', 0, 30, $o);
    $t1 = $first->addLock();
    $f1 = $first->getFencingToken();
    $jump(40);
    $second = new Lock('c:lock', 0, 30, $o);
    $t2 = $second->addLock();
    echo "+40 s: a second holder gets it: ", $t2 !== false ? 'yes' : 'no', "; the first one's bound still lasts: ",
        $first->getRemainingLifetime() > 25 ? 'yes' : 'no', "\n";
    $f2 = $second->getFencingToken();
    echo "  its fencing number is higher, and past the server's clock before the jump: ",
        rl_is_fence($f2, $f1) && $f2 > $f1 + 39_000_000 ? 'yes' : "no: $f1, then $f2", "\n";
    echo "  the first one's release: ", var_export($first->releaseLock($t1), true), "\n";
    echo "  the second one's release: ", var_export($second->releaseLock($t2), true), "\n";

    // Back 30 s: the counter is still there, so the numbers go on increasing.
    $jump(10);
    $third = new Lock('c:lock', 0, 30, $o);
    $t3 = $third->addLock();
    $f3 = $third->getFencingToken();
    echo "-30 s: taken again: ", $t3 !== false ? 'yes' : 'no', "; its fencing number is higher still: ", rl_is_fence($f3, $f2) ? 'yes' : "no: $f2, then $f3", "\n";
    echo "  its key lasts the lease on the server's clock: ", $near(rl_cmd($dsn, 'PTTL', 'c:lock') / 1000, 30, 0.5), "\n";
    echo "  released: ", var_export($third->releaseLock($t3), true), "\n";

    // A hand-over across a forward jump: the waiter queued before it, and the grant
    // is stamped on the server's clock after it. Its bound counts from when the
    // grant was heard, at most: before, it promised the jump on top of the lease.
    $holder = new Lock('c:handover', 0, 5, $o + ['fair' => true]);
    $th = $holder->addLock();
    $out = tempnam(sys_get_temp_dir(), 'rl-097-');
    $pid = pcntl_fork();
    if ($pid === 0) {
        $waiter = new Lock('c:handover', 4, 5, $o + ['fair' => true]);
        $tw = $waiter->addLock();
        file_put_contents($out, json_encode([$tw !== false, $waiter->getRemainingLifetime()]));
        if ($tw !== false) { $waiter->releaseLock($tw); }
        exit(0);
    }
    // The jump comes once the waiter is queued (a busy machine can take longer than
    // a fixed sleep to get it there).
    $until = microtime(true) + 3;
    while ($holder->inspect()['waiters'] < 1 && microtime(true) < $until) { usleep(10000); }
    $jump(13);
    $holder->releaseLock($th);
    pcntl_waitpid($pid, $status);
    [$got, $left] = json_decode((string) file_get_contents($out), true) ?? [false, null];
    unlink($out);
    echo "+3 s between a waiter's queueing and its grant: handed over: ", $got ? 'yes' : 'no',
        "; it promises no more than the lease: ", $left !== null && $left <= 5.0 ? 'yes' : "no: $left s of a 5 s lease", "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
under the shim, no offset yet: TIME is the host's: yes
+20 s: TIME moved: yes
  a key with 10 s left is gone at once: NULL
  one with 30 s left has about 10: yes
-20 s (40 back): TIME moved: yes
  the key with 10 s left has about 50: yes
+40 s: a second holder gets it: yes; the first one's bound still lasts: yes
  its fencing number is higher, and past the server's clock before the jump: yes
  the first one's release: false
  the second one's release: true
-30 s: taken again: yes; its fencing number is higher still: yes
  its key lasts the lease on the server's clock: yes
  released: true
+3 s between a waiter's queueing and its grant: handed over: yes; it promises no more than the lease: yes
