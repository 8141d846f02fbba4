--TEST--
Lazy fencing: a stale holder asking for its first number gets a LockException, not a number; a settle after a lost reply never repeats a number (plain SET and fenced take alike); a million-style run of distinct names leaves no counter behind
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$stalled = rl_start_redis(['--enable-debug-command', 'local']);
$sdsn = $stalled['dsn'];

// This process has not asked for a number yet: its acquisitions take none.
// 1. Distinct names, taken and released: nothing is left behind, not even counters.
$prefix = rl_key('many');
for ($i = 0; $i < 2000; $i++) {
    // A generous read_timeout: this part counts keys, and a loaded machine may stall.
    $l = new Lock("$prefix:$i", 0, 5, ['dsn' => $dsn, 'read_timeout' => 5, 'connect_timeout' => 5]);
    $l->addLock() or die("busy $i\n");
    $l->releaseLock() or die("not released $i\n");
}
echo "keys left by 2000 distinct names: ", count(rl_cmd($dsn, 'KEYS', "*$prefix*")), "\n";

// 2. A stale holder: its lease ran out and someone else took the lock (it asks below,
// once every lazy acquisition of this test is done: the first request makes the
// process eager).
$skey = rl_key('stale');
$old = new Lock($skey, 0, 0.05, ['dsn' => $dsn]);
$old->addLock();
usleep(100000);
$new = new Lock($skey, 0, 5, ['dsn' => $dsn]);
$tn = $new->addLock();
// 3. Settling a lost reply. A holder in another process takes a number and releases.
// Then DEBUG SLEEP stalls the server (one of this test's own, which allows DEBUG) for
// 2.4 s, past this process's read_timeout: its command waits in the socket, the
// client gives up on the reply and drops the connection, and the server still runs
// the command when it wakes (it reads the bytes before the close). The settle step,
// on a new connection, must find out what it did.
function previous_holder(string $dsn, string $key): int {
    $tmp = tempnam(sys_get_temp_dir(), 'rl-fence');
    $codes = rl_fork(1, function () use ($dsn, $key, $tmp) {
        $l = new Lock($key, 5, 5, ['dsn' => $dsn]);
        $l->addLock() or exit(2);
        file_put_contents($tmp, (string) $l->getFencingToken());
        return $l->releaseLock() ? 0 : 3;
    });
    $n = (int) file_get_contents($tmp);
    unlink($tmp);
    if ($codes !== [0] || $n < 1) { throw new RuntimeException('previous holder failed: ' . implode(',', $codes)); }
    return $n;
}
function settled_take(string $dsn, string $key): array {
    $l = new Lock($key, 0, 5, ['dsn' => $dsn, 'read_timeout' => 1.5, 'connect_timeout' => 3.0]);
    $l->isLocked();                                       // connected before the server stalls
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    $busy = new Resp($dsn, 60, 60);
    // By the server's own clock, whatever the load (a counting loop sized beforehand
    // was not: a busy machine made it too short or too long).
    $busy->send(['DEBUG', 'SLEEP', '2.4']);
    usleep(100000);                                       // the server sleeps
    $t0 = microtime(true);
    $token = $l->tryLock();
    $waited = microtime(true) - $t0;
    $busy->read();
    $busy->close();
    preg_match_all('/^cmdstat_(\w+):calls=(\d+)/m', rl_cmd($dsn, 'INFO', 'commandstats'), $m);
    $calls = array_combine($m[1], array_map('intval', $m[2]));
    return [$l, $token, $waited, $calls];
}
$key = rl_key('settle');
$n = previous_holder($sdsn, $key);
[$l, $token, $waited, $calls] = settled_take($sdsn, $key);
// Two SETs: the plain one, run late, and the acquire script's, which found the key held.
echo "plain SET, reply lost: taken ", var_export(is_string($token) && rl_cmd($sdsn, 'GET', $key) === $token, true),
    ", after the stall: ", var_export($waited > 1.4, true),
    ", the SET ran and the settle script found it: ", var_export(($calls['set'] ?? 0) === 2 && ($calls['evalsha'] ?? 0) >= 1, true), "\n";
try {
    $f = $old->getFencingToken();
    echo "stale holder got a number: ", var_export($f, true), "\n";
} catch (LockException $e) {
    echo get_class($e), ": ", str_replace($skey, 'KEY', $e->getMessage()), "\n";
}
echo "no number was taken for it: ", rl_cmd($dsn, 'EXISTS', "{{$skey}}:fence"), "\n";
// The new holder still gets one, the first of a new counter (the server's clock in
// µs then, and what the counter now holds), and the lock is untouched.
$before = rl_server_us($dsn);
$nf = $new->getFencingToken();
var_dump(rl_is_fence($nf) && $nf >= $before && $nf <= rl_server_us($dsn)
    && rl_cmd($dsn, 'GET', "{{$skey}}:fence") === (string) $nf, rl_cmd($dsn, 'GET', $skey) === $tn);
$new->releaseLock();


$f = $l->getFencingToken();
echo "its number is above the previous holder's: ", var_export(rl_is_fence($f, $n), true),
    ", the counter's: ", var_export(rl_cmd($sdsn, 'GET', "{{$key}}:fence") === (string) $f, true), "\n";
$l->releaseLock();

// From now on this process takes numbers as it acquires: the settle reruns the fenced take.
$warm = new Lock(rl_key('warm'), 0, 5, ['dsn' => $sdsn]);
$warm->tryLock() && $warm->releaseLock();                 // the fenced take's script is cached
$key = rl_key('settle-fenced');
$n = previous_holder($sdsn, $key);
[$l, $token, $waited, $calls] = settled_take($sdsn, $key);
echo "fenced take, reply lost: taken ", var_export(is_string($token) && rl_cmd($sdsn, 'GET', $key) === $token, true),
    ", after the stall: ", var_export($waited > 1.4, true),
    ", run twice, one INCR and one clock reading: ",
    var_export(($calls['evalsha'] ?? 0) === 2 && ($calls['incr'] ?? 0) === 1 && ($calls['time'] ?? 0) === 1, true), "\n";
// The settle answered the number the lost run issued: the counter's, no other since.
$f = $l->getFencingToken();
echo "its number is above the previous holder's, the one the counter holds: ",
    var_export(rl_is_fence($f, $n) && rl_cmd($sdsn, 'GET', "{{$key}}:fence") === (string) $f, true), "\n";
$l->releaseLock();
rl_stop_redis($stalled);
?>
--EXPECT--
keys left by 2000 distinct names: 0
plain SET, reply lost: taken true, after the stall: true, the SET ran and the settle script found it: true
LockException: redis-lock: no fencing token for the lock "KEY": this object no longer holds it (its lease ran out, someone else took it, or it was released)
no number was taken for it: 0
bool(true)
bool(true)
its number is above the previous holder's: true, the counter's: true
fenced take, reply lost: taken true, after the stall: true, run twice, one INCR and one clock reading: true
its number is above the previous holder's, the one the counter holds: true
