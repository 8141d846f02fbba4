--TEST--
extendLock() sets the new lease when the token holds the key, and is refused for a wrong, expired or released token; isOwned() and getTtl() report the key
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('extend');
$pttl = fn() => rl_cmd($dsn, 'PTTL', $key);
$in = fn($v, $lo, $hi) => var_export($v > $lo && $v <= $hi, true);

$l = new Lock($key, 0, 0.5, ['dsn' => $dsn]);
echo "free: ttl ", var_export($l->getTtl(), true), ", owned ", var_export($l->isOwned(), true),
     ", extend ", var_export($l->extendLock(), true), "\n";
$t = $l->addLock();
echo "held: ttl ", $in($l->getTtl(), 0.4, 0.5), ", owned ", var_export($l->isOwned(), true), "\n";
var_dump($l->extendLock(null, 30));
echo "30 s: ", $in($pttl(), 29000, 30000), ' ', $in($l->getTtl(), 29, 30), "\n";
var_dump($l->extendLock());                 // back to the object's lockOut
echo "default: ", $in($pttl(), 400, 500), "\n";
var_dump($l->extendLock($t, 3));            // an int, and the token given explicitly
echo "3 s: ", $in($pttl(), 2900, 3000), "\n";

// A wrong token changes nothing.
var_dump($l->extendLock(str_repeat('0', 32), 60), $l->isOwned(str_repeat('0', 32)));
echo "unchanged: ", $in($pttl(), 2000, 3000), "\n";

// Another object (another process, in real life) may extend and check by token.
$other = new Lock($key, 0, 1, ['dsn' => $dsn]);
var_dump($other->isOwned(), $other->isOwned($t), $other->extendLock($t, 4));
echo "4 s: ", $in($pttl(), 3900, 4000), "\n";

// Released: refused, and the key is not brought back.
var_dump($l->releaseLock(), $l->extendLock($t, 60), $l->isOwned($t), $l->getTtl(), rl_cmd($dsn, 'EXISTS', $key));

// Expired: refused, and the key is not brought back.
$e = new Lock($key, 0, 0.05, ['dsn' => $dsn]);
$te = $e->addLock();
usleep(120000);
var_dump($e->extendLock(), $e->isOwned(), rl_cmd($dsn, 'EXISTS', $key));

// Expired and taken by someone else: refused, and the new holder's lease is untouched.
$e->addLock();
usleep(120000);
$n = new Lock($key, 0, 10, ['dsn' => $dsn]);
$tn = $n->addLock();
var_dump($e->extendLock(null, 60), $e->isOwned(), $e->releaseLock());
echo "new holder intact: ", var_export(rl_cmd($dsn, 'GET', $key) === $tn, true), ' ', $in($pttl(), 9000, 10000), "\n";
$n->releaseLock();

// A key without expiry (set by something else) has an infinite TTL.
rl_cmd($dsn, 'SET', "$key:raw", 'x');
var_dump((new Lock("$key:raw", 0, 1, ['dsn' => $dsn]))->getTtl());
rl_cmd($dsn, 'DEL', "$key:raw");

// Bad leases are ValueErrors, and change nothing.
$l->addLock();
foreach ([0, -1, NAN, -INF, 0.0004] as $bad) {
    try { $l->extendLock(null, $bad); echo "accepted\n"; }
    catch (ValueError $x) { echo get_class($x), ': ', $x->getMessage(), "\n"; }
}
try { $l->extendLock(null, 'soon'); } catch (TypeError $x) { echo get_class($x), "\n"; }
echo "still: ", $in($pttl(), 400, 500), "\n";
var_dump($l->releaseLock());
?>
--EXPECT--
free: ttl NULL, owned false, extend false
held: ttl true, owned true
bool(true)
30 s: true true
bool(true)
default: true
bool(true)
3 s: true
bool(false)
bool(false)
unchanged: true
bool(false)
bool(true)
bool(true)
4 s: true
bool(true)
bool(false)
bool(false)
NULL
int(0)
bool(false)
bool(false)
int(0)
bool(false)
bool(false)
bool(false)
new holder intact: true true
float(INF)
ValueError: Lock::extendLock(): Argument #2 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), 0 given
ValueError: Lock::extendLock(): Argument #2 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), -1 given
ValueError: Lock::extendLock(): Argument #2 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), NaN given
ValueError: Lock::extendLock(): Argument #2 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), -inf given
ValueError: Lock::extendLock(): Argument #2 ($lockOut) must be at least 0.001 (one millisecond), 0.0004 given
TypeError
still: true
bool(true)
