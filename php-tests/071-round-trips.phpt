--TEST--
Round trips per public call of Lock, Semaphore and MultiLock, counted by the fault proxy (the times the client spoke after it was answered), uncontended and contended; the table in docs/network.md must say the same
--SKIPIF--
<?php if (!function_exists('posix_kill') || !function_exists('pcntl_fork')) die('skip posix and pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
// A private server: redis_lock_scan()'s count depends on how many keys it walks.
$srv = rl_start_redis();
// A delay of 20 ms each way: a request sent without waiting for the one before
// (an unawaited release) surely reaches the proxy before that one's answer.
$p = rl_fault_proxy($srv['port'], 20);
$o = ['dsn' => $p['dsn']];
// Holders and waiters the counted calls meet go straight to the server: uncounted.
$direct = ['dsn' => $srv['dsn']];
$sync = sys_get_temp_dir() . '/rl-071-' . getmypid();
// Stopped however the test ends; not by the forked children's exits.
$main = getmypid();
register_shutdown_function(function () use ($main, $p, $srv, $sync) {
    if (getmypid() !== $main) { return; }
    @unlink($sync);
    rl_stop_proxy($p);
    rl_stop_redis($srv);
});

function turns(array $p): int {
    preg_match('/turns (\d+)/', rl_proxy($p, 'stats'), $m);
    return (int) $m[1];
}
function wait_until(callable $cond): void {
    $deadline = microtime(true) + 10;
    while (!$cond()) {
        if (microtime(true) > $deadline) { throw new RuntimeException('gave up waiting'); }
        usleep(2000);
    }
}
/** Runs $fn in a child process, which exits 0 when $fn returns true. */
function child(callable $fn): int {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $ok = false;
        try { $ok = $fn(); } catch (Throwable $e) { fwrite(STDERR, "child: $e\n"); }
        exit($ok ? 0 : 1);
    }
    return $pid;
}
function child_ok(int $pid): bool {
    pcntl_waitpid($pid, $status);
    return pcntl_wexitstatus($status) === 0;
}

$rows = [];
/**
 * $setup, $op, $after, twice; the round trips of the second $op are the row's (the
 * first loads scripts and opens connections). $op and $after return whether the call
 * did what the row says.
 */
$row = function (string $label, callable $op, ?callable $setup = null, ?callable $after = null) use ($p, &$rows) {
    $ok = true;
    for ($i = 0; $i < 2; $i++) {
        if ($setup) { $setup(); }
        $before = turns($p);
        $ok = $op() && $ok;
        $n = turns($p) - $before;
        if ($after) { $ok = $after() && $ok; }
    }
    $rows[$label] = $ok ? $n : "$n (the call did not do what the row says)";
};

$key = rl_key('rt');
$l = new Lock($key, 0, 10, $o);
$other = new Lock($key, 0, 10, $direct);     // another client's hold
/** Whether $cond() comes true within 2 s: an unawaited release lands a little after its call. */
function soon(callable $cond): bool {
    for ($t = microtime(true) + 2; !$cond(); usleep(1000)) {
        if (microtime(true) > $t) { return false; }
    }
    return true;
}
$free = fn() => soon(fn() => !$other->isLocked());
$hold = fn() => $l->addLock() !== false;
$heldElsewhere = fn() => $other->addLock() !== false;
$unhold = fn() => $l->releaseLock() || true;
$unholdElsewhere = fn() => $other->releaseLock();

// Lock, uncontended.
$row('new Lock()', fn() => new Lock($key, 0, 10, $o) instanceof Lock);
$row('addLock(), the lock free', $hold, null, $unhold);
$row('addLock() with $timeOut 0, the lock held elsewhere', fn() => $l->addLock() === false, $heldElsewhere, $unholdElsewhere);
$row('tryLock(), the lock free', fn() => $l->tryLock() !== false, null, $unhold);
$row('tryLock(), the lock held elsewhere', fn() => $l->tryLock() === false, $heldElsewhere, $unholdElsewhere);
$row('releaseLock()', fn() => $l->releaseLock(), $hold, $free);
$row('releaseLock(), this object holding nothing', fn() => !$l->releaseLock());
$row('releaseLock1()', fn() => $l->releaseLock1(), $hold, $free);
$row('releaseLock2()', fn() => $l->releaseLock2(), $hold, $free);
$row('forceReleaseLock()', fn() => $l->forceReleaseLock(), $heldElsewhere, $free);
$row('addReadLock()', fn() => $l->addReadLock() !== false, null, $unhold);
$row('tryReadLock()', fn() => $l->tryReadLock() !== false, null, $unhold);
$row('releaseLock() of a read hold', fn() => $l->releaseLock(), fn() => $l->addReadLock(), $free);
$row('addReadLock() on a write hold (downgrade)', fn() => $l->addReadLock() !== false, $hold, $unhold);
$row('addLock() on a read hold (upgrade)', fn() => $l->addLock() !== false, fn() => $l->addReadLock(), $unhold);
$row('extendLock()', fn() => $l->extendLock(), $hold, $unhold);
$row('isLocked()', fn() => $l->isLocked(), $hold, $unhold);
$row('isOwned()', fn() => $l->isOwned(), $hold, $unhold);
$row('getTtl()', fn() => $l->getTtl() > 0, $hold, $unhold);
$row('inspect()', fn() => $l->inspect()['mine'], $hold, $unhold);
$row('getKey()', fn() => $l->getKey() === $key);
$row('synchronized($fn)', fn() => $l->synchronized(fn() => 42) === 42, null, $free);
$x = null;
$row('the object\'s end, holding (unset, end of scope)', function () use (&$x) { $x = null; return true; },
    function () use (&$x, $key, $o) { $x = new Lock($key, 0, 10, $o); $x->addLock(); }, $free);
