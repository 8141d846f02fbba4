--TEST--
A grant is only ever read by the wait it was meant for, and an entry of a wait that has ended is never handed the lock: on a subscriber of its own (?protocol=resp3), each wait listens on a channel of its own and gives it up when it ends, so a grant published on an earlier wait's channel (left over, or forged) is not read by a later wait of the same token for another key, and a late entry of an ended wait is passed over; on the command connection (RESP3), where messages and replies come in order, a wait that ends in doubt (refused mid-wait, its entry still queued) retires its channel, so a release passes that entry over
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$direct = ['dsn' => $dsn];
$file = sys_get_temp_dir() . '/rl-090-' . getmypid();
/** A child reads, after $ms, the whole first entry queued for $key. */
$peek = function (string $key, int $ms) use ($dsn, $file): int {
    $pid = pcntl_fork();
    if ($pid === 0) {
        usleep($ms * 1000);
        file_put_contents($file, (string) rl_cmd($dsn, 'LINDEX', "{{$key}}:queue", '0'));
        exit(0);
    }
    return $pid;
};
$server_ms = fn() => intdiv(rl_server_us($dsn), 1000);

try {
    echo "a subscriber of its own (?protocol=resp3):\n";
    $o = ['dsn' => "$dsn?protocol=resp3"];

    // 1. A wait for key A with the token "job" gives up; its channel is read meanwhile.
    $a = rl_key('chan:a');
    $x = new Lock($a, 0, 10, $direct);
    $x->addLock();
    $pid = $peek($a, 150);
    $gave_up = (new Lock($a, 0.4, 10, $o))->addLock('job');
    pcntl_waitpid($pid, $st);
    [, $channel] = rl_queue_entry(file_get_contents($file));
    echo "  the first wait gives up: ", var_export($gave_up, true), ", listeners left on its channel: ", rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $channel)[1], "\n";

    // 2. A wait for key B, held by another, with the same token: a grant for "job" comes
    // on the first wait's channel (as a release made just before the first wait's end
    // would have sent it). It is not this wait's.
    $b = rl_key('chan:b');
    $y = new Lock($b, 0, 10, $direct);
    $y->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) {
        usleep(150000);
        rl_cmd($dsn, 'PUBLISH', $channel, 'g@' . intdiv(rl_server_us($dsn), 1000) . ':job');
        file_put_contents($file, (string) rl_cmd($dsn, 'LINDEX', "{{$b}}:queue", '0'));
        exit(0);
    }
    $second = (new Lock($b, 0.5, 10, $o))->addLock('job');
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
    $pid = $peek($c, 150);
    $release = pcntl_fork();
    if ($release === 0) {
        // The holder releases by token from another process, handing the lock over.
        usleep(300000);
        (new Lock($c, 0, 10, $direct))->releaseLock($zt);
        exit(0);
    }
    $w = new Lock($c, 2, 10, $o);
    $t = $w->addLock('late');
    pcntl_waitpid($pid, $st);
    pcntl_waitpid($release, $st);
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
    $pid = $peek($d, 150);
    $gave_up = (new Lock($d, 0.4, 10, $o))->addLock();
    pcntl_waitpid($pid, $st);
    [, $channel] = rl_queue_entry(file_get_contents($file));
    echo "  a wait that gives up: ", var_export($gave_up, true), ", its connection still listens on its channel: ", rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $channel)[1], "\n";
    $pid = $peek($d, 150);
    $revoke = pcntl_fork();
    if ($revoke === 0) {
        usleep(300000);
        rl_cmd($dsn, 'ACL', 'SETUSER', 'waiter', '-evalsha', '-eval');
        exit(0);
    }
    try {
        $r = (new Lock($d, 3, 10, $o))->addLock();
        echo "  the refused wait: no exception (", var_export($r, true), ")\n";
    } catch (LockException $e) {
        echo "  the refused wait: ", get_class($e), ", NOPERM: ", stripos($e->getMessage(), 'noperm') !== false ? 'yes' : $e->getMessage(), "\n";
    }
    pcntl_waitpid($pid, $st);
    pcntl_waitpid($revoke, $st);
    [, $channel] = rl_queue_entry(file_get_contents($file));
    echo "  its entry still queued: ", rl_cmd($dsn, 'LLEN', "{{$d}}:queue") ? 'yes' : 'no',
        ", listeners on its channel: ", rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $channel)[1], "\n";
    $holder->releaseLock();
    echo "  after the release, the lock: ", var_export(rl_cmd($dsn, 'GET', $d), true), ", the queue: ", rl_cmd($dsn, 'LLEN', "{{$d}}:queue"), "\n";
} finally {
    rl_stop_redis($srv);
    @unlink($file);
}
?>
--EXPECT--
a subscriber of its own (?protocol=resp3):
  the first wait gives up: false, listeners left on its channel: 0
  the second wait, for B: false, on a channel of its own: yes, B still the other's: true
  the wait for C is handed the lock: 'late'
  after a release, the late entry: passed over, the lock: NULL
the command connection (RESP3):
  a wait that gives up: false, its connection still listens on its channel: 1
  the refused wait: LockException, NOPERM: yes
  its entry still queued: yes, listeners on its channel: 0
  after the release, the lock: NULL, the queue: 0
