--TEST--
Fencing tokens strictly increase across 6 processes and 1800 acquisitions, mixing holders that ask for a number (lazily, then eagerly) and holders that never do, with hand-overs; null before the first acquisition and with fencing off
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('fence');
$log = tempnam(sys_get_temp_dir(), 'rl-fence');
// Timeouts of 5 s, not the default 0.5 s: on a busy machine (a CPU hog, a load of
// 10 on 2 cores) a child's acquisition once met no reply for longer than that, and
// no reply on its reconnect either, which is not what this test is about.
$slow = ['read_timeout' => 5, 'connect_timeout' => 5];
// One acquisition under the lock: an asker checks its number the way a storage would,
// and logs it while still holding, so the log is in tenure order.
function hold(Lock $l, bool $ask, string $dsn, string $key, string $log): int {
    $l->addLock() or exit(20);
    $bad = 0;
    if ($ask) {
        $f = $l->getFencingToken();
        $last = (int) rl_cmd($dsn, 'GET', "$key:last");
        if (!is_int($f) || $f <= $last) { $bad++; }
        rl_cmd($dsn, 'SET', "$key:last", (string) $f);
        file_put_contents($log, "$f\n", FILE_APPEND);
    }
    usleep(200);                                          // long enough for waiters to queue
    $l->releaseLock() or exit(21);
    if ($ask && $l->getFencingToken() !== $f) { $bad++; }  // kept after the release
    return $bad;
}
$codes = rl_fork(6, function ($i) use ($dsn, $key, $log, $slow) {
    $bad = 0;
    if ($i < 2) {
        // Never asks: plain SETs, and hand-overs that carry no number.
        $l = new Lock($key, 10, 5, ['dsn' => $dsn] + $slow);
        for ($n = 0; $n < 300; $n++) { $bad += hold($l, false, $dsn, $key, $log); }
    } elseif ($i < 4) {
        // Asks every time: the first number is taken lazily, the rest come with the lock.
        $l = new Lock($key, 10, 5, ['dsn' => $dsn] + $slow);
        for ($n = 0; $n < 300; $n++) { $bad += hold($l, true, $dsn, $key, $log); }
    } else {
        // Ten fresh processes of 30 acquisitions each, asking from the 10th on, every
        // third time: each starts lazy, turns eager, and often holds without asking.
        // Each asks on its last hold too: an eager hold that does not ask takes a
        // number nobody logs, so the last number issued is a logged one only if no
        // such hold comes after every ask (on a busy machine these forks end last).
        for ($c = 0; $c < 10; $c++) {
            [$code] = rl_fork(1, function () use ($dsn, $key, $log, $slow) {
                $l = new Lock($key, 10, 5, ['dsn' => $dsn] + $slow);
                $bad = 0;
                for ($n = 0; $n < 30; $n++) { $bad += hold($l, $n >= 10 && ($n % 3 === 0 || $n === 29), $dsn, $key, $log); }
                return $bad;
            });
            $bad += $code;
        }
    }
    return $bad === 0 ? 0 : 22;
});
echo "children: ", implode(',', $codes), "\n";
// Asked only now: the first request sets the whole process to eager numbers, and the
// children must start from a process that never asked.
$l = new Lock($key, 0, 5, ['dsn' => $dsn]);
var_dump($l->getFencingToken());
$seen = array_map('intval', file($log, FILE_IGNORE_NEW_LINES));
$increasing = true;
for ($i = 1; $i < count($seen); $i++) { $increasing = $increasing && $seen[$i] > $seen[$i - 1]; }
echo count($seen), " numbers asked for in 1800 acquisitions, ", count(array_unique($seen)), " distinct, strictly increasing in tenure order: ", var_export($increasing, true), "\n";
echo "the counter ends at the last number: ", var_export((int) rl_cmd($dsn, 'GET', "{{$key}}:fence") === end($seen), true), "\n";
$t = $l->addLock();
var_dump($l->getFencingToken() > end($seen));
$l->releaseLock();
// With fencing off no number is issued and no counter is kept.
$k2 = rl_key('nofence');
$off = new Lock($k2, 0, 5, ['dsn' => $dsn, 'fencing' => false]);
$off->addLock();
var_dump($off->getFencingToken(), rl_cmd($dsn, 'EXISTS', "{{$k2}}:fence"));
$off->releaseLock();
unlink($log);
?>
--EXPECT--
children: 0,0,0,0,0,0
NULL
740 numbers asked for in 1800 acquisitions, 740 distinct, strictly increasing in tenure order: true
the counter ends at the last number: true
bool(true)
NULL
int(0)
