--TEST--
synchronized(): returns what the callable returns, rethrows its exception unchanged after releasing, throws LockTimeoutException when the lock is busy, and releases even on a fatal error or exit() inside the callable
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('sync');
$l = new Lock($key, 0.3, 10, ['dsn' => $dsn]);

// The value comes back; the lock is held during the call and free after it.
$seen = null;
$v = $l->synchronized(function () use ($dsn, $key, &$seen) { $seen = rl_cmd($dsn, 'EXISTS', $key); return ['answer' => 42]; });
var_dump($v, $seen, rl_cmd($dsn, 'EXISTS', $key));
$o = new stdClass;
var_dump($l->synchronized(fn() => $o) === $o, $l->synchronized(fn() => null), $l->synchronized('php_sapi_name'));

// The exception is the callable's own object, and the lock is released first.
$thrown = new DomainException('no stock', 7, new LogicException('cause'));
try {
    $l->synchronized(function () use ($thrown) { throw $thrown; });
} catch (Throwable $e) {
    var_dump($e === $thrown, $e->getMessage(), $e->getCode(), get_class($e->getPrevious()));
}
echo "free after the exception: ", rl_cmd($dsn, 'EXISTS', $key), "\n";

// Busy: LockTimeoutException after $timeOut, and the holder's lock is untouched.
$holder = new Lock($key, 0, 10, ['dsn' => $dsn]);
$th = $holder->addLock();
$ran = false;
$t0 = microtime(true);
try {
    $l->synchronized(function () use (&$ran) { $ran = true; });
} catch (LockTimeoutException $e) {
    $took = microtime(true) - $t0;
    var_dump($e instanceof LockException, $ran, $took > 0.28 && $took < 0.4);
    echo str_replace($key, 'KEY', $e->getMessage()), "\n";
}
var_dump(rl_cmd($dsn, 'GET', $key) === $th);
$holder->releaseLock();

// The callable may release the lock itself; synchronized() then has nothing to release.
var_dump($l->synchronized(fn() => $l->releaseLock()), rl_cmd($dsn, 'EXISTS', $key));
// Calls on the same object inside the callable see the lock held.
var_dump($l->synchronized(fn() => [$l->isOwned(), $l->getFencingToken() > 0]));
// A nested synchronized() on another key works; on the same key it times out.
$m = new Lock("$key:other", 0, 5, ['dsn' => $dsn]);
var_dump($l->synchronized(fn() => $m->synchronized(fn() => 'nested')));
$same = new Lock($key, 0.05, 5, ['dsn' => $dsn]);
try { $l->synchronized(fn() => $same->synchronized(fn() => 'never')); }
catch (LockTimeoutException $e) { echo "same key nested: ", get_class($e), ", outer released: ", rl_cmd($dsn, 'EXISTS', $key), "\n"; }

// The work outlives a lease that is not renewed: LockException, after the work.
$short = new Lock("$key:short", 0, 0.1, ['dsn' => $dsn]);
$done = false;
try { $short->synchronized(function () use (&$done) { usleep(250000); $done = true; return 1; }); echo "no error\n"; }
catch (LockException $e) { echo get_class($e), ', work done: ', var_export($done, true), ', ', str_replace("$key:short", 'KEY', $e->getMessage()), "\n"; }
// With auto_renew, work of one and a half leases keeps its lock. A 0.6 s lease
// (renewed every 0.2 s: 0.4 s of room for a watchdog waiting for a core), not the
// 0.1 s above, whose 66 ms of room a busy machine can take.
$renewed = new Lock("$key:renewed", 0, 0.6, ['dsn' => $dsn, 'auto_renew' => true]);
var_dump($renewed->synchronized(function () use ($renewed) { usleep(900000); return $renewed->isOwned(); }));

// Not a callable: TypeError, nothing taken.
try { $l->synchronized('no_such_function'); } catch (TypeError $e) { echo get_class($e), ", key: ", rl_cmd($dsn, 'EXISTS', $key), "\n"; }

// Fatal error and exit() inside the callable, in separate processes (lease 30 s).
$php = escapeshellarg(PHP_BINARY) . ' -n -d extension=' . escapeshellarg(rl_ext());
foreach (['fatal error' => 'trigger_error("boom", E_USER_ERROR);', 'exit()' => 'exit(5);',
          'uncaught exception' => 'throw new RuntimeException("x");'] as $name => $body) {
    $k = rl_key('sync-proc');
    // A shutdown function runs before request end: the lock must be free by then already.
    $script = '$d = ' . var_export($dsn, true) . '; $k = ' . var_export($k, true) . ';'
        . 'register_shutdown_function(function () use ($d, $k) { $p = new Lock($k, 0, 1, ["dsn" => $d]); echo $p->tryLock() ? " free-at-shutdown" : " held-at-shutdown"; $p->releaseLock(); });'
        . '$l = new Lock($k, 0, 30, ["dsn" => $d]);'
        . '$l->synchronized(function () { echo "inside "; ' . $body . ' }); echo "after";';
    $out = (string) shell_exec("$php -r " . escapeshellarg($script) . ' 2>&1');
    echo "$name: ", str_starts_with($out, 'inside') ? 'ran' : 'did not run', ', ', str_contains($out, 'after') ? 'went on' : 'stopped',
        str_contains($out, 'free-at-shutdown') ? ', free at shutdown' : ', HELD at shutdown',
        ", key left: ", rl_cmd($dsn, 'EXISTS', $k), "\n";
}
?>
--EXPECT--
array(1) {
  ["answer"]=>
  int(42)
}
int(1)
int(0)
bool(true)
NULL
string(3) "cli"
bool(true)
string(8) "no stock"
int(7)
string(14) "LogicException"
free after the exception: 0
bool(true)
bool(false)
bool(true)
redis-lock: could not acquire the lock "KEY" within 0.3 s
bool(true)
bool(true)
int(0)
array(2) {
  [0]=>
  bool(true)
  [1]=>
  bool(true)
}
string(6) "nested"
same key nested: LockTimeoutException, outer released: 0
LockLostException, work done: true, redis-lock: the lock "KEY" was lost before the work finished (its lease ran out, or someone else took it; the release at the end of the work found it gone): part of the work ran unprotected
bool(true)
TypeError, key: 0
fatal error: ran, stopped, free at shutdown, key left: 0
exit(): ran, stopped, free at shutdown, key left: 0
uncaught exception: ran, stopped, free at shutdown, key left: 0
