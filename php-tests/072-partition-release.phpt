--TEST--
A partition during a release (fault proxy): releaseLock() fails with LockConnectionException naming the address within about read_timeout; nobody takes the lock before its lease ends, another does after; the release that waited in the partition lands at the heal, token-checked, and leaves the new holder alone; healed within read_timeout the release goes through (true), healed later it still lands. The releases at the end of synchronized(), of an object and of a request meet a partition without hanging or an escaping exception, and the lease ends the lock
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_fault.inc';
// A server of its own: the script calls counted below (rl_script_calls()) are this
// test's alone; on the suite's shared server the tests run beside it (run-tests.php
// -j) add theirs, and a stuck release that never landed would pass unseen.
$srv = rl_start_redis();
register_shutdown_function(function () use ($srv) { rl_stop_redis($srv); });
$dsn = $srv['dsn'];
$p = rl_test_proxy($srv['port']);
$rt = 0.5;
$o = ['dsn' => $p['dsn'], 'read_timeout' => $rt, 'connect_timeout' => $rt];
$lease = 1.5;
$yes = fn(bool $b) => $b ? 'yes' : 'NO';
$aboutRt = fn(float $took) => $yes($took < $rt + 0.5);

// Cache the release script first: a release stuck in a partition is not retried, and
// an EVALSHA landing on an empty script cache would fail there (NOSCRIPT), unseen.
$warm = new Lock(rl_key('warm'), 0, 5, $o);
$warm->addLock();
$warm->releaseLock();

/**
 * After a release stuck in the partition: nobody else takes $key before the lease
 * (from $acquired) ends, another client does after; then the heal delivers the stuck
 * release, which runs on Redis and must leave the new holder alone.
 */
$afterLease = function (string $key, float $acquired) use ($p, $dsn, $lease, $yes): void {
    $other = new Lock($key, 0, 10, ['dsn' => $dsn]);
    $before = $other->tryLock() !== false;
    rl_sleep_until($acquired + $lease + 0.2);
    $after = $other->tryLock() !== false;
    $scripts = rl_script_calls($dsn);
    rl_heal($p);
    echo "  taken by another before the lease ends: ", $before ? 'YES' : 'no',
        ", after it: ", $yes($after), "\n";
    echo "  the stuck release runs at the heal: ", $yes(rl_script_calls($dsn) > $scripts),
        ", and leaves the new holder alone: ", $yes($other->isOwned()), "\n";
    $other->releaseLock();
};

echo "1. releaseLock() into a partition that outlasts the lease\n";
$key = rl_key('release');
$h = new Lock($key, 0, $lease, $o);
$token = $h->addLock();
$acquired = microtime(true);
rl_proxy($p, 'partition');
[$r, $took] = rl_timed(fn() => $h->releaseLock());
echo "  ", $r instanceof Throwable ? get_class($r) : rl_outcome($r), ", a LockException: ", $yes($r instanceof LockException),
    ", names the address: ", $yes(rl_names($r, $p['dsn'])), ", within about read_timeout: ", $aboutRt($took), "\n";
echo "  the key still holds the holder's token: ", $yes(rl_cmd($dsn, 'GET', $key) === $token), "\n";
$afterLease($key, $acquired);
// The holder's object after the heal: it knows it no longer holds, and works again.
$other = new Lock($key, 0, 10, ['dsn' => $dsn]);
$other->tryLock();
echo "  holder after the heal, while another holds: isOwned ", var_export($h->isOwned(), true),
    ", releaseLock ", var_export($h->releaseLock(), true), ", tryLock ", var_export($h->tryLock(), true), "\n";
$other->releaseLock();
echo "  once free: takes it ", $yes(is_string($h->tryLock())), ", releases it ", var_export($h->releaseLock(), true), "\n";

echo "2. healed within read_timeout: the release waits for it, then goes through\n";
$key = rl_key('healed');
// A longer read_timeout here, so that a slow start of the healing process cannot outlast it.
$h = new Lock($key, 0, 10, ['read_timeout' => 1.0] + $o);
$h->addLock();
rl_proxy($p, 'partition');
$heal = rl_proxy_after($p, 0.15, 'heal');
[$r, $took] = rl_timed(fn() => $h->releaseLock());
rl_proxy_done($heal);
echo "  releaseLock: ", rl_outcome($r), ", held up by the partition: ", $yes($took >= 0.1), ", within read_timeout: ", $yes($took < 1.0),
    "; the lock is free: ", $yes(rl_cmd($dsn, 'EXISTS', $key) === 0), ", isOwned ", var_export($h->isOwned(), true), "\n";

