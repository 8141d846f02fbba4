--TEST--
Ownership beyond one object: caller-chosen binary tokens (never re-entry), forceReleaseLock() hands over, INF leases have no TTL, auto_release => false survives its object, the request and the process
--EXTENSIONS--
pcntl
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$php = escapeshellarg(PHP_BINARY) . ' -n -d extension=' . escapeshellarg(rl_ext());

/** Forks one waiter that runs $fn; returns its pid. Its exit code says what it saw. */
function waiter(callable $fn): int {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $rc = 1;
        try { $rc = (int) $fn(); } catch (Throwable $e) { fwrite(STDERR, "waiter: $e\n"); }
        exit($rc);
    }
    return $pid;
}
function outcome(int $pid): int { pcntl_waitpid($pid, $status); return pcntl_wexitstatus($status); }
/** A waiter queues, sleeps with a 1 s retry_delay, and must be handed the lock within 200 ms of the release. */
function handed(string $key, string $dsn, ?string $token, float $lockOut = 30): int {
    return waiter(function () use ($key, $dsn, $token, $lockOut) {
        $w = new Lock($key, 5, $lockOut, ['dsn' => $dsn, 'retry_delay' => 1, 'retry_delay_max' => 1]);
        $t = $w->addLock($token);
        $got = microtime(true);
        file_put_contents(sys_get_temp_dir() . '/rl-046-' . posix_getpid(), (string) $got);
        $ok = $t !== false && ($token === null || $t === $token) && rl_cmd($dsn, 'GET', $key) === $t;
        $w->releaseLock();
        return $ok ? 0 : 1;
    });
}
function woken_after(int $pid, float $released): string {
    $rc = outcome($pid);
    $file = sys_get_temp_dir() . "/rl-046-$pid";
    $got = is_file($file) ? (float) file_get_contents($file) : INF;
    @unlink($file);
    if ($rc !== 0) { return 'failed'; }
    return $got - $released < 0.2 ? 'at the release' : sprintf('late (%.0f ms)', ($got - $released) * 1000);
}

echo "== caller tokens\n";
$key = rl_key('chosen');
$a = new Lock($key, 0, 30, ['dsn' => $dsn]);
$odd = "job:42=\0\xff\n" . str_repeat('x', 200);       // queue-entry and message separators, NUL, high bytes
var_dump($a->addLock($odd) === $odd, rl_cmd($dsn, 'GET', $key) === $odd);
$same = new Lock($key, 0, 30, ['dsn' => $dsn]);
echo "same token, tryLock: ", var_export($same->tryLock($odd), true), "\n";
$t0 = microtime(true);
echo "same token, addLock with a wait: ", var_export((new Lock($key, 0.3, 30, ['dsn' => $dsn]))->addLock($odd), true);
echo microtime(true) - $t0 >= 0.25 ? " after the whole wait\n" : " too soon\n";
var_dump($same->isOwned($odd), $same->extendLock($odd, 60) && rl_cmd($dsn, 'PTTL', $key) > 30000);
echo "another object releases it by token: ", var_export($same->releaseLock($odd), true), "\n";
echo "key left: ", rl_cmd($dsn, 'EXISTS', $key), "\n";
echo "the taker no longer holds it: ", var_export($a->isOwned(), true), "\n";
foreach (['', str_repeat('y', 257)] as $bad) {
    foreach (['addLock', 'tryLock'] as $m) {
        try { $a->$m($bad); echo "no error\n"; }
        catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
    }
}
echo "nothing taken: ", rl_cmd($dsn, 'EXISTS', $key), "\n";
var_dump($a->tryLock(str_repeat('z', 256)) === str_repeat('z', 256));
$a->releaseLock();

