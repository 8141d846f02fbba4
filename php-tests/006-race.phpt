--TEST--
Ten processes race for one key at the same instant: exactly one wins
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
for ($round = 0; $round < 5; $round++) {
    $key = rl_key('race');
    $start = microtime(true) + 0.3;
    $codes = rl_fork(10, function ($i) use ($dsn, $key, $start) {
        $l = new Lock($key, 0, 10, ['dsn' => $dsn] + RL_PATIENT);
        $l->isLocked();                      // connect before the start line
        time_sleep_until($start);
        $won = $l->addLock() !== false;
        // The winner holds on until every process has tried: its exit releases the lock.
        time_sleep_until($start + 0.5);
        return $won ? 10 : 0;
    });
    $winners = count(array_filter($codes, fn($c) => $c === 10));
    $losers = count(array_filter($codes, fn($c) => $c === 0));
    echo "round $round: $winners winner, $losers losers\n";
}
?>
--EXPECT--
round 0: 1 winner, 9 losers
round 1: 1 winner, 9 losers
round 2: 1 winner, 9 losers
round 3: 1 winner, 9 losers
round 4: 1 winner, 9 losers