// The caller was told it failed, but the release waited in the partition and still
// lands when it heals: a failed releaseLock() may have released.
echo "3. healed after read_timeout, within the lease: the failed release still lands\n";
$key = rl_key('late');
$h = new Lock($key, 0, 10, $o);
$h->addLock();
rl_proxy($p, 'partition');
[$r, $took] = rl_timed(fn() => $h->releaseLock());
$held = rl_cmd($dsn, 'EXISTS', $key) === 1;
rl_heal($p);
echo "  ", $r instanceof Throwable ? get_class($r) : rl_outcome($r), ", held until the heal: ", $yes($held),
    ", free after it: ", $yes(rl_cmd($dsn, 'EXISTS', $key) === 0), ", isOwned ", var_export($h->isOwned(), true), "\n";

// Today synchronized() throws the release's failure (docs/long-work.md); issue 29
// sends this release without waiting for its reply, and then 42 comes back. Either
// way the call must end promptly and the lease must end the lock.
echo "4. synchronized() whose release meets a partition\n";
$key = rl_key('sync');
$h = new Lock($key, 0, $lease, $o);
$acquired = microtime(true);
[$r, $took] = rl_timed(fn() => $h->synchronized(function () use ($p) { rl_proxy($p, 'partition'); return 42; }));
echo "  42, or LockConnectionException naming the address: ", ($r === 42 || rl_names($r, $p['dsn'])) ? 'yes' : rl_outcome($r),
    ", within about read_timeout: ", $aboutRt($took), "\n";
$afterLease($key, $acquired);
echo "  holder after the heal: isOwned ", var_export($h->isOwned(), true), "\n";

echo "5. an object's end in a partition\n";
$key = rl_key('scope');
$acquired = microtime(true);
[$r, $took] = rl_timed(function () use ($key, $lease, $o, $p) {
    $l = new Lock($key, 0, $lease, $o);
    $l->addLock();
    rl_proxy($p, 'partition');
    // $l ends here, releasing.
});
echo "  no exception: ", $yes($r === null), ", within about read_timeout: ", $aboutRt($took), "\n";
$afterLease($key, $acquired);

// Request end releases what objects left, here after a fatal error (no destructors
// run then): the process must still exit promptly, and quietly but for the error.
echo "6. request end in a partition, after a fatal error\n";
$key = rl_key('request-end');
$script = 'require ' . var_export(__DIR__ . '/_helper.inc', true) . ';'
    . '$l = new Lock(' . var_export($key, true) . ', 0, ' . $lease . ', ' . var_export($o, true) . ');'
    . '$l->addLock(); rl_proxy(' . var_export(['control' => $p['control']], true) . ', "partition"); echo "partitioned\n";'
    . 'trigger_error("stop", E_USER_ERROR);';
// (PHP 8.4 deprecates E_USER_ERROR: only the error itself is to be said.)
$proc = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . rl_ext(), '-d', 'display_errors=stderr',
    '-d', 'error_reporting=' . (E_ALL & ~E_DEPRECATED), '-r', $script],
    [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
$ready = trim((string) fgets($pipes[1]));
$acquired = $t0 = microtime(true);     // the child acquired before it said so
$out = stream_get_contents($pipes[1]);
$err = stream_get_contents($pipes[2]);
$rc = proc_close($proc);
$took = microtime(true) - $t0;
// PHP 8.5 and later follow the error with its backtrace (fatal_error_backtraces=1,
// their default): PHP's own lines, and nothing else, are allowed after it.
$fatal = '/\AFatal error: stop in Command line code on line \d+(\nStack trace:(\n#\d+ [^\n]*)+)?\z/';
echo "  $ready; exits within about read_timeout: ", $aboutRt($took), ", code $rc, says only the fatal error: ",
    $yes($out === '' && (bool) preg_match($fatal, trim($err))), "\n";
$afterLease($key, $acquired);
?>
--EXPECT--
1. releaseLock() into a partition that outlasts the lease
  LockConnectionException, a LockException: yes, names the address: yes, within about read_timeout: yes
  the key still holds the holder's token: yes
  taken by another before the lease ends: no, after it: yes
  the stuck release runs at the heal: yes, and leaves the new holder alone: yes
  holder after the heal, while another holds: isOwned false, releaseLock false, tryLock false
  once free: takes it yes, releases it true
2. healed within read_timeout: the release waits for it, then goes through
  releaseLock: true, held up by the partition: yes, within read_timeout: yes; the lock is free: yes, isOwned false
3. healed after read_timeout, within the lease: the failed release still lands
  LockConnectionException, held until the heal: yes, free after it: yes, isOwned false
4. synchronized() whose release meets a partition
  42, or LockConnectionException naming the address: yes, within about read_timeout: yes
  taken by another before the lease ends: no, after it: yes
  the stuck release runs at the heal: yes, and leaves the new holder alone: yes
  holder after the heal: isOwned false
5. an object's end in a partition
  no exception: yes, within about read_timeout: yes
  taken by another before the lease ends: no, after it: yes
  the stuck release runs at the heal: yes, and leaves the new holder alone: yes
6. request end in a partition, after a fatal error
  partitioned; exits within about read_timeout: yes, code 255, says only the fatal error: yes
  taken by another before the lease ends: no, after it: yes
  the stuck release runs at the heal: yes, and leaves the new holder alone: yes
