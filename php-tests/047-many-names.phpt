--TEST--
Twenty thousand distinct lock names, taken and released at the defaults, leave no key behind (no fencing counter, no queue)
--CONFLICTS--
cpu # 4 workers and the server busy for 3 s
--EXTENSIONS--
pcntl
posix
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$prefix = rl_key('names') . ':';
// 4 x 5,000 names: nothing here is contended, so a key that a take or a release
// leaves behind is left by every name and shows at any count; more names only
// took longer (100,000 took 12 s of each phpt run, a million 90 s; these 3 s).
$workers = 4;
$each = 5000;
$parent = getmypid();
$codes = rl_fork($workers, function (int $w) use ($dsn, $prefix, $each, $parent) {
    for ($i = 0; $i < $each; $i++) {
        // A test process killed by run-tests (its timeout) leaves its workers running:
        // they stop instead of loading the server under the next tests.
        if ($i % 1000 === 0 && posix_getppid() !== $parent) { return 3; }
        // Names built from ids, as in unique_job:<id>; every object at the defaults
        // but the timeouts: 2 million round trips (when this test had a million names) on a busy machine (a CPU hog, a
        // load of 10 on 2 cores) met a reply later than the default 0.5 s now and
        // then, which is not what this test is about: a key left behind still shows.
        $l = new Lock($prefix . "job:$w:$i", 0, 10, ['dsn' => $dsn, 'read_timeout' => 5, 'connect_timeout' => 5]);
        $t = $l->addLock();
        if (!is_string($t) || !$l->releaseLock($t)) { return 2; }
    }
    return 0;
});
echo "workers: ", implode(',', $codes), "\n";
$left = 0;
$cursor = '0';
do {
    [$cursor, $keys] = rl_cmd($dsn, 'SCAN', $cursor, 'MATCH', "*$prefix*", 'COUNT', '10000');
    $left += count($keys);
} while ($cursor !== '0');
echo "keys left by ", $workers * $each, " names: $left\n";
?>
--EXPECT--
workers: 0,0,0,0
keys left by 20000 names: 0