// Request end: a process of its own makes one call, another takes the lock and dies
// of a fatal error; the difference is the release the module's request end sends.
$php = escapeshellarg(PHP_BINARY) . ' -n -d extension=' . escapeshellarg(rl_ext());
$inProcess = function (string $code) use ($php, $p, $key): int {
    $before = turns($p);
    shell_exec("$php -r " . escapeshellarg('$l = new Lock(' . var_export($key, true) . ', 0, 10, ["dsn" => '
        . var_export($p['dsn'], true) . ']); ' . $code) . ' 2>&1');
    return turns($p) - $before;
};
for ($i = 0; $i < 2; $i++) {
    $n = $inProcess('$l->addLock(); trigger_error("boom", E_USER_ERROR);') - $inProcess('$l->isLocked();');
}
$rows['request end, holding (here after a fatal error)'] = $n . ($free() ? '' : ' (the lock was left held)');
$row('the object\'s end, holding nothing', function () use (&$x) { $x = null; return true; },
    function () use (&$x, $key, $o) { $x = new Lock($key, 0, 10, $o); });

// Semaphore, uncontended.
$skey = rl_key('rt-sem');
$s = new Semaphore($skey, 2, 0, 10, $o);
$full = new Semaphore($skey, 2, 0, 10, $direct);
$sHold = fn() => $s->acquire() !== false;
$sUnhold = fn() => $s->release() || true;
$sFree = fn() => soon(fn() => $full->available() === 2);
$row('new Semaphore()', fn() => new Semaphore($skey, 2, 0, 10, $o) instanceof Semaphore);
$row('acquire(), permits free', $sHold, null, $sUnhold);
$row('tryAcquire(), permits free', fn() => $s->tryAcquire() !== false, null, $sUnhold);
$row('tryAcquire(), no permit free', fn() => $s->tryAcquire() === false, fn() => $full->acquire(2), fn() => $full->release());
$row('release()', fn() => $s->release(), $sHold, $sFree);
$row('extend()', fn() => $s->extend(), $sHold, $sUnhold);
$row('Semaphore isOwned()', fn() => $s->isOwned(), $sHold, $sUnhold);
$row('available()', fn() => $s->available() === 1, $sHold, $sUnhold);
$row('Semaphore inspect()', fn() => count($s->inspect()['holders']) === 1, $sHold, $sUnhold);
$row('Semaphore synchronized($fn)', fn() => $s->synchronized(fn() => 42) === 42, null, $sFree);
$row('the Semaphore object\'s end, holding', function () use (&$x) { $x = null; return true; },
    function () use (&$x, $skey, $o) { $x = new Semaphore($skey, 2, 0, 10, $o); $x->acquire(); }, $sFree);

