--TEST--
Each wait listens on a channel of its own, given up when it ends: a grant published on an earlier wait's channel (left over, or forged) is never read by a later wait of the same token for another key, and an entry of a wait that has ended (a try that arrived late, after its retry) is passed over instead of being handed the lock that nobody uses; on the command connection (RESP3) and on a subscriber of its own (?protocol=resp3)
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$direct = ['dsn' => $dsn];
$file = sys_get_temp_dir() . '/rl-090-' . getmypid();
/** The channel and the whole entry of the first waiter queued for $key, read by a child after $ms. */
$peek = function (string $key, int $ms) use ($dsn, $file): int {
    $pid = pcntl_fork();
    if ($pid === 0) {
        usleep($ms * 1000);
        $entry = (string) rl_cmd($dsn, 'LINDEX', "{{$key}}:queue", '0');
        file_put_contents($file, $entry);
        exit(0);
    }
    return $pid;
};
$server_ms = fn() => intdiv(rl_server_us($dsn), 1000);

foreach (['RESP3, the command connection' => $dsn, 'a subscriber of its own' => "$dsn?protocol=resp3"] as $how => $wdsn) {
    echo "$how:\n";
    $o = ['dsn' => $wdsn];

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
}
@unlink($file);
?>
--EXPECT--
RESP3, the command connection:
  the first wait gives up: false, listeners left on its channel: 0
  the second wait, for B: false, on a channel of its own: yes, B still the other's: true
  the wait for C is handed the lock: 'late'
  after a release, the late entry: passed over, the lock: NULL
a subscriber of its own:
  the first wait gives up: false, listeners left on its channel: 0
  the second wait, for B: false, on a channel of its own: yes, B still the other's: true
  the wait for C is handed the lock: 'late'
  after a release, the late entry: passed over, the lock: NULL
