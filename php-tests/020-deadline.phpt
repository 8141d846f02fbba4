--TEST--
addLock() gives up at its deadline, within tens of milliseconds, whether it waits on a wake-up or polls, and leaves nothing queued
--CONFLICTS--
all # deadlines checked to 50 ms: alone
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('deadline');
$holder = new Lock($key, 0, 30, ['dsn' => $dsn]);
$holder->addLock() or die("holder failed\n");
$cases = [
    'default 0.3 s' => [0.3, []],
    'fair 0.25 s' => [0.25, ['fair' => true]],
    'polling 0.2 s' => [0.2, ['retry_delay' => 0.15, 'retry_delay_max' => 1.0]],
    'odd 0.123 s' => [0.123, []],
];
foreach ($cases as $name => [$timeOut, $opts]) {
    $l = new Lock($key, $timeOut, 5, ['dsn' => $dsn] + $opts);
    $t0 = microtime(true);
    $r = $l->addLock();
    $late = microtime(true) - $t0 - $timeOut;
    printf("%s: %s, %s\n", $name, var_export($r, true),
        $late >= -0.002 && $late < 0.05 ? 'on time' : sprintf('%+.3f s off', $late));
}
printf("holder still holds: %s; queue left %d\n", var_export($holder->isLocked(), true),
    rl_cmd($dsn, 'EXISTS', "{{$key}}:queue"));
// A lease shorter than the wait: the waiter takes the lock when it runs out.
$short = new Lock("$key:short", 0, 0.15, ['dsn' => $dsn]);
$short->addLock();
$l = new Lock("$key:short", 2, 5, ['dsn' => $dsn, 'retry_delay' => 1.0, 'retry_delay_max' => 1.0]);
$t0 = microtime(true);
$t = $l->addLock();
$took = microtime(true) - $t0;
printf("short lease: %s %s\n", is_string($t) ? 'acquired' : 'NOT acquired',
    $took > 0.1 && $took < 0.2 ? 'when it ran out' : sprintf('after %.3f s', $took));
?>
--EXPECT--
default 0.3 s: false, on time
fair 0.25 s: false, on time
polling 0.2 s: false, on time
odd 0.123 s: false, on time
holder still holds: true; queue left 0
short lease: acquired when it ran out