// MultiLock, uncontended: 3 keys on one server.
$mkeys = [rl_key('m1'), rl_key('m2'), rl_key('m3')];
$m = new MultiLock($mkeys, 0, 10, $o);
$mOther = new Lock($mkeys[1], 0, 10, $direct);
$mHold = fn() => $m->addLock() !== false;
$mUnhold = fn() => $m->releaseLock();
$mFree = fn() => soon(fn() => rl_cmd($srv['dsn'], 'EXISTS', ...$mkeys) === 0);
$row('new MultiLock()', fn() => new MultiLock($mkeys, 0, 10, $o) instanceof MultiLock);
$row('MultiLock addLock(), the keys free', $mHold, null, $mUnhold);
$row('MultiLock tryLock(), a key held elsewhere', fn() => $m->tryLock() === false, fn() => $mOther->addLock() !== false, fn() => $mOther->releaseLock());
$row('MultiLock releaseLock()', fn() => $m->releaseLock(), $mHold, $mFree);
$row('MultiLock extendLock()', fn() => $m->extendLock(), $mHold, $mUnhold);
$row('MultiLock isOwned()', fn() => $m->isOwned(), $mHold, $mUnhold);
$row('MultiLock getTtl()', fn() => $m->getTtl() > 0, $mHold, $mUnhold);
$row('MultiLock synchronized($fn)', fn() => $m->synchronized(fn() => 42) === 42, null, $mFree);
$row('the MultiLock object\'s end, holding', function () use (&$x) { $x = null; return true; },
    function () use (&$x, $mkeys, $o) { $x = new MultiLock($mkeys, 0, 10, $o); $x->addLock(); }, $mFree);

// The functions.
$row('redis_lock_stats()', fn() => is_array(redis_lock_stats()));
$row('redis_lock_scan(), one server, under 1000 keys', fn() => count(redis_lock_scan($o)) === 0);

// Contended: a child process holds, or waits, straight on the server; the counted
// side goes through the proxy. The child releases only once the waiter is queued.
$w = new Lock($key, 10, 10, $o);
$pid = 0;
$holdThenRelease = function () use (&$pid, $key, $direct, $sync) {
    @unlink($sync);
    $pid = child(function () use ($key, $direct, $sync) {
        $h = new Lock($key, 0, 10, $direct);
        if ($h->addLock() === false) { return false; }
        touch($sync);
        wait_until(fn() => $h->inspect()['waiters'] >= 1);
        return $h->releaseLock();
    });
    wait_until(fn() => file_exists($sync));
};
// An acquisition that finds the lock free first: the process has not waited for it lately.
$row('addLock() that waits and is handed the lock', fn() => $w->addLock() !== false,
    function () use ($w, $holdThenRelease) { $w->addLock() && $w->releaseLock(); $holdThenRelease(); },
    function () use (&$pid, $w) { return child_ok($pid) && $w->releaseLock(); });
$row('addLock() that waits again, within 1 s of its last wait', fn() => $w->addLock() !== false, $holdThenRelease,
    function () use (&$pid, $w) { return child_ok($pid) && $w->releaseLock(); });
$row('addLock() whose $timeOut runs out', fn() => (new Lock($key, 0.2, 10, $o))->addLock() === false, $heldElsewhere, $unholdElsewhere);
$waitInChild = function () use (&$pid, $key, $direct, $l, $other) {
    $l->addLock();
    $pid = child(function () use ($key, $direct) { return (new Lock($key, 10, 10, $direct))->addLock() !== false; });
    wait_until(fn() => $other->inspect()['waiters'] >= 1);
};
$row('releaseLock() that hands the lock to a waiter', fn() => $l->releaseLock(), $waitInChild, function () use (&$pid) { return child_ok($pid); });

$sw = new Semaphore($skey, 2, 10, 10, $o);
$semHoldThenRelease = function () use (&$pid, $skey, $direct, $sync) {
    @unlink($sync);
    $pid = child(function () use ($skey, $direct, $sync) {
        $h = new Semaphore($skey, 2, 0, 10, $direct);
        if ($h->acquire(2) === false) { return false; }
        touch($sync);
        wait_until(fn() => $h->inspect()['waiters'] >= 1);
        return $h->release();
    });
    wait_until(fn() => file_exists($sync));
};
// As for the lock: the first acquisition finds the permits free, so the process has not waited lately.
$row('acquire() that waits and is handed permits', fn() => $sw->acquire() !== false,
    function () use ($sw, $semHoldThenRelease) { ($t = $sw->acquire()) && $sw->release($t); $semHoldThenRelease(); },
    function () use (&$pid, $sw) { return child_ok($pid) && $sw->release(); });
$row('acquire() that waits again, within 1 s of its last wait', fn() => $sw->acquire() !== false, $semHoldThenRelease,
    function () use (&$pid, $sw) { return child_ok($pid) && $sw->release(); });
$semWaitInChild = function () use (&$pid, $skey, $direct, $s, $full) {
    $s->acquire(2);
    $pid = child(function () use ($skey, $direct) { return (new Semaphore($skey, 2, 10, 10, $direct))->acquire() !== false; });
    wait_until(fn() => $full->inspect()['waiters'] >= 1);
};
$row('release() that hands permits to a waiter', fn() => $s->release(), $semWaitInChild, function () use (&$pid) { return child_ok($pid); });

