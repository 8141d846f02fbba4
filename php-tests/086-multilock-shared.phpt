--TEST--
MultiLock with read keys (option "read"): a read key is shared with other readers (Lock read shares and other MultiLocks), excludes writers, waits behind a queued writer, is handed over by a writer's release together with the other keys, and gives no fencing number; bad "read" options are refused
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$o = ['dsn' => $dsn];
$base = rl_key('ms');
[$a, $b, $c] = ["$base:a", "$base:b", "$base:c"];
$readers = fn($k) => count(rl_cmd($dsn, 'ZRANGE', "{{$k}}:readers", '0', '-1'));

// b shared with a Lock's read share.
$r = new Lock($b, 0, 5, $o);
$r->addReadLock();
$m = new MultiLock([$a, $b], 0, 5, $o + ['read' => [$b]]);
$t = $m->tryLock();
echo "taken beside a reader: ", json_encode(is_string($t)), ", a holds the token ", json_encode(rl_cmd($dsn, 'GET', $a) === $t),
    ", b in read mode ", json_encode(rl_cmd($dsn, 'GET', $b) === ''), " with ", $readers($b), " readers\n";
$m2 = new MultiLock([$b, $c], 0, 5, $o + ['read' => [$b]]);
echo "a second MultiLock reading b: ", json_encode(is_string($m2->tryLock())), ", readers ", $readers($b), "\n";
$w = new Lock($b, 0, 5, $o);
echo "a writer on b: ", var_export($w->tryLock(), true), "\n";
echo "owned ", json_encode($m->isOwned()), ", ttl ", $m->getTtl() > 4 ? 'about 5' : $m->getTtl(), ", extend ", json_encode($m->extendLock(null, 20)),
    ", fencing: a ", rl_is_fence($m->getFencingToken()[$a]) ? 'a number' : 'none', ", b ", json_encode($m->getFencingToken()[$b]), "\n";
$i = $m->inspect();
echo "inspect: mine ", json_encode($i['mine']), ", states ", implode(',', array_column($i['keys'], 'state')), ", b's readers ", $i['keys'][$b]['readers'], "\n";
var_dump($m->releaseLock());
echo "after its release: a ", json_encode(rl_cmd($dsn, 'EXISTS', $a)), ", b's readers ", $readers($b), "\n";
$m2->releaseLock();
$r->releaseLock();
echo "all released: b ", rl_cmd($dsn, 'EXISTS', $b), ", readers key ", rl_cmd($dsn, 'EXISTS', "{{$b}}:readers"), "\n";

// A reader queues behind a waiting writer: b read by R, a writer waiting for it.
$r->addReadLock();
$pid = pcntl_fork();
if ($pid === 0) { $wl = new Lock($b, 3, 5, ['dsn' => $dsn]); exit($wl->addLock() !== false && $wl->releaseLock() ? 0 : 1); }
for ($k = 0; $k < 100 && rl_cmd($dsn, 'LLEN', "{{$b}}:queue") < 1; $k++) { usleep(20000); }
echo "behind a queued writer: ", var_export($m->tryLock(), true), "\n";
$r->releaseLock();
pcntl_waitpid($pid, $st);
echo "the writer got it and released: exit ", pcntl_wexitstatus($st), "\n";

// Handed over by a writer's release: a held by a Lock, b read by another Lock.
$wa = new Lock($a, 0, 5, $o);
$ta = $wa->addLock();
$r->addReadLock();
$pid = pcntl_fork();
if ($pid === 0) { usleep(300000); exit((new Lock($a, 0, 5, ['dsn' => $dsn]))->releaseLock($ta) ? 0 : 1); }
$mw = new MultiLock([$a, $b], 3, 5, $o + ['read' => [$b]]);
$s = microtime(true);
$t = $mw->addLock();
$took = microtime(true) - $s;
pcntl_waitpid($pid, $st);
echo "handed over with a: ", json_encode(is_string($t) && $mw->isOwned()), ", in ", $took >= 0.25 && $took < 0.8 ? '0.3 s' : "$took s", ", b's readers ", $readers($b), "\n";
$mw->releaseLock();
$r->releaseLock();

foreach ([[['read' => ['nope']], 'ValueError'], [['read' => 'x'], 'TypeError'], [['read' => [$b], 'servers' => [$dsn, $dsn, $dsn]], 'ValueError']] as [$opt, $want]) {
    try { new MultiLock([$a, $b], 0, 5, $opt + $o); echo "no error\n"; }
    catch (Throwable $e) { echo get_class($e) === $want ? "$want: " : 'WRONG ' . get_class($e) . ': ', $e->getMessage(), "\n"; }
}
?>
--EXPECTF--
taken beside a reader: true, a holds the token true, b in read mode true with 2 readers
a second MultiLock reading b: true, readers 3
a writer on b: false
owned true, ttl about 5, extend true, fencing: a a number, b null
inspect: mine true, states write,read, b's readers 3
bool(true)
after its release: a 0, b's readers 2
all released: b 0, readers key 0
behind a queued writer: false
the writer got it and released: exit 0
handed over with a: true, in 0.3 s, b's readers 2
ValueError: MultiLock::__construct(): option "read" must name keys of Argument #1 ($keys); "nope" is not one
TypeError: MultiLock::__construct(): option "read" must be a list of keys, %s given
ValueError: MultiLock::__construct(): option "read": shared locks need one server, Sentinel or Cluster; Redlock ("servers") keeps no readers' leases on a majority
