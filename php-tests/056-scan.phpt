--TEST--
redis_lock_scan(): the locks (write and read) and semaphores under the prefix, sorted, without their auxiliary keys or keys outside the prefix (any other string under it counts as a lock); a pattern; the limit; clear errors for bad arguments and an unreachable server
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$prefix = rl_key('scan') . ':';
$o = ['dsn' => $dsn, 'prefix' => $prefix, 'owner_info' => true];
$held = [];
foreach (['b', 'a', 'c*[x]'] as $name) { $held[$name] = new Lock($name, 0, 10, $o); $held[$name]->addLock(); }
$fenced = new Lock('fenced', 0, 10, $o); $fenced->addLock(); $fenced->getFencingToken();
$r = new Lock('reading', 0, 10, $o); $r->addReadLock();
$s = new Semaphore('sem', 3, 0, 10, $o); $s->acquire();
rl_cmd($dsn, 'SET', $prefix . 'other-string', 'x');
rl_cmd($dsn, 'SET', 'elsewhere', 'x');
// A lock under a prefix that is a glob: the prefix matches only itself (`*g` is under
// the first prefix too).
$g = new Lock('g', 0, 10, ['dsn' => $dsn, 'prefix' => $prefix . '*']); $g->addLock();

$show = fn(array $list) => implode(' ', array_map(fn($e) => $e['key'] . '=' . $e['kind'], $list));
echo "all: ", $show(redis_lock_scan($o)), "\n";
echo "pattern: ", $show(redis_lock_scan($o, '[ab]')), "\n";
// The limit bounds the scan: two of them, whichever it met first.
$two = redis_lock_scan($o, null, 2);
$all = redis_lock_scan($o);
echo "limit 2: ", count($two), ", all listed: ", var_export(!array_diff(array_column($two, 'key'), array_column($all, 'key')), true), "\n";
echo "glob prefix: ", $show(redis_lock_scan(['dsn' => $dsn, 'prefix' => $prefix . '*'])), "\n";
$fenced->releaseLock();
echo "after a release: ", $show(redis_lock_scan($o, 'f*')), "\n";

foreach ([
    fn() => redis_lock_scan($o, '*', 0),
    fn() => redis_lock_scan(['nope' => 1]),
    fn() => redis_lock_scan(['dsn' => 'redis://127.0.0.1:' . rl_free_port(), 'connect_timeout' => 0.2]),
] as $f) {
    try { $f(); } catch (Throwable $e) { echo get_class($e), ': ', preg_replace('/:\d+/', ':PORT', explode('; known', $e->getMessage())[0]), "\n"; }
}
?>
--EXPECT--
all: *g=lock a=lock b=lock c*[x]=lock fenced=lock other-string=lock reading=lock sem=semaphore
pattern: a=lock b=lock
limit 2: 2, all listed: true
glob prefix: g=lock
after a release: 
ValueError: redis_lock_scan(): Argument #3 ($limit) must be between 1 and 1000000, 0 given
ValueError: unknown option "nope"
LockConnectionException: redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: connection refused