// A waiter with a chosen token that the holder shares waits its turn, and is handed the lock.
$key = rl_key('chosen-wait');
$h = new Lock($key, 0, 30, ['dsn' => $dsn]);
$h->addLock("shared:\0");
$pid = handed($key, $dsn, "shared:\0");
usleep(300000);
echo "waiting behind its own token: ", rl_cmd($dsn, 'LLEN', "{{$key}}:queue"), " queued\n";
$h->releaseLock();
echo "chosen token handed over: ", woken_after($pid, microtime(true)), "\n";

echo "== forceReleaseLock\n";
$key = rl_key('force');
$h = new Lock($key, 0, 30, ['dsn' => $dsn]);
$h->addLock();
$pid = handed($key, $dsn, null);
usleep(300000);
$admin = new Lock($key, 0, 30, ['dsn' => $dsn]);
$at = microtime(true);
echo "removed a holder: ", var_export($admin->forceReleaseLock(), true), "\n";
echo "the first waiter got it: ", woken_after($pid, $at), "\n";
echo "the old holder: isOwned ", var_export($h->isOwned(), true), ", releaseLock ", var_export($h->releaseLock(), true), "\n";
echo "on a free key: ", var_export($admin->forceReleaseLock(), true), "\n";
$h->addLock();
echo "by its own holder: ", var_export($h->forceReleaseLock(), true), ", then isOwned ", var_export($h->isOwned(), true), ", key left ", rl_cmd($dsn, 'EXISTS', $key), "\n";

echo "== INF leases\n";
$key = rl_key('inf');
$p = new Lock($key, 0, INF, ['dsn' => $dsn, 'auto_renew' => true]);
$t = $p->addLock();
echo "PTTL: ", rl_cmd($dsn, 'PTTL', $key), ", getTtl: ", var_export($p->getTtl(), true), "\n";
$pid = handed($key, $dsn, null, INF);
usleep(300000);
$p->releaseLock();
echo "handed over with no expiry: ", woken_after($pid, microtime(true)), "\n";
$f = new Lock($key, 0, 30, ['dsn' => $dsn]);
$f->addLock();
echo "extendLock(INF): ", var_export($f->extendLock(null, INF), true), ", PTTL ", rl_cmd($dsn, 'PTTL', $key), "\n";
echo "extendLock(2): ", var_export($f->extendLock(null, 2), true), ", PTTL in (0, 2000]: ", var_export(($x = rl_cmd($dsn, 'PTTL', $key)) > 0 && $x <= 2000, true), "\n";
$f->releaseLock();
$fenced = new Lock($key, 0, INF, ['dsn' => $dsn]);
$fenced->addLock();
$n = $fenced->getFencingToken();
$fenced->releaseLock();
$fenced->addLock();                                            // the process now takes numbers eagerly
echo "fenced, no expiry: PTTL ", rl_cmd($dsn, 'PTTL', $key), ", numbers increase: ", var_export($fenced->getFencingToken() > $n, true), "\n";
$fenced->releaseLock();
foreach ([0, -1, NAN, -INF] as $bad) {
    try { new Lock($key, 0, $bad, ['dsn' => $dsn]); echo "no error\n"; }
    catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
}
try { new Lock($key, 0, INF, ['servers' => [$dsn, $dsn, $dsn]]); echo "no error\n"; }
catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }

