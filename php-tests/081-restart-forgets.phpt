--TEST--
A restart without persistence forgets the holds: synchronized() whose server restarted under the work (its connection closed) waits for the release's answer and throws LockLostException, for a Lock taken by another client meanwhile, for a Lock nobody took, after the connection was made anew by another call, and for a Semaphore; with the server up all along the release is still sent without waiting
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$o = ['dsn' => $dsn];
// The server killed and started again on its port, empty (no persistence).
$restart = function () use (&$srv) {
    rl_kill_redis($srv);
    $srv = rl_start_redis([], $srv['port']);
};
$outcome = function (callable $run): string {
    try {
        return 'returned ' . var_export($run(), true);
    } catch (LockLostException $e) {
        return 'LockLostException';
    } catch (Throwable $e) {
        return get_class($e) . ': ' . $e->getMessage();
    }
};
try {
    // Control: nothing happens to the server, and the release is not awaited: the
    // process's command count on the server stays one per cycle.
    $l = new Lock('restart:a', 0, 30, $o);
    $l->synchronized(fn() => 1);
    $calls = function () use ($dsn) {
        $stats = rl_cmd($dsn, 'INFO', 'commandstats');
        preg_match('/cmdstat_set:calls=(\d+)/', $stats, $m);
        preg_match('/cmdstat_eval:calls=(\d+)/', $stats, $e);
        return [(int) ($m[1] ?? 0), (int) ($e[1] ?? 0)];
    };
    [$set0, $eval0] = $calls();
    echo "no restart: ", $outcome(fn() => $l->synchronized(fn() => 'done')), "\n";
    [$set1, $eval1] = $calls();
    echo "no restart, the release sent unawaited (EVAL by text): ", $eval1 - $eval0 === 1 && $set1 - $set0 === 1 ? 'yes' : "no: SET +" . ($set1 - $set0) . ", EVAL +" . ($eval1 - $eval0), "\n";

    // Another client takes the forgotten lock after the restart.
    echo "restart, taken by another: ", $outcome(fn() => $l->synchronized(function () use ($restart, $dsn) {
        $restart();
        rl_cmd($dsn, 'SET', 'restart:a', 'someone-else', 'PX', '30000');
        return 'done';
    })), "\n";
    echo "  the other's hold is left alone: ", var_export(rl_cmd($dsn, 'GET', 'restart:a'), true), "\n";
    rl_cmd($dsn, 'DEL', 'restart:a');

    // Nobody took it: the hold is gone all the same.
    echo "restart, taken by nobody: ", $outcome(fn() => $l->synchronized(fn() => $restart() ?? 'done')), "\n";

    // Another call made the connection anew after the restart (a new one, unclosed):
    // the hold was still taken on the old one.
    $other = new Lock('restart:b', 0, 30, $o);
    echo "restart, connection made anew: ", $outcome(fn() => $l->synchronized(function () use ($restart, $other) {
        $restart();
        $other->isLocked();
        return 'done';
    })), "\n";
    echo "  and after it, with the server up: ", $outcome(fn() => $l->synchronized(fn() => 'done')), "\n";

    $s = new Semaphore('restart:s', 2, 0, 30, $o);
    echo "semaphore, no restart: ", $outcome(fn() => $s->synchronized(fn() => 'done')), "\n";
    echo "semaphore, restart: ", $outcome(fn() => $s->synchronized(fn() => $restart() ?? 'done')), "\n";
    echo "keys left: ", json_encode(rl_cmd($dsn, 'KEYS', 'restart:*')), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
no restart: returned 'done'
no restart, the release sent unawaited (EVAL by text): yes
restart, taken by another: LockLostException
  the other's hold is left alone: 'someone-else'
restart, taken by nobody: LockLostException
restart, connection made anew: LockLostException
  and after it, with the server up: returned 'done'
semaphore, no restart: returned 'done'
semaphore, restart: LockLostException
keys left: []
