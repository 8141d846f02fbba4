--TEST--
Shared (read) locks: readers overlap, a writer excludes them, a waiting writer makes new readers queue, upgrade only as the sole reader, downgrade with no gap, per-reader leases on Redis's clock, releaseLock/extendLock/isOwned/getFencingToken on read holds, Redlock refused
--EXTENSIONS--
pcntl
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('rw');
$mk = fn(float $wait = 0, float $lease = 10, array $o = []) => new Lock($key, $wait, $lease, ['dsn' => $dsn] + $o);

echo "== readers and writers\n";
[$r1, $r2, $w] = [$mk(), $mk(), $mk()];
$t1 = $r1->tryReadLock();
$t2 = $r2->addReadLock();
echo "two readers: ", var_export(is_string($t1) && is_string($t2) && $t1 !== $t2, true), ", key value empty: ", var_export(rl_cmd($dsn, 'GET', $key) === '', true), ", readers: ", rl_cmd($dsn, 'ZCARD', "{{$key}}:readers"), "\n";
echo "a writer while they read: ", var_export($w->tryLock(), true), ", isLocked: ", var_export($w->isLocked(), true), "\n";
echo "isOwned: ", var_export([$r1->isOwned(), $r2->isOwned($t2), $w->isOwned($t1), $r1->isOwned('nobody')], true), "\n";
echo "fencing token of a read hold: ", var_export($r1->getFencingToken(), true), "\n";
echo "a second read lock on the same object: ", var_export($r1->tryReadLock(), true), "\n";
echo "releaseLock: ", var_export($r1->releaseLock(), true), ", again: ", var_export($r1->releaseLock(), true), ", readers: ", rl_cmd($dsn, 'ZCARD', "{{$key}}:readers"), "\n";
echo "release by token from another object: ", var_export($w->releaseLock($t2), true), "\n";
echo "free: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers"), " keys left\n";
$tw = $w->tryLock();
echo "the writer now: ", var_export(is_string($tw), true), "; a reader meanwhile: ", var_export($r1->tryReadLock(), true), "\n";
$w->releaseLock();

echo "== leases on Redis's clock\n";
$short = $mk(0, 0.3);
$long = $mk(0, 10);
$short->tryReadLock();
$tl = $long->tryReadLock();
$pttl = rl_cmd($dsn, 'PTTL', $key);
echo "the key lives as long as the longest lease: ", var_export($pttl > 9000, true), "\n";
usleep(400000);
echo "after the short lease: short owns ", var_export($short->isOwned(), true), ", long owns ", var_export($long->isOwned(), true),
    ", short's release ", var_export($short->releaseLock(), true), ", readers ", rl_cmd($dsn, 'ZCARD', "{{$key}}:readers"), "\n";
echo "extendLock(2): ", var_export($long->extendLock(null, 2), true), ", PTTL now in (0, 2000]: ", var_export(($p = rl_cmd($dsn, 'PTTL', $key)) > 0 && $p <= 2000, true), "\n";
echo "extendLock(INF): ", var_export($long->extendLock($tl, INF), true), ", PTTL ", rl_cmd($dsn, 'PTTL', $key), "\n";
$long->releaseLock();
echo "all gone: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers"), " keys left\n";

echo "== watchdog, auto-release and fork on read holds\n";
$renewed = $mk(0, 0.3, ['auto_renew' => true]);
$renewed->tryReadLock();
usleep(1000000);
echo "renewed past three leases: ", var_export($renewed->isOwned(), true), "\n";
$pid = pcntl_fork();
if ($pid === 0) { unset($renewed); exit(0); }                // a child's copy releases nothing
pcntl_waitpid($pid, $st);
echo "after a forked child's copy died: ", rl_cmd($dsn, 'ZCARD', "{{$key}}:readers"), " reader\n";
unset($renewed);
echo "after unset: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers"), " keys left\n";

echo "== upgrade and downgrade\n";
[$a, $b] = [$mk(), $mk()];
$ta = $a->tryReadLock();
$b->tryReadLock();
echo "upgrade with another reader: ", var_export($a->tryLock(), true), "; a still reads: ", var_export($a->isOwned(), true), "\n";
$b->releaseLock();
$up = $a->tryLock();
echo "upgrade as the sole reader: ", var_export($up === $ta, true), ", key holds the token: ", var_export(rl_cmd($dsn, 'GET', $key) === $ta, true), ", readers: ", rl_cmd($dsn, 'EXISTS', "{{$key}}:readers"), "\n";
echo "a reader now: ", var_export($b->tryReadLock(), true), "\n";
$down = $a->addReadLock();
echo "downgrade: same token ", var_export($down === $ta, true), ", key value empty ", var_export(rl_cmd($dsn, 'GET', $key) === '', true),
    ", readers ", rl_cmd($dsn, 'ZCARD', "{{$key}}:readers"), "; another reader joins: ", var_export(is_string($b->tryReadLock()), true), "\n";