echo "== auto_release => false\n";
$key = rl_key('kept');
$l = new Lock($key, 0, 30, ['dsn' => $dsn, 'auto_release' => false]);
$t = $l->addLock();
unset($l);
echo "after unset: ", var_export(rl_cmd($dsn, 'GET', $key) === $t, true), "\n";
echo "released by token from another object: ", var_export((new Lock($key, 0, 30, ['dsn' => $dsn]))->releaseLock($t), true), ", key left ", rl_cmd($dsn, 'EXISTS', $key), "\n";
// Another process takes it and ends (request end, process end); this one releases it.
foreach (['option' => '["dsn" => $d, "auto_release" => false]', 'ini' => '["dsn" => $d]'] as $how => $opts) {
    $script = '$l = new Lock(' . var_export($key, true) . ', 0, 30, ' . $opts . '); $d = null; echo $l->addLock("from-a-web-request");';
    $script = '$d = ' . var_export($dsn, true) . '; ' . $script;
    $ini = $how === 'ini' ? ' -d redis_lock.auto_release=0' : '';
    $out = shell_exec("$php$ini -r " . escapeshellarg($script) . ' 2>&1');
    echo "$how: the process printed $out; key after it ended: ", var_export(rl_cmd($dsn, 'GET', $key), true), ", TTL > 25 s: ", var_export(rl_cmd($dsn, 'PTTL', $key) > 25000, true), "\n";
    echo "  released here by token: ", var_export((new Lock($key, 0, 30, ['dsn' => $dsn]))->releaseLock('from-a-web-request'), true), "\n";
}
// The watchdog keeps renewing an object-less lock while its process lives, and stops when it ends.
$script = '$l = new Lock(' . var_export($key, true) . ', 0, 0.4, ["dsn" => ' . var_export($dsn, true) . ', "auto_release" => false, "auto_renew" => true]);'
    . '$l->addLock("renewed"); unset($l); usleep(1200000); echo "slept";';
$proc = proc_open("exec $php -r " . escapeshellarg($script), [1 => ['pipe', 'w']], $pipes);
usleep(900000);
echo "0.9 s into a 0.4 s lease, the object gone, the process alive: ", var_export(rl_cmd($dsn, 'GET', $key), true), "\n";
echo "the process says: ", stream_get_contents($pipes[1]), "\n";
proc_close($proc);
usleep(600000);
echo "after the process ended and the lease ran out: ", var_export(rl_cmd($dsn, 'GET', $key), true), "\n";
?>
--EXPECTF--
== caller tokens
bool(true)
bool(true)
same token, tryLock: false
same token, addLock with a wait: false after the whole wait
bool(true)
bool(true)
another object releases it by token: true
key left: 0
the taker no longer holds it: false
ValueError: Lock::addLock(): Argument #1 ($token) must be a string of 1 to 256 bytes, 0 bytes given
ValueError: Lock::tryLock(): Argument #1 ($token) must be a string of 1 to 256 bytes, 0 bytes given
ValueError: Lock::addLock(): Argument #1 ($token) must be a string of 1 to 256 bytes, 257 bytes given
ValueError: Lock::tryLock(): Argument #1 ($token) must be a string of 1 to 256 bytes, 257 bytes given
nothing taken: 0
bool(true)
waiting behind its own token: 1 queued
chosen token handed over: at the release
== forceReleaseLock
removed a holder: true
the first waiter got it: at the release
the old holder: isOwned false, releaseLock false
on a free key: false
by its own holder: true, then isOwned false, key left 0
== INF leases
PTTL: -1, getTtl: INF
handed over with no expiry: at the release
extendLock(INF): true, PTTL -1
extendLock(2): true, PTTL in (0, 2000]: true
fenced, no expiry: PTTL -1, numbers increase: true
ValueError: Lock::__construct(): Argument #3 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), 0 given
ValueError: Lock::__construct(): Argument #3 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), -1 given
ValueError: Lock::__construct(): Argument #3 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), NaN given
ValueError: Lock::__construct(): Argument #3 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), -inf given
ValueError: Lock::__construct(): Argument #3 ($lockOut) must be finite with Redlock ("servers"): its safety rests on the lease
== auto_release => false
after unset: true
released by token from another object: true, key left 0
option: the process printed from-a-web-request; key after it ended: 'from-a-web-request', TTL > 25 s: true
  released here by token: true
ini: the process printed from-a-web-request; key after it ended: 'from-a-web-request', TTL > 25 s: true
  released here by token: true
0.9 s into a 0.4 s lease, the object gone, the process alive: 'renewed'
the process says: slept
after the process ended and the lease ran out: NULL
