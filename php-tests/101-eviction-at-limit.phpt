--TEST--
At a server's memory limit (docs/safety.md, the eviction row): with noeviction and memory full, addLock() (free, or waiting on a lock held), a fenced addLock() and a Semaphore throw a LockException naming the address and the server's OOM refusal, and leave nothing behind, while a holder still releases; with allkeys-lru, and with volatile-lru (lock keys carry a TTL), memory filled by other keys evicts a held lock's key inside its lease: another process takes the lock, and the first holder learns it only at its release; each evicting server warned of once at connect
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$servers = [];
register_shutdown_function(function () use (&$servers) {
    foreach ($servers as $s) { rl_stop_redis($s); }
});
// The eviction warning goes to PHP's error log (here a file); no handler sees it.
$log = tempnam(sys_get_temp_dir(), 'rl-evict-log');
ini_set('error_log', $log);
$warnings = [];
set_error_handler(function (int $no, string $msg) use (&$warnings) {
    if (!(error_reporting() & $no)) { return false; }   // the helpers' @-silenced ones
    $warnings[] = ($no === E_WARNING ? 'E_WARNING: ' : "error $no: ") . $msg;
    return true;
});
$start = function (string $policy) use (&$servers) {
    return $servers[] = rl_start_redis(['--maxmemory', '4mb', '--maxmemory-policy', $policy]);
};
/** What the server at $srv warned of and threw, its port shown as PORT. */
$show = fn(array $srv, string $text) => str_replace((string) $srv['port'], 'PORT', $text);
$told = function (array $srv) use (&$warnings, $show, $log) {
    static $at = 0;
    clearstatcache();
    $lines = (string) file_get_contents($log, false, null, $at);
    $at += strlen($lines);
    foreach (array_filter(explode("\n", $lines)) as $l) { $warnings[] = preg_replace('/^\[[^\]]*\] /', 'log: ', $l); }
    $text = $warnings ? implode(' | ', $warnings) : 'none';
    $warnings = [];
    return $show($srv, $text);
};
/**
 * Writes 16 KiB values under new keys on one connection of its own until the server
 * refuses one, $stop() says so (asked every 8 writes), or 2048 were written (8 times
 * the limit). Returns [written, the last reply].
 */
function fill(array $srv, string $name, ?callable $stop = null): array {
    $c = Resp::at('127.0.0.1', $srv['port']);
    $value = str_repeat('x', 16384);
    for ($i = 0, $r = null; $i < 2048; $i++) {
        if (($r = $c->ask('SET', "fill:$name:$i", $value)) instanceof Throwable || ($i % 8 === 7 && $stop && $stop())) { break; }
    }
    $c->close();
    return [$i, $r];
}
function thrown(callable $fn): string {
    try { return 'returned ' . var_export($fn(), true); } catch (Throwable $e) { return get_class($e) . ': ' . $e->getMessage(); }
}
/** The keys of the test's locks left on the server (not the filler). */
function left(array $srv): int {
    $n = 0;
    $cursor = '0';
    do {
        [$cursor, $keys] = rl_cmd($srv['dsn'], 'SCAN', $cursor, 'MATCH', '*rl-test:*', 'COUNT', '1000');
        $n += count($keys);
    } while ($cursor !== '0');
    return $n;
}

// noeviction, memory full: every acquisition is refused whole.
$srv = $start('noeviction');
$o = ['dsn' => $srv['dsn']];
$held = new Lock(rl_key('oom:held'), 0, 30, $o);
$heldToken = $held->addLock();
$fenced = new Lock(rl_key('oom:fenced'), 0, 30, $o);
$fenced->addLock();
echo 'noeviction: warned at connect: ', $told($srv), "\n";
[$n, $r] = fill($srv, 'oom');
echo 'filled: refused after ', $n > 16 ? 'many writes' : "$n writes", ': ', $r instanceof Throwable ? $show($srv, $r->getMessage()) : 'never', "\n";
// Full for good: a small write could still fit in what the filler's connection freed
// when it closed; with the limit just under what the server holds, none does.
preg_match('/^used_memory:(\d+)/m', (string) rl_cmd($srv['dsn'], 'INFO', 'memory'), $m);
rl_cmd($srv['dsn'], 'CONFIG', 'SET', 'maxmemory', (string) ((int) $m[1] - 65536));
$keys = left($srv);
$waiter = new Lock($held->getKey(), 0.5, 30, $o);
foreach (['addLock(), free' => fn() => (new Lock(rl_key('oom:free'), 0, 30, $o))->addLock(),
          'addLock() waiting on a held lock' => fn() => $waiter->addLock(),
          'Semaphore acquire()' => fn() => (new Semaphore(rl_key('oom:sem'), 2, 0, 30, $o))->acquire(),
          // From here on, this process's acquisitions take fencing numbers (a script).
          'getFencingToken() of a lock held' => fn() => $fenced->getFencingToken(),
          'addLock(), fenced' => fn() => (new Lock(rl_key('oom:fenced2'), 0, 30, $o))->addLock()] as $what => $fn) {
    // The wording around the refusal is the server's (a script's line, its version's).
    $said = $show($srv, thrown($fn));
    $named = str_starts_with($said, 'LockException: redis-lock: Redis at redis://127.0.0.1:PORT ')
        && str_contains($said, "OOM") && str_contains($said, "command not allowed when used memory > 'maxmemory'");
    echo "$what: ", $named ? "a LockException naming the address and the server's OOM refusal" : $said, "\n";
}
echo 'left behind: ', left($srv) - $keys, ' keys; the waiter holds nothing: ', var_export(!$waiter->isOwned(), true), "\n";
echo 'the holder releases at the limit: ', var_export($held->releaseLock($heldToken), true), ', its key gone: ', var_export(left($srv) === $keys - 1, true), "\n";
echo 'warnings: ', $told($srv), "\n";

