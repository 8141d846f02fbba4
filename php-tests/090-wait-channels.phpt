--TEST--
A grant is only ever read by the wait it was meant for, and an entry of a wait that has ended is never handed the lock: on a subscriber of its own (a server or proxy without RESP3: the fault proxy's nohello), each wait listens on a channel of its own and gives it up when it ends, so a grant published on an earlier wait's channel (left over, or forged) is not read by a later wait of the same token for another key, and a late entry of an ended wait is passed over; on the command connection (RESP3), where messages and replies come in order, a wait that ends in doubt (refused mid-wait, its entry still queued) retires its channel, so a release passes that entry over. A dsn with ?protocol=resp3 waits on its command connection too (one connection in all), and a password in it is never in an error message
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$direct = ['dsn' => $dsn];
$file = sys_get_temp_dir() . '/rl-090-' . getmypid();
/**
 * A child that waits (up to 5 s) for an entry queued for $key (the first one other than
 * $old), writes it whole to $file, then runs $then: events in order, not sleeps, so a
 * busy machine changes nothing.
 */
$when_queued = function (string $key, ?callable $then = null, ?string $old = null) use ($dsn, $file): int {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $entry = null;
        for ($i = 0; $i < 2500 && !$entry; $i++) {
            $entry = array_values(array_diff(rl_cmd($dsn, 'LRANGE', "{{$key}}:queue", '0', '-1') ?: [], [$old]))[0] ?? null;
            if (!$entry) { usleep(2000); }
        }
        file_put_contents($file, (string) $entry);
        if ($then) { $then(); }
        exit(0);
    }
    return $pid;
};
$server_ms = fn() => intdiv(rl_server_us($dsn), 1000);