// Fencing last: a process's first getFencingToken() switches it to eager numbers
// for good. A child loads the lazy script first, so that the row counts no NOSCRIPT.
child_ok(child(function () use ($key, $direct) {
    $c = new Lock($key, 0, 10, $direct);
    return $c->addLock() !== false && is_int($c->getFencingToken()) && $c->releaseLock();
}));
$l->addLock();
$before = turns($p);
$ok = is_int($l->getFencingToken());
$rows['getFencingToken(), the first in the process'] = turns($p) - $before . ($ok ? '' : ' (no number)');
$row('getFencingToken(), asked again', fn() => is_int($l->getFencingToken()));
$l->releaseLock();
$row('addLock(), once the process has asked for a number', $hold, null, $unhold);
$row('getFencingToken(), after that addLock()', fn() => is_int($l->getFencingToken()), $hold, $unhold);

// On a server with its own compare-and-delete (docs/performance.md), the holder took
// the lock alone, and its release is DELIFEQ (DELEX) with EXISTS of the queue in one
// write; the queue is there, so the kick that hands the lock over follows, unawaited:
// a second write, which the caller does not wait for (docs/network.md says so under
// the table).
if (rl_cad($srv['dsn']) !== null) { $rows['releaseLock() that hands the lock to a waiter']--; }
foreach ($rows as $label => $n) { printf("%-60s %s\n", $label, $n); }

// docs/network.md gives the same table, in the first two columns of its section
// "Round trips".
$doc = [];
$section = '';
foreach (file(dirname(__DIR__) . '/docs/network.md', FILE_IGNORE_NEW_LINES) ?: [] as $line) {
    if (str_starts_with($line, '## ')) { $section = $line; }
    if ($section === '## Round trips' && preg_match('/^\| (.+?) \| (\d+) \|/', $line, $m)) {
        $doc[str_replace('`', '', $m[1])] = (int) $m[2];
    }
}
$drift = [];
foreach ($rows + $doc as $label => $_) {
    $says = $doc[$label] ?? 'nothing';
    $measured = $rows[$label] ?? 'not measured';
    if ((string) $says !== (string) $measured) { $drift[] = "$label: the doc says $says, measured $measured"; }
}
echo $drift ? "docs/network.md differs:\n" . implode("\n", $drift) . "\n" : "docs/network.md: the same table\n";
?>
--EXPECT--
new Lock()                                                   0
addLock(), the lock free                                     1
addLock() with $timeOut 0, the lock held elsewhere           1
tryLock(), the lock free                                     1
tryLock(), the lock held elsewhere                           1
releaseLock()                                                1
releaseLock(), this object holding nothing                   0
releaseLock1()                                               1
releaseLock2()                                               1
forceReleaseLock()                                           1
addReadLock()                                                1
tryReadLock()                                                1
releaseLock() of a read hold                                 1
addReadLock() on a write hold (downgrade)                    1
addLock() on a read hold (upgrade)                           1
extendLock()                                                 1
isLocked()                                                   1
isOwned()                                                    1
getTtl()                                                     1
inspect()                                                    1
getKey()                                                     0
synchronized($fn)                                            1
the object's end, holding (unset, end of scope)              1
request end, holding (here after a fatal error)              1
the object's end, holding nothing                            0
new Semaphore()                                              0
acquire(), permits free                                      1
tryAcquire(), permits free                                   1
tryAcquire(), no permit free                                 1
release()                                                    1
extend()                                                     1
Semaphore isOwned()                                          1
available()                                                  1
Semaphore inspect()                                          1
Semaphore synchronized($fn)                                  1
the Semaphore object's end, holding                          1
new MultiLock()                                              0
MultiLock addLock(), the keys free                           1
MultiLock tryLock(), a key held elsewhere                    1
MultiLock releaseLock()                                      1
MultiLock extendLock()                                       1
MultiLock isOwned()                                          1
MultiLock getTtl()                                           1
MultiLock synchronized($fn)                                  1
the MultiLock object's end, holding                          1
redis_lock_stats()                                           0
redis_lock_scan(), one server, under 1000 keys               2
addLock() that waits and is handed the lock                  2
addLock() that waits again, within 1 s of its last wait      1
addLock() whose $timeOut runs out                            3
releaseLock() that hands the lock to a waiter                1
acquire() that waits and is handed permits                   2
acquire() that waits again, within 1 s of its last wait      1
release() that hands permits to a waiter                     1
getFencingToken(), the first in the process                  1
getFencingToken(), asked again                               0
addLock(), once the process has asked for a number           1
getFencingToken(), after that addLock()                      0
docs/network.md: the same table