// allkeys-lru and volatile-lru: other keys' writes evict a held lock's key.
foreach (['allkeys-lru', 'volatile-lru'] as $policy) {
    $srv = $start($policy);
    $o = ['dsn' => $srv['dsn']];
    $first = new Lock(rl_key('evicted'), 0, 60, $o);
    $token = $first->addLock();
    echo "$policy: warned at connect: ", $told($srv), "\n";
    $key = $first->getKey();
    $before = microtime(true);
    // EXISTS does not touch a key's LRU clock.
    fill($srv, 'lru', fn() => rl_cmd($srv['dsn'], 'EXISTS', $key) === 0);
    $gone = rl_cmd($srv['dsn'], 'EXISTS', $key) === 0;
    preg_match('/^evicted_keys:(\d+)/m', (string) rl_cmd($srv['dsn'], 'INFO', 'stats'), $m);
    echo "  the lock's key evicted inside its 60 s lease: ", var_export($gone && microtime(true) - $before < 50, true),
        ', keys evicted: ', $policy === 'volatile-lru' ? $m[1] . ' (only keys with a TTL: the lock\'s)' : ($m[1] > 0 ? 'some' : 'none'), "\n";
    // The pressure passes (Redis 8 refuses a script's write while memory is still
    // over the limit, where 7.0 evicted for it): the key is gone all the same.
    rl_cmd($srv['dsn'], 'CONFIG', 'SET', 'maxmemory', '0');
    $second = new Lock($key, 0, 60, $o);
    echo '  another process takes it: ', var_export(is_string($second->addLock()), true),
        '; the first still believes it holds it for ', $first->getRemainingLifetime() > 40 ? 'over 40 s' : 'less', "\n";
    echo '  the first learns it at its release: releaseLock() ', var_export($first->releaseLock($token), true), "\n";
    $second->releaseLock();
}
?>
--EXPECT--
noeviction: warned at connect: none
filled: refused after many writes: OOM command not allowed when used memory > 'maxmemory'.
addLock(), free: a LockException naming the address and the server's OOM refusal
addLock() waiting on a held lock: a LockException naming the address and the server's OOM refusal
Semaphore acquire(): a LockException naming the address and the server's OOM refusal
getFencingToken() of a lock held: a LockException naming the address and the server's OOM refusal
addLock(), fenced: a LockException naming the address and the server's OOM refusal
left behind: 0 keys; the waiter holds nothing: true
the holder releases at the limit: true, its key gone: true
warnings: none
allkeys-lru: warned at connect: log: redis-lock: the Redis server at redis://127.0.0.1:PORT can evict lock keys (maxmemory-policy allkeys-lru, maxmemory 4194304 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
  the lock's key evicted inside its 60 s lease: true, keys evicted: some
  another process takes it: true; the first still believes it holds it for over 40 s
  the first learns it at its release: releaseLock() false
volatile-lru: warned at connect: log: redis-lock: the Redis server at redis://127.0.0.1:PORT can evict lock keys (maxmemory-policy volatile-lru, maxmemory 4194304 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
  the lock's key evicted inside its 60 s lease: true, keys evicted: 1 (only keys with a TTL: the lock's)
  another process takes it: true; the first still believes it holds it for over 40 s
  the first learns it at its release: releaseLock() false
