--TEST--
A token is the whole token: a caller's token that differs from the holder's by one byte (a suffix '!', a byte left off, one byte changed, a generated token's shape with '!') cannot release, extend, be told it owns, take, wait for and be handed, or adopt on a retry the holder's lock, for a Lock's write and read holds and a MultiLock; the lock's value is exactly its holder's token, with and without waiters; an empty token (a read lock's value) or one over 256 bytes is a ValueError for every method that takes a token, and changes nothing
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$o = ['dsn' => $dsn, 'auto_renew' => false] + RL_PATIENT;
$hex = str_repeat('0123456789abcdef', 2);
// Each pair: the holder's token, and a caller's one byte away.
$pairs = [
    'job! / job' => ['job!', 'job'],
    'job / job!' => ['job', 'job!'],
    'hex! / hex' => ["$hex!", $hex],
    'hex / hex!' => [$hex, "$hex!"],
    'last byte' => ["job:42\0", "job:42\1"],
    '256 bytes' => [str_repeat("\xff", 256), str_repeat("\xff", 255)],
];
$generated = null;
foreach ($pairs as $name => [$mine, $other]) {
    $key = rl_key('whole');
    $a = new Lock($key, 0, 30, $o);
    $took = $a->tryLock($mine) === $mine;
    $before = rl_cmd($dsn, 'PTTL', $key);
    $b = new Lock($key, 0, 30, $o);
    $seen = [
        'took' => $took,
        'value' => rl_cmd($dsn, 'GET', $key) === $mine,
        'release' => $b->releaseLock($other),
        'extend' => $b->extendLock($other, 1),
        'isOwned' => $b->isOwned($other),
        'take' => $b->tryLock($other),
        'wait' => (new Lock($key, 0.2, 30, $o))->addLock($other),
        'still' => $a->isOwned() && rl_cmd($dsn, 'GET', $key) === $mine && rl_cmd($dsn, 'PTTL', $key) > $before - 1000,
    ];
    printf("%-12s %s\n", $name, json_encode($seen));
    $a->releaseLock();
}

// A generated token and a caller's token one byte longer: the caller's waits, is not
// handed the holder's lock, and the value stays the token, byte for byte, while it waits.
$key = rl_key('whole-wait');
$a = new Lock($key, 0, 30, $o);
$t = $a->addLock();
$pid = pcntl_fork();
if ($pid === 0) {
    $w = new Lock($key, 1.0, 30, $o);
    $got = $w->addLock("$t!");
    exit($got === false ? 0 : ($got === "$t!" ? 2 : 3));
}
$until = microtime(true) + 5;
while ($a->inspect()['waiters'] < 1 && microtime(true) < $until) { usleep(10000); }
echo "waiting: the value is the token: ", var_export(rl_cmd($dsn, 'GET', $key) === $t, true), "\n";
pcntl_waitpid($pid, $st);
echo "the waiter with token.'!' timed out: ", var_export(pcntl_wexitstatus($st) === 0, true),
    "; the holder still holds it: ", var_export($a->isOwned() && $a->releaseLock(), true), "\n";

// Read holds: a reader's token one byte away neither releases nor extends the share.
$key = rl_key('whole-read');
$r = new Lock($key, 0, 30, $o);
$rt = $r->addReadLock();
$x = new Lock($key, 0, 30, $o);
echo "read share: release ", var_export($x->releaseLock("$rt!"), true), ", extend ", var_export($x->extendLock("$rt!", 1), true),
    ", isOwned ", var_export($x->isOwned("$rt!"), true), ", still owned ", var_export($r->isOwned(), true), "\n";
$r->releaseLock();

// A MultiLock's keys: the same, on each key.
$k1 = rl_key('whole-m1');
$k2 = rl_key('whole-m2');
$m = new MultiLock([$k1, $k2], 0, 30, $o);
$mt = $m->addLock();
$x = new Lock($k1, 0, 30, $o);
echo "multilock key: release ", var_export($x->releaseLock("$mt!"), true), ", extend ", var_export($x->extendLock("$mt!", 1), true),
    ", isOwned ", var_export($x->isOwned("$mt!"), true), ", values ", var_export(rl_cmd($dsn, 'GET', $k1) === $mt && rl_cmd($dsn, 'GET', $k2) === $mt, true),
    ", still held ", var_export($m->releaseLock(), true), "\n";

// The empty string is no token (it is a read lock's value): every method that takes a
// token refuses it, and one longer than 256 bytes, with a ValueError, and the readers'
// lease is as it was.
$key = rl_key('whole-empty');
$r = new Lock($key, 0, 30, $o);
$r->addReadLock();
$x = new Lock($key, 0, 30, $o);
$mx = new MultiLock([$key], 0, 30, $o);
$sx = new Semaphore(rl_key('whole-sem'), 2, 0, 30, $o);
$sx->acquire();
$refused = [];
foreach (['releaseLock', 'releaseLock1', 'releaseLock2', 'isOwned'] as $f) { $refused[] = [$x, $f, []]; }
$refused[] = [$x, 'extendLock', [1]];
$refused[] = [$mx, 'releaseLock', []];
$refused[] = [$mx, 'isOwned', []];
$refused[] = [$mx, 'extendLock', [1]];
$refused[] = [$sx, 'release', []];
$refused[] = [$sx, 'isOwned', []];
$refused[] = [$sx, 'extend', [1]];
$n = 0;
foreach ($refused as [$obj, $f, $rest]) {
    foreach (['', str_repeat('t', 257)] as $bad) {
        try { $obj->$f($bad, ...$rest); echo get_class($obj), "::$f(", strlen($bad), " bytes): no error\n"; }
        catch (ValueError $e) { $n++; }
    }
}
echo "refused with a ValueError: $n of ", 2 * count($refused), "; the readers' lease kept: ", var_export(rl_cmd($dsn, 'PTTL', $key) > 25000 && $r->isOwned(), true),
    ", the permits kept: ", var_export($sx->isOwned(), true), "\n";
?>
--EXPECT--
job! / job   {"took":true,"value":true,"release":false,"extend":false,"isOwned":false,"take":false,"wait":false,"still":true}
job / job!   {"took":true,"value":true,"release":false,"extend":false,"isOwned":false,"take":false,"wait":false,"still":true}
hex! / hex   {"took":true,"value":true,"release":false,"extend":false,"isOwned":false,"take":false,"wait":false,"still":true}
hex / hex!   {"took":true,"value":true,"release":false,"extend":false,"isOwned":false,"take":false,"wait":false,"still":true}
last byte    {"took":true,"value":true,"release":false,"extend":false,"isOwned":false,"take":false,"wait":false,"still":true}
256 bytes    {"took":true,"value":true,"release":false,"extend":false,"isOwned":false,"take":false,"wait":false,"still":true}
waiting: the value is the token: true
the waiter with token.'!' timed out: true; the holder still holds it: true
read share: release false, extend false, isOwned false, still owned true
multilock key: release false, extend false, isOwned false, values true, still held true
refused with a ValueError: 22 of 22; the readers' lease kept: true, the permits kept: true
