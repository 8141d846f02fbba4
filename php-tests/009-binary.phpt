--TEST--
Keys, prefixes and tokens are binary-safe; a 1 MiB key works
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = "bin\0key\xff\xfe" . random_bytes(8);
$l = new Lock($key, 0, 5, ['dsn' => $dsn, 'prefix' => "p\0x:"]);
$t = $l->addLock();
var_dump(rl_cmd($dsn, 'GET', "p\0x:$key") === $t);
var_dump(rl_cmd($dsn, 'EXISTS', "p\0x:" . substr($key, 0, 3)));
var_dump($l->getKey() === $key, $l->isLocked());
// A binary token that is not ours releases nothing.
var_dump($l->releaseLock("\0" . substr($t, 1)), $l->releaseLock($t));

$big = str_repeat("\x01\x00bi", 262144);   // 1 MiB
var_dump(strlen($big));
$b = new Lock($big, 0, 5, ['dsn' => $dsn]);
$t = $b->addLock();
var_dump(is_string($t), rl_cmd($dsn, 'GET', $big) === $t, (new Lock($big, 0, 5, ['dsn' => $dsn]))->tryLock());
var_dump($b->releaseLock(), rl_cmd($dsn, 'EXISTS', $big));
?>
--EXPECT--
bool(true)
int(0)
bool(true)
bool(true)
bool(false)
bool(true)
int(1048576)
bool(true)
bool(true)
bool(false)
bool(true)
int(0)
