--TEST--
Fencing tokens strictly increase across 6 processes and 300 acquisitions (plain takes and hand-overs alike); null before the first acquisition and with fencing off
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('fence');
$log = tempnam(sys_get_temp_dir(), 'rl-fence');
$l = new Lock($key, 0, 5, ['dsn' => $dsn]);
var_dump($l->getFencingToken());
$codes = rl_fork(6, function ($i) use ($dsn, $key, $log) {
    $l = new Lock($key, 10, 5, ['dsn' => $dsn]);
    $bad = 0;
    for ($n = 0; $n < 50; $n++) {
        $l->addLock() or exit(20);
        $f = $l->getFencingToken();
        // The storage's check: a fencing token must be above every one it has seen.
        $last = (int) rl_cmd($dsn, 'GET', "$key:last");
        if (!is_int($f) || $f <= $last) { $bad++; }
        rl_cmd($dsn, 'SET', "$key:last", (string) $f);
        file_put_contents($log, "$f\n", FILE_APPEND);
        $l->releaseLock() or exit(21);
        if ($l->getFencingToken() !== $f) { $bad++; }   // kept after the release
    }
    return $bad === 0 ? 0 : 22;
});
echo "children: ", implode(',', $codes), "\n";
$seen = array_map('intval', file($log, FILE_IGNORE_NEW_LINES));
$increasing = true;
for ($i = 1; $i < count($seen); $i++) { $increasing = $increasing && $seen[$i] > $seen[$i - 1]; }
echo count($seen), " acquisitions, ", count(array_unique($seen)), " distinct, strictly increasing in acquisition order: ", var_export($increasing, true), "\n";
echo "the counter ends at the last token: ", var_export((int) rl_cmd($dsn, 'GET', "{{$key}}:fence") === end($seen), true), "\n";
// Contention means hand-overs: the waiters' tokens came with their grants.
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
NULL
children: 0,0,0,0,0,0
300 acquisitions, 300 distinct, strictly increasing in acquisition order: true
the counter ends at the last token: true
bool(true)
NULL
int(0)
