--TEST--
Durable holds under the watchdog: a hold renewed by the watchdog with a waiter queued behind it (on a server with its own compare-and-delete, a hold taken alone) is renewed and acknowledged every round, and its release is true, with nothing lost; a durable and a durable_aof hold renewed in one round are each judged by their own wait (WAIT, WAITAOF), neither lost; a server that lost its scripts answers a renewal NOSCRIPT, which goes again by its text with the wait asked again after it, acknowledged
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$aof = ['--appendonly', 'yes', '--appendfsync', 'always'];
$m = rl_start_redis($aof);
$r = rl_start_redis(array_merge($aof, ['--replicaof', '127.0.0.1', (string) $m['port']]));
try {
    $up = microtime(true) + 10;
    while (!str_contains((string) rl_poll($r['dsn'], 'INFO', 'replication'), 'master_link_status:up') && microtime(true) < $up) { usleep(20000); }
    // A healthy replica's acknowledgement gets 2 s, replies 5 s (docs/testing.md); a
    // 1.5 s lease is renewed every 0.5 s, so 1 s of room for a busy machine.
    $o = ['dsn' => $m['dsn'], 'durable' => 1, 'durable_timeout' => 2.0, 'auto_renew' => true] + RL_PATIENT;
    if (rl_cad($m['dsn']) === null) {
        rl_untested('a durable hold taken alone, renewed by SET IFEQ under the watchdog, with a waiter queued (the scripts ran instead)', 'this server has no compare-and-delete');
    }

    // A waiter queues during a 3 s hold of a 1.5 s lease.
    $key = rl_key('durable-wd');
    $a = new Lock($key, 0, 1.5, $o);
    $s0 = redis_lock_stats();
    $t = $a->addLock() or die("not acquired\n");
    $pid = pcntl_fork();
    if ($pid === 0) {
        $got = (new Lock($key, 10, 1.5, $o))->addLock();
        exit($got === false ? 1 : 0);
    }
    $until = microtime(true) + 5;
    while ($a->inspect()['waiters'] < 1 && microtime(true) < $until) { usleep(10000); }
    usleep(3000000);
    $owned = $a->isOwned();
    $released = $a->releaseLock();
    pcntl_waitpid($pid, $st);
    $s1 = redis_lock_stats();
    printf("a waiter queued: still owned %s, released %s, lost %d, renewals acknowledged %s, the waiter got it %s\n",
        var_export($owned, true), var_export($released, true), $s1['lost'] - $s0['lost'],
        var_export($s1['durable_acks'] - $s0['durable_acks'] >= 1 + 4, true), var_export(pcntl_wexitstatus($st) === 0, true));

    // The server loses its scripts (SCRIPT FLUSH) under a durable hold the watchdog
    // renews by script (owner_info: never taken alone): each round's renewal answers
    // NOSCRIPT, goes again by its text after the round's WAIT, and the WAIT is asked
    // again after it, so the renewal is acknowledged, never counted short.
    $k = new Lock(rl_key('durable-wd-flush'), 0, 1.5, ['owner_info' => true] + $o);
    $k->addLock() or die("not acquired\n");
    usleep(700000);
    $s0 = redis_lock_stats();
    rl_cmd($m['dsn'], 'SCRIPT', 'FLUSH');
    usleep(1100000);
    $s1 = redis_lock_stats();
    printf("after SCRIPT FLUSH: owned %s, not acknowledged %d, acknowledged again %s, released %s\n",
        var_export($k->isOwned(), true), $s1['not_durable'] - $s0['not_durable'],
        var_export($s1['durable_acks'] - $s0['durable_acks'] >= 2, true), var_export($k->releaseLock(), true));

    // durable and durable_aof in one watchdog round (one process, one server). Their
    // renewals fall due a moment apart, so the process is stopped for 0.8 s (shorter
    // than their 1.5 s lease, longer than the 0.5 s between renewals): both are due
    // when it goes on, and are renewed in one round.
    [$name, $major, $minor] = rl_server_version($m['dsn']);
    if ([$major, $minor] >= [7, 2] || $name === 'valkey') {
        $out = tempnam(sys_get_temp_dir(), 'rl-107');
        $pid = pcntl_fork();
        if ($pid === 0) {
            $p = new Lock(rl_key('durable-wd-plain'), 0, 1.5, $o);
            $f = new Lock(rl_key('durable-wd-aof'), 0, 1.5, ['durable' => 0, 'durable_aof' => true] + $o);
            $s0 = redis_lock_stats();
            $p->addLock() or exit(1);
            $f->addLock() or exit(1);
            file_put_contents($out, 'held');
            usleep(3000000);
            $s1 = redis_lock_stats();
            file_put_contents($out, sprintf("owned %s, released %s, lost %d, not acknowledged %d",
                var_export($p->isOwned() && $f->isOwned(), true), var_export($p->releaseLock() && $f->releaseLock(), true),
                $s1['lost'] - $s0['lost'], $s1['not_durable'] - $s0['not_durable']));
            exit(0);
        }
        $until = microtime(true) + 10;
        while (file_get_contents($out) !== 'held' && microtime(true) < $until) { usleep(10000); }
        usleep(200000);
        posix_kill($pid, SIGSTOP);
        usleep(800000);
        posix_kill($pid, SIGCONT);
        pcntl_waitpid($pid, $st);
        echo "durable and durable_aof together: ", file_get_contents($out), "\n";
        @unlink($out);
    } else {
        rl_untested('a durable and a durable_aof hold renewed in one watchdog round', "WAITAOF is Redis 7.2's, this is $name $major.$minor");
        echo "durable and durable_aof together: untested here (no WAITAOF)\n";
    }
} finally {
    posix_kill($r['pid'], SIGCONT);
    rl_stop_redis($r);
    rl_stop_redis($m);
}
?>
--EXPECTREGEX--
a waiter queued: still owned true, released true, lost 0, renewals acknowledged true, the waiter got it true
after SCRIPT FLUSH: owned true, not acknowledged 0, acknowledged again true, released true
durable and durable_aof together: (owned true, released true, lost 0, not acknowledged 0|untested here \(no WAITAOF\))
