--TEST--
The fault proxy (tools/test/fault-proxy.php): delay, round trips counted per call, a partition while holding (the watchdog marks the lock lost after its lease; another client takes it after expiry, not before), a half-open connection recovered within read_timeout, a reset
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$port = (int) parse_url($dsn, PHP_URL_PORT);
$p = rl_fault_proxy($port, 2);
$o = ['dsn' => $p['dsn'], 'read_timeout' => 0.5];
$writes = function () use ($p) { preg_match('/writes (\d+)/', rl_proxy($p, 'stats'), $m); return (int) $m[1]; };

// Round trips: each call without pipelining is one chunk from the client.
$key = rl_key('proxy');
$l = new Lock($key, 0, 10, $o);
$l->addLock();                        // connects, and caches the release script
$l->releaseLock();
$w = $writes();
$t0 = microtime(true);
$l->addLock();
$l->releaseLock();
$took = microtime(true) - $t0;
echo "addLock + releaseLock: ", $writes() - $w, " round trips, at least 8 ms: ", var_export($took >= 0.008, true), "\n";
rl_proxy($p, 'delay 0');

// A partition while holding, with auto_renew: the watchdog cannot renew; after the
// lease the lock is free for another client, and the holder knows it lost it.
$h = new Lock($key, 0, 0.6, $o + ['auto_renew' => true]);
$h->addLock();
rl_proxy($p, 'partition');
$other = new Lock($key, 0, 5, ['dsn' => $dsn]);
usleep(300000);
echo "taken by another before the lease ends: ", var_export($other->tryLock() !== false, true), "\n";
usleep(600000);
echo "taken by another after it: ", var_export($other->tryLock() !== false, true), "\n";
rl_proxy($p, 'heal');
echo "the holder knows: isOwned ", var_export($h->isOwned(), true), "\n";
$other->releaseLock();

// A half-open connection: the next call fails within read_timeout, the one after works.
$l2 = new Lock(rl_key('halfopen'), 0, 5, $o);
$l2->isLocked();
rl_proxy($p, 'halfopen');
$t0 = microtime(true);
try { $l2->isLocked(); echo "no error?\n"; } catch (LockConnectionException $e) { printf("half-open: %s within %s\n", get_class($e), microtime(true) - $t0 < 1.5 ? 'read_timeout' : 'MORE'); }
var_dump($l2->isLocked());

// A reset: the pooled connection is replaced at the next call.
rl_proxy($p, 'reset');
var_dump($l2->isLocked());
rl_stop_proxy($p);
?>
--EXPECT--
addLock + releaseLock: 2 round trips, at least 8 ms: true
taken by another before the lease ends: false
taken by another after it: true
the holder knows: isOwned false
half-open: LockConnectionException within read_timeout
bool(false)
bool(false)