$proxy = rl_fault_proxy($srv['port']);
try {
    echo "a subscriber of its own (no RESP3):\n";
    // The proxy answers HELLO 3 with an error, as a server without RESP3 does.
    rl_proxy($proxy, 'nohello');
    $o = ['dsn' => $proxy['dsn']];

    // 1. A wait for key A with the token "job" gives up; its channel is read meanwhile.
    $a = rl_key('chan:a');
    $x = new Lock($a, 0, 10, $direct);
    $x->addLock();
    $pid = $when_queued($a);
    $gave_up = (new Lock($a, 1, 10, $o))->addLock('job');
    pcntl_waitpid($pid, $st);
    [, $channel] = rl_queue_entry(file_get_contents($file));
    echo "  the first wait gives up: ", var_export($gave_up, true), ", listeners left on its channel: ", rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $channel)[1], "\n";

    // 2. A wait for key B, held by another, with the same token: a grant for "job" comes
    // on the first wait's channel (as a release made just before the first wait's end
    // would have sent it). It is not this wait's.
    $b = rl_key('chan:b');
    $y = new Lock($b, 0, 10, $direct);
    $y->addLock();
    $pid = $when_queued($b, fn() => rl_cmd($dsn, 'PUBLISH', $channel, 'g@' . intdiv(rl_server_us($dsn), 1000) . ':job'));
    $second = (new Lock($b, 1, 10, $o))->addLock('job');
    pcntl_waitpid($pid, $st);
    [, $channel2] = rl_queue_entry(file_get_contents($file));
    echo "  the second wait, for B: ", var_export($second, true), ", on a channel of its own: ", $channel2 !== $channel ? 'yes' : 'NO',
        ", B still the other's: ", var_export($y->isOwned(), true), "\n";
    $x->releaseLock();
    $y->releaseLock();

    // 3. A wait for C is handed the lock; its entry is read meanwhile. Then that entry
    // comes again, as a queueing try held up on the way would queue it after its
    // retry: the next release finds nobody listening for it, and passes it over.
    $c = rl_key('chan:c');
    $zt = (new Lock($c, 0, 10, $direct + ['auto_release' => false]))->addLock();
    // The holder releases by token from another process once the wait queued, handing
    // the lock over.
    $pid = $when_queued($c, fn() => (new Lock($c, 0, 10, $direct))->releaseLock($zt));
    $w = new Lock($c, 5, 10, $o);
    $t = $w->addLock('late');
    pcntl_waitpid($pid, $st);
    $entry = file_get_contents($file);
    echo "  the wait for C is handed the lock: ", var_export($t, true), "\n";
    $w->releaseLock();
    [, , $until] = rl_queue_entry($entry);
    rl_cmd($dsn, 'RPUSH', "{{$c}}:queue", ($server_ms() + 5000) . substr($entry, strlen((string) $until)));
    $v = new Lock($c, 0, 10, $direct);
    $v->addLock();
    $v->releaseLock();
    echo "  after a release, the late entry: ", rl_cmd($dsn, 'LLEN', "{{$c}}:queue") ? 'still queued' : 'passed over',
        ", the lock: ", var_export(rl_cmd($dsn, 'GET', $c), true), "\n";
    rl_cmd($dsn, 'DEL', $c);
    // One command connection and one subscriber, kept across the three waits.
    preg_match('/^conns (\d+) accepted (\d+)/', rl_proxy($proxy, 'stats'), $m);
    echo "  connections through the proxy: $m[1] open, $m[2] made\n";

    echo "the command connection (RESP3):\n";
    // 4. A wait that ends normally keeps its connection's channel (one subscription in
    // the connection's life); one refused mid-wait (its user lost EVALSHA), its entry
    // still queued, retires the channel: the release that follows passes the entry over
    // instead of handing the lock to a wait that is over.
    rl_cmd($dsn, 'ACL', 'SETUSER', 'waiter', 'on', '>pw', '~*', '&*', '+@all');
    $o = ['dsn' => str_replace('redis://', 'redis://waiter:pw@', $dsn)];
    $d = rl_key('chan:d');
    $holder = new Lock($d, 0, 10, $direct);
    $holder->addLock();
    $pid = $when_queued($d);
    $gave_up = (new Lock($d, 1, 10, $o))->addLock();
    pcntl_waitpid($pid, $st);
    [, $channel] = rl_queue_entry(file_get_contents($file));
    echo "  a wait that gives up: ", var_export($gave_up, true), ", its connection still listens on its channel: ", rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $channel)[1], "\n";
    $pid = $when_queued($d, fn() => rl_cmd($dsn, 'ACL', 'SETUSER', 'waiter', '-evalsha', '-eval'), file_get_contents($file));
    try {
        $r = (new Lock($d, 3, 10, $o))->addLock();
        echo "  the refused wait: no exception (", var_export($r, true), ")\n";
    } catch (LockException $e) {
        echo "  the refused wait: ", get_class($e), ", NOPERM: ", stripos($e->getMessage(), 'noperm') !== false ? 'yes' : $e->getMessage(), "\n";
    }
    pcntl_waitpid($pid, $st);
    [, $channel] = rl_queue_entry(file_get_contents($file));
    echo "  its entry still queued: ", rl_cmd($dsn, 'LLEN', "{{$d}}:queue") ? 'yes' : 'no',
        ", listeners on its channel: ", rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $channel)[1], "\n";
    $holder->releaseLock();
    echo "  after the release, the lock: ", var_export(rl_cmd($dsn, 'GET', $d), true), ", the queue: ", rl_cmd($dsn, 'LLEN', "{{$d}}:queue"), "\n";

    echo "a dsn with ?protocol=resp3:\n";
    // 5. RESP3 from the start: a wait listens on the command connection, as any RESP3
    // one does. A child that waits, woken by the release, made one connection in all.
    $e = rl_key('chan:e');
    $holder = new Lock($e, 0, 10, $direct);
    $holder->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) {
        $got = (new Lock($e, 5, 10, ['dsn' => "$dsn?protocol=resp3"]))->addLock();
        file_put_contents($file, (is_string($got) ? 'woken' : 'not woken') . ', connects ' . redis_lock_stats()['connects']);
        exit(0);
    }
    for ($i = 0; $i < 500 && $holder->inspect()['waiters'] === 0; $i++) { usleep(5000); }
    $holder->releaseLock();
    pcntl_waitpid($pid, $st);
    echo "  a wait: ", file_get_contents($file), "\n";

    // 6. Its password is never in a message: refused (WRONGPASS), nor from a server
    // that knows no HELLO (renamed away here, as on Redis 5), whose error repeats the
    // command's arguments, the password among them.
    try {
        (new Lock($e, 0, 5, ['dsn' => str_replace('redis://', 'redis://waiter:wrong-090-pw@', $dsn) . '?protocol=resp3']))->tryLock();
        echo "  a wrong password: no exception\n";
    } catch (LockConnectionException $x) {
        echo "  a wrong password: ", get_class($x), ", the password in its message: ", str_contains($x->getMessage(), 'wrong-090-pw') ? 'YES' : 'no', "\n";
    }
    $old = rl_start_redis(['--requirepass', 'pw-090-secret', '--rename-command', 'HELLO', '']);
    try {
        (new Lock($e, 0, 5, ['dsn' => "redis://:pw-090-secret@127.0.0.1:{$old['port']}?protocol=resp3"]))->tryLock();
        echo "  a server without HELLO: no exception\n";
    } catch (LockConnectionException $x) {
        echo "  a server without HELLO: ", get_class($x), ", says so: ", str_contains($x->getMessage(), 'HELLO 3') ? 'yes' : $x->getMessage(),
            ", the password in its message: ", str_contains($x->getMessage(), 'pw-090-secret') ? 'YES' : 'no', "\n";
    } finally {
        rl_stop_redis($old);
    }
} finally {
    rl_stop_proxy($proxy);
    rl_stop_redis($srv);
    @unlink($file);
}
?>
--EXPECT--
a subscriber of its own (no RESP3):
  the first wait gives up: false, listeners left on its channel: 0
  the second wait, for B: false, on a channel of its own: yes, B still the other's: true
  the wait for C is handed the lock: 'late'
  after a release, the late entry: passed over, the lock: NULL
  connections through the proxy: 2 open, 2 made
the command connection (RESP3):
  a wait that gives up: false, its connection still listens on its channel: 1
  the refused wait: LockException, NOPERM: yes
  its entry still queued: yes, listeners on its channel: 0
  after the release, the lock: NULL, the queue: 0
a dsn with ?protocol=resp3:
  a wait: woken, connects 1
  a wrong password: LockConnectionException, the password in its message: no
  a server without HELLO: LockConnectionException, says so: yes, the password in its message: no
