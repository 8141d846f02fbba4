--TEST--
An acquire whose SET waits out a partition and lands after the call has failed (fault proxy): on one server the caller's releaseLock() after the heal clears what landed (docs/connections.md: the object keeps the token); on Redlock with 3 of 5 nodes cut off, where the late SETs would otherwise hold a majority, and so the lock, for a whole lease that nobody holds, the failed attempt's undo waits behind each SET on its connection and clears it as it lands, and releaseLock() is still harmless
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_fault.inc';
/** How many SETs the server at $dsn has run, from INFO commandstats. */
function rl_set_calls(string $dsn): int {
    return preg_match('/^cmdstat_set:calls=(\d+)/m', (string) rl_cmd($dsn, 'INFO', 'commandstats'), $m) ? (int) $m[1] : 0;
}
$nodes = rl_start_many(5);
$px = [];
try {
    for ($i = 0; $i < 3; $i++) { $px[] = rl_fault_proxy($nodes[$i]['port']); }
    $rt = 0.3;
    $lease = 5;
    $cases = [
        'one server' => [['dsn' => $px[0]['dsn']], [0]],
        'Redlock, 3 of 5 cut off' => [['servers' => [$px[0]['dsn'], $px[1]['dsn'], $px[2]['dsn'], $nodes[3]['dsn'], $nodes[4]['dsn']]], [0, 1, 2]],
    ];
    foreach ($cases as $name => [$where, $cut]) {
        $opts = $where + ['read_timeout' => $rt, 'connect_timeout' => $rt];
        $key = rl_key('late-set');
        $a = new Lock($key, 0, $lease, $opts);
        $a->addLock();           // connections open, scripts cached
        $a->releaseLock();
        foreach ($cut as $i) { rl_proxy($px[$i], 'partition'); }
        [$r, $took] = rl_timed(fn() => $a->tryLock());
        $sets = array_map(fn($i) => rl_set_calls($nodes[$i]['dsn']), $cut);
        foreach ($cut as $i) { rl_heal($px[$i]); }
        $ran = count(array_filter($cut, fn($i) => rl_set_calls($nodes[$i]['dsn']) > $sets[array_search($i, $cut)]));
        $landed = count(array_filter($cut, fn($i) => rl_cmd($nodes[$i]['dsn'], 'EXISTS', $key)));
        [$rel] = rl_timed(fn() => $a->releaseLock());
        $left = count(array_filter($nodes, fn($n) => rl_cmd($n['dsn'], 'EXISTS', $key)));
        $b = new Lock($key, 0, $lease, $opts);
        echo "$name: ", $r instanceof Throwable ? get_class($r) : rl_outcome($r),
            "; late SETs ran on every cut-off node: ", $ran === count($cut) ? 'yes' : $ran, ", left there after the heal: ", $landed,
            "; after the caller's releaseLock() (", $rel instanceof Throwable ? get_class($rel) : 'no exception',
            "), left: ", $left, ", another takes it at once: ", is_string($b->tryLock()) ? 'yes' : 'NO', "\n";
        $b->releaseLock();
    }
} finally {
    foreach ($px as $q) { rl_stop_proxy($q); }
    foreach ($nodes as $n) { rl_stop_redis($n); }
}
?>
--EXPECT--
one server: LockConnectionException; late SETs ran on every cut-off node: yes, left there after the heal: 1; after the caller's releaseLock() (no exception), left: 0, another takes it at once: yes
Redlock, 3 of 5 cut off: LockConnectionException; late SETs ran on every cut-off node: yes, left there after the heal: 0; after the caller's releaseLock() (no exception), left: 0, another takes it at once: yes
