--TEST--
A lock that expires is taken by another; the stale token then cannot release it
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('expiry');
$old = new Lock($key, 0, 0.1, ['dsn' => $dsn]);
$stale = $old->addLock();
usleep(150000);
var_dump($old->isLocked());
$new = new Lock($key, 0, 10, ['dsn' => $dsn]);
$fresh = $new->addLock();
var_dump(is_string($fresh) && $fresh !== $stale);
// Every release name, with the explicit stale token and with the object's own.
var_dump($old->releaseLock($stale), $old->releaseLock1($stale), $old->releaseLock2($stale), $old->releaseLock());
var_dump(rl_cmd($dsn, 'GET', $key) === $fresh);
var_dump($new->releaseLock());
?>
--EXPECT--
bool(false)
bool(true)
bool(false)
bool(false)
bool(false)
bool(false)
bool(true)
bool(true)