$b->releaseLock();
$a->releaseLock();
// A waiting upgrade: the other reader's release hands it the write lock.
$b->tryReadLock();
$pid = pcntl_fork();
if ($pid === 0) { usleep(300000); $b->releaseLock(); exit(0); }
$t0 = microtime(true);
$aw = new Lock($key, 5, 10, ['dsn' => $dsn]);
$ta2 = $aw->tryReadLock();
$r = $aw->addLock();
$waited = microtime(true) - $t0;
pcntl_waitpid($pid, $st);
echo "a waiting upgrade: ", var_export($r === $ta2 && rl_cmd($dsn, 'GET', $key) === $ta2, true), ", after the other reader left: ", var_export($waited > 0.25 && $waited < 1.5, true), "\n";
$aw->releaseLock();
echo "left: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers", "{{$key}}:queue"), " keys\n";

echo "== a writer waits: new readers queue behind it\n";
$r = $mk();
$r->tryReadLock();
$pid = pcntl_fork();
if ($pid === 0) {
    $w = new Lock($key, 5, 10, ['dsn' => $dsn]);
    $t = $w->addLock();
    usleep(200000);
    $w->releaseLock();
    exit(is_string($t) ? 0 : 1);
}
for ($i = 0; $i < 100 && !rl_cmd($dsn, 'LLEN', "{{$key}}:queue"); $i++) { usleep(10000); }
echo "tryReadLock with a writer waiting: ", var_export($mk()->tryReadLock(), true), "\n";
$r->releaseLock();                                     // hands the lock to the writer
$t0 = microtime(true);
$late = $mk(5);
$tlate = $late->addReadLock();
$waited = microtime(true) - $t0;
echo "the late reader waited for the writer: ", var_export(is_string($tlate) && $waited > 0.15, true), "\n";
pcntl_waitpid($pid, $st);
echo "the writer got it: ", var_export(pcntl_wexitstatus($st) === 0, true), "\n";
$late->releaseLock();

echo "== forceReleaseLock in read mode\n";
[$f1, $f2] = [$mk(), $mk()];
$f1->tryReadLock();
$f2->tryReadLock();
echo "removed: ", var_export($mk()->forceReleaseLock(), true), ", keys left: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers"),
    ", the readers own it: ", var_export($f1->isOwned() || $f2->isOwned(), true), "\n";

echo "== bad uses\n";
try { (new Lock($key, 0, 1, ['servers' => [$dsn, $dsn, $dsn]]))->tryReadLock(); echo "no error\n"; }
catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
// Not even as a downgrade of a Redlock writer.
$rk = rl_key('rw-redlock');
$rl = new Lock($rk, 0, 5, ['servers' => [$dsn]]);
$rl->tryLock();
try { $rl->addReadLock(); echo "no error\n"; }
catch (ValueError $e) { echo get_class($e), "; the write lock kept: ", var_export($rl->isOwned(), true), "\n"; }
try { $rl->extendLock(null, INF); echo "no error\n"; }
catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
echo "Redlock forceReleaseLock: ", var_export($mk()->forceReleaseLock() === false && (new Lock($rk, 0, 5, ['servers' => [$dsn]]))->forceReleaseLock(), true),
    ", key left: ", rl_cmd($dsn, 'EXISTS', $rk), "; its holder: ", var_export($rl->releaseLock(), true), "\n";
// An upgrade keeps the reader's token: another one is refused, and nothing changes.
$u = $mk();
$tu = $u->tryReadLock();
try { $u->tryLock('another'); echo "no error\n"; }
catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "; still reading: ", var_export($u->isOwned($tu) && rl_cmd($dsn, 'GET', $key) === '', true), "\n"; }
$u->releaseLock();
echo "left: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers", "{{$key}}:queue"), " keys\n";
?>
--EXPECT--
== readers and writers
two readers: true, key value empty: true, readers: 2
a writer while they read: false, isLocked: true
isOwned: array (
  0 => true,
  1 => true,
  2 => true,
  3 => false,
)
fencing token of a read hold: NULL
a second read lock on the same object: false
releaseLock: true, again: false, readers: 1
release by token from another object: true
free: 0 keys left
the writer now: true; a reader meanwhile: false
== leases on Redis's clock
the key lives as long as the longest lease: true
after the short lease: short owns false, long owns true, short's release false, readers 1
extendLock(2): true, PTTL now in (0, 2000]: true
extendLock(INF): true, PTTL -1
all gone: 0 keys left
== watchdog, auto-release and fork on read holds
renewed past three leases: true
after a forked child's copy died: 1 reader
after unset: 0 keys left
== upgrade and downgrade
upgrade with another reader: false; a still reads: true
upgrade as the sole reader: true, key holds the token: true, readers: 0
a reader now: false
downgrade: same token true, key value empty true, readers 1; another reader joins: true
a waiting upgrade: true, after the other reader left: true
left: 0 keys
== a writer waits: new readers queue behind it
tryReadLock with a writer waiting: false
the late reader waited for the writer: true
the writer got it: true
== forceReleaseLock in read mode
removed: true, keys left: 0, the readers own it: false
== bad uses
ValueError: Lock::tryReadLock(): shared locks need one server, Sentinel or Cluster; Redlock ("servers") keeps no readers' leases on a majority
ValueError; the write lock kept: true
ValueError: Lock::extendLock(): Argument #2 ($lockOut) must be finite with Redlock ("servers"): its safety rests on the lease
Redlock forceReleaseLock: true, key left: 0; its holder: false
ValueError: Lock::tryLock(): Argument #1 ($token) must be this object's read token, or null: an upgrade keeps its token; still reading: true
left: 0 keys
