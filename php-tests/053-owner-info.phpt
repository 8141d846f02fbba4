--TEST--
owner_info: who holds a lock (host, pid, SAPI, script, since), recorded with the hold from the CLI and from a real php-fpm (the request URI), handed over with the lock, listed for readers and semaphore holders, gone with the release, the lease or a waiter that gives up
--SKIPIF--
<?php
if (!function_exists('pcntl_fork')) die('skip pcntl');
if (PHP_ZTS) die('skip php-fpm here is the NTS build');
if (!is_executable('/usr/sbin/php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION)) die('skip no php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . ' (tools/env/deps.sh installs it)');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/_fpm.inc';
$dsn = rl_dsn();
$key = rl_key('owner');
$o = ['dsn' => $dsn, 'owner_info' => true];
$me = function (?array $w, int $pid = 0) {
    if ($w === null) { return 'null'; }
    $fresh = abs(microtime(true) - $w['since']) < 5;
    return sprintf('%s pid=%s sapi=%s script=%s since=%s', $w['host'] === gethostname() ? 'this host' : $w['host'],
        $w['pid'] === ($pid ?: getmypid()) ? 'mine' : $w['pid'], $w['sapi'],
        $w['script'] === $_SERVER['SCRIPT_FILENAME'] ? 'this script' : $w['script'], $fresh ? 'now' : $w['since']);
};
$ownerKey = '{' . $key . '}:owner';
// A child holds until the parent has looked (this key set), not for a fixed time
// that a busy machine can outlast between the parent's steps; 10 s at most.
$hold_until_seen = function (string $flag) use ($dsn) {
    $deadline = microtime(true) + 10;
    while (!rl_cmd($dsn, 'EXISTS', $flag) && microtime(true) < $deadline) { usleep(5000); }
};

// From the CLI; also through php.ini (ini_set here).
$a = new Lock($key, 0, 10, $o);
$t = $a->addLock();
echo "cli: ", $me($a->inspect()['owner']), "\n";
var_dump(str_contains((string) rl_cmd($dsn, 'HGET', $ownerKey, $t), (string) getmypid()));
$a->releaseLock();
echo "after the release: owner key exists: ", rl_cmd($dsn, 'EXISTS', $ownerKey), "\n";
ini_set('redis_lock.owner_info', '1');
$i = new Lock($key, 0, 10, ['dsn' => $dsn]);
$i->addLock();
echo "ini: ", $me($i->inspect()['owner']), "\n";
$i->releaseLock();
ini_set('redis_lock.owner_info', '0');
$off = new Lock($key, 0, 10, ['dsn' => $dsn]);
$off->addLock();
echo "off: ", $me($off->inspect()['owner']), ", owner key exists: ", rl_cmd($dsn, 'EXISTS', $ownerKey), "\n";
$off->releaseLock();

// Handed over: the waiter recorded itself when it queued, so the record is its own.
$a->addLock();
$pid = pcntl_fork();
if ($pid === 0) {
    $w = new Lock($key, 5, 10, $o);
    $got = $w->addLock();
    $hold_until_seen("$key:seen");
    exit($got === false ? 1 : 0);
}
$deadline = microtime(true) + 5;
while ($a->inspect()['waiters'] < 1 && microtime(true) < $deadline) { usleep(10000); }
$a->releaseLock();
// The release hands it over in the same step; the waiter holds it until seen.
echo "handed over: ", $me($a->inspect()['owner'], $pid), "\n";
rl_cmd($dsn, 'SET', "$key:seen", '1');
pcntl_waitpid($pid, $st);
echo "waiter's exit: ", pcntl_wexitstatus($st), "; owner key after its release: ", rl_cmd($dsn, 'EXISTS', $ownerKey), "\n";

// A waiter that gives up takes its record away; the holder's stays.
$a->addLock();
$pid = pcntl_fork();
if ($pid === 0) { $w = new Lock($key, 0.2, 10, $o); exit($w->addLock() === false ? 0 : 1); }
pcntl_waitpid($pid, $st);
echo "gave up: exit ", pcntl_wexitstatus($st), ", records left: ", rl_cmd($dsn, 'HLEN', $ownerKey), "\n";
$a->releaseLock();

// Readers: one record each.
$r1 = new Lock($key, 0, 10, $o); $r1->addReadLock();
$pid = pcntl_fork();
if ($pid === 0) { $r = new Lock($key, 0, 10, $o); $r->addReadLock(); $hold_until_seen("$key:read"); exit(0); }
// However slow the machine, until the child has its share (or 5 s).
$deadline = microtime(true) + 5;
while ($r1->inspect()['readers'] < 2 && microtime(true) < $deadline) { usleep(10000); }
$owners = $r1->inspect()['owner'];
// Listed by lease end: two shares taken in the same millisecond come in token order.
usort($owners, fn($a, $b) => ($a['pid'] ?? 0) === getmypid() ? -1 : 1);
echo "readers: ", count($owners), ": ", $me($owners[0]), " / ", $me($owners[1], $pid), "\n";
rl_cmd($dsn, 'SET', "$key:read", '1');
pcntl_waitpid($pid, $st);
$r1->releaseLock();

// The record expires with the lease: its TTL is no longer than the lock's, so when
// the lock's key is gone, so is the record. The lease is 1 s, not less, so that the
// first look comes inside it even on a busy machine.
$short = new Lock($key, 0, 1, $o + ['auto_release' => false]);
$short->addLock();
echo "short lease: lock pttl > 0: ", var_export(rl_cmd($dsn, 'PTTL', $key) > 0, true), ", owner pttl <= 1000: ", var_export(rl_cmd($dsn, 'PTTL', $ownerKey) <= 1000, true), "\n";
$deadline = microtime(true) + 5;
while (rl_cmd($dsn, 'EXISTS', $key) && microtime(true) < $deadline) { usleep(10000); }
echo "after the lease: lock ", rl_cmd($dsn, 'EXISTS', $key), ", owner ", rl_cmd($dsn, 'EXISTS', $ownerKey), "\n";

// A semaphore's holders.
$s = new Semaphore(rl_key('owner-sem'), 3, 0, 10, $o);
$s->acquire(2);
$h = $s->inspect()['holders'];
echo "semaphore: ", count($h), " holder, weight ", $h[0]['weight'], ", ", $me($h[0]['owner']), "\n";
$s->release();

// php-fpm: a worker takes a lock during a request; its record names the request URI.
$dir = sys_get_temp_dir() . '/rl-fpm-' . getmypid();
@mkdir($dir);
file_put_contents("$dir/take.php", '<?php $l = new Lock($_GET["key"], 0, 30, ["dsn" => $_GET["dsn"], "owner_info" => true, "auto_release" => false]); echo $l->addLock() === false ? "busy" : "took", " ", getmypid(), " ", php_sapi_name();');
[$fpm, $port] = rl_start_fpm($dir);
$fkey = rl_key('owner-fpm');
$reply = fcgi_get($port, "$dir/take.php", '/orders/42?ship=1', 'key=' . urlencode($fkey) . '&dsn=' . urlencode($dsn));
[$took, $workerPid, $sapi] = explode(' ', $reply) + [null, null, null];
echo "fpm: $took, sapi $sapi\n";
$w = (new Lock($fkey, 0, 10, ['dsn' => $dsn]))->inspect()['owner'];
echo "seen from the cli: ", $w['sapi'], " ", $w['script'], " pid ", $w['pid'] === (int) $workerPid ? "of the worker" : $w['pid'] . " (worker $workerPid)", " ", $w['host'] === gethostname() ? 'this host' : $w['host'], "\n";
(new Lock($fkey, 0, 10, ['dsn' => $dsn]))->forceReleaseLock();
proc_terminate($fpm, SIGQUIT);
proc_close($fpm);
array_map('unlink', glob("$dir/*"));
rmdir($dir);
?>
--EXPECT--
cli: this host pid=mine sapi=cli script=this script since=now
bool(true)
after the release: owner key exists: 0
ini: this host pid=mine sapi=cli script=this script since=now
off: null, owner key exists: 0
handed over: this host pid=mine sapi=cli script=this script since=now
waiter's exit: 0; owner key after its release: 0
gave up: exit 0, records left: 1
readers: 2: this host pid=mine sapi=cli script=this script since=now / this host pid=mine sapi=cli script=this script since=now
short lease: lock pttl > 0: true, owner pttl <= 1000: true
after the lease: lock 0, owner 0
semaphore: 1 holder, weight 2, this host pid=mine sapi=cli script=this script since=now
fpm: took, sapi fpm-fcgi
seen from the cli: fpm-fcgi /orders/42?ship=1 pid of the worker this host
