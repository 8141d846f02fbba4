--TEST--
addLock, tryLock, releaseLock (and 1, 2), isLocked, getKey on a live server
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('basic');
$a = new Lock($key, 0, 5, ['dsn' => $dsn]);
$b = new Lock($key, 0, 5, ['dsn' => $dsn]);
var_dump($a->isLocked());
$t = $a->addLock();
var_dump(preg_match('/^[0-9a-f]{32}$/', $t) === 1);
var_dump(rl_cmd($dsn, 'GET', $key) === $t);
$pttl = rl_cmd($dsn, 'PTTL', $key);
var_dump($pttl > 4900 && $pttl <= 5000);
var_dump($a->isLocked(), $b->isLocked());
var_dump($b->addLock(), $b->tryLock());
var_dump($b->releaseLock());            // b holds nothing
var_dump($b->releaseLock('0123456789abcdef0123456789abcdef'));
var_dump(rl_cmd($dsn, 'GET', $key) === $t);
var_dump($b->releaseLock($t));          // anyone with the token may release
var_dump($a->isLocked(), $a->releaseLock());
// Each release name is the same atomic release.
foreach (['releaseLock', 'releaseLock1', 'releaseLock2'] as $m) {
    $t = $a->tryLock();
    var_dump(is_string($t), $a->$m(), $a->isLocked());
    $t = $a->tryLock();
    var_dump($a->$m($t));
}
// Tokens do not repeat.
$seen = [];
for ($i = 0; $i < 200; $i++) { $seen[$a->tryLock()] = true; $a->releaseLock(); }
var_dump(count($seen));
var_dump($a->getKey() === $key);
?>
--EXPECT--
bool(false)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
bool(false)
bool(false)
bool(false)
bool(false)
bool(true)
bool(true)
bool(false)
bool(false)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
bool(false)
bool(true)
int(200)
bool(true)
