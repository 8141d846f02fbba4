--TEST--
Waits an event loop drives leave nothing behind and work for every kind and topology: a cancelled handle (its stream readable after, for a loop still watching it), one whose deadline passed (false), a dropped one, one whose object went away and one alive at request end (a php process that exits mid-wait) leave no queue entry, and a grant that came before the cancel is released; a second wait on a busy object, or of a token already waited for in the thread, is refused; result() before the end throws Error; Semaphore, MultiLock and read locks wait the same way, and so do a Cluster (three masters, keys on each) and a Redlock quorum (five servers, polled: no socket to watch)
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/../docs/examples/fibers.php';
$dsn = rl_dsn();
$opts = ['dsn' => $dsn, 'fair' => true] + RL_PATIENT;
$k = rl_key('ends');
$holder = new Lock($k, 0, 10, $opts);
$t = $holder->addLock();
// The keys of its queue ({key}:queue…): none once nobody waits.
$qkeys = fn() => count(array_filter((array) rl_cmd($dsn, 'KEYS', "*$k*"), fn($x) => $x !== $k));

// Cancelled: its entry leaves the queue; result() is false after.
$a = new Lock($k, 10, 10, $opts);
$w = $a->addLockAsync();
echo "pending: ", var_export(!$w->poll(), true), ", queue keys: ", $qkeys() > 0 ? 'some' : 'none', "\n";
try { $w->result(); } catch (Error $e) { echo get_class($e), ": result() before the end\n"; }
try { $a->addLockAsync(); } catch (ValueError $e) { echo "second wait on the object: ValueError\n"; }
try { $a->addLock(); } catch (ValueError $e) { echo "blocking wait on the object meanwhile: ValueError\n"; }
$s = $w->stream();
$r = [$s]; $x = $y = null;
$before = stream_select($r, $x, $y, 0, 50000);
$w->cancel();
$r = [$s];
echo "cancelled: ", var_export($w->result(), true), ", queue keys: ", $qkeys(), ", its stream readable before: $before, after: ", stream_select($r, $x, $y, 0, 0), "\n";
// The deadline: false, and nothing left queued.
$short = new Lock($k, 0.3, 10, $opts);
$t0 = microtime(true);
$dl = rl_run_fibers(['w' => fn() => rl_await($short->addLockAsync())])['w'];
echo "deadline: ", var_export($dl, true), " after ", microtime(true) - $t0 >= 0.29 ? 'its timeOut' : 'too soon', ", queue keys: ", $qkeys(), "\n";
// Dropped.
$w = $a->addLockAsync();
unset($w);
echo "dropped: queue keys: ", $qkeys(), "\n";
// Its object gone first (the handle keeps it alive: unset both, the handle last).
$b = new Lock($k, 10, 10, $opts);
$w = $b->addLockAsync();
unset($b);
$w = null;
echo "object and handle gone: queue keys: ", $qkeys(), "\n";
// One token per thread.
$c2 = new Lock($k, 10, 10, $opts);
$w1 = $c2->addLockAsync('shared-token');
try { (new Lock($k, 10, 10, $opts))->addLockAsync('shared-token'); } catch (ValueError $e) { echo "token waited for twice: ValueError\n"; }
$w1->cancel();
// A grant that comes before the cancel is read is released by it.
$d = new Lock($k, 10, 10, $opts);
$w = $d->addLockAsync();
$holder->releaseLock($t);      // hands the lock to $d's entry
usleep(20000);
$w->cancel();
echo "granted, then cancelled: held by anyone: ", var_export($holder->isLocked(), true), ", queue keys: ", $qkeys(), "\n";
$t = $holder->addLock();
// Request end: a php process that exits mid-wait.
$ext = rl_ext();
$code = '$l = new Lock(' . var_export($k, true) . ', 10, 10, ' . var_export($opts, true) . '); $w = $l->addLockAsync(); echo $w->poll() ? "done" : "pending"; exit(0);';
echo "child: ", shell_exec(PHP_BINARY . ' -n -d extension=' . escapeshellarg($ext) . ' -r ' . escapeshellarg($code)), ", queue keys after it: ", $qkeys(), "\n";
$holder->releaseLock($t);

// Every kind, in fibers.
$sk = rl_key('sem');
$s0 = new Semaphore($sk, 2, 0, 10, $opts);
$st = $s0->acquire(2);
$mk = [rl_key('m1'), rl_key('m2')];
$m0 = new Lock($mk[1], 0, 10, $opts);
$mt = $m0->addLock();
$rk = rl_key('rw');
$r0 = new Lock($rk, 0, 10, $opts);
$rt = $r0->addLock();
$got = rl_run_fibers([
    'sem' => fn() => strlen((string) rl_await((new Semaphore($sk, 2, 5, 10, $opts))->acquireAsync(1))),
    'multi' => fn() => strlen((string) rl_await((new MultiLock($mk, 5, 10, $opts))->addLockAsync())),
    'read1' => fn() => strlen((string) rl_await((new Lock($rk, 5, 10, $opts))->addReadLockAsync())),
    'read2' => fn() => strlen((string) rl_await((new Lock($rk, 5, 10, $opts))->addReadLockAsync())),
    'release' => function () use ($s0, $st, $m0, $mt, $r0, $rt) {
        rl_fiber_sleep(0.1);
        $s0->release($st);
        $m0->releaseLock($mt);
        $r0->releaseLock($rt);
        return 0;
    },
]);
ksort($got);
echo "kinds: ", json_encode($got), "\n";

// A Cluster: keys on every master, contended, in fibers.
$cl = rl_start_cluster();
try {
    $copts = ['cluster' => $cl['seeds']] + RL_PATIENT;
    $ck = [];
    foreach (['a', 'b', 'c', 'd', 'e', 'f'] as $x) { $ck[] = rl_key("cl$x"); }
    $masters = count(array_unique(array_map(fn($x) => rl_cluster_master_of($cl['seeds'][0], $x), $ck)));
    $fns = [];
    $n = 0;
    foreach ($ck as $i => $x) {
        for ($f = 0; $f < 3; $f++) {
            $fns["c$i-$f"] = function () use ($x, $copts, &$n) {
                $l = new Lock($x, 5, 10, $copts);
                for ($j = 0; $j < 3; $j++) {
                    $t = rl_await($l->addLockAsync());
                    if ($t === false) { return false; }
                    rl_fiber_sleep(0.005);
                    $l->releaseLock($t);
                    $n++;
                }
                return true;
            };
        }
    }
    $r = rl_run_fibers($fns);
    echo "cluster: ", $masters > 1 ? 'several masters' : 'one master', ", ", count(array_filter($r)), " of ", count($r), " fibers done, $n holds\n";
} finally {
    rl_stop_cluster($cl);
}

// A Redlock quorum: no queue, no socket: the timer alone wakes the polls.
$nodes = rl_start_many(5);
try {
    $ropts = ['servers' => array_column($nodes, 'dsn')] + RL_PATIENT;
    $rk = rl_key('redlock');
    $h = new Lock($rk, 0, 10, $ropts);
    $ht = $h->addLock();
    $r = rl_run_fibers([
        'wait' => function () use ($rk, $ropts) {
            $t0 = microtime(true);
            $t = rl_await((new Lock($rk, 3, 10, $ropts))->addLockAsync());
            return [strlen((string) $t), microtime(true) - $t0 >= 0.15];
        },
        'release' => function () use ($h, $ht) { rl_fiber_sleep(0.2); return $h->releaseLock($ht); },
    ]);
    echo "redlock: ", json_encode($r['wait']), ", released: ", var_export($r['release'], true), "\n";
} finally {
    foreach ($nodes as $node) { rl_stop_redis($node); }
}
--EXPECT--
pending: true, queue keys: some
Error: result() before the end
second wait on the object: ValueError
blocking wait on the object meanwhile: ValueError
cancelled: false, queue keys: 0, its stream readable before: 0, after: 1
deadline: false after its timeOut, queue keys: 0
dropped: queue keys: 0
object and handle gone: queue keys: 0
token waited for twice: ValueError
granted, then cancelled: held by anyone: false, queue keys: 0
child: pending, queue keys after it: 0
kinds: {"multi":32,"read1":32,"read2":32,"release":0,"sem":32}
cluster: several masters, 18 of 18 fibers done, 54 holds
redlock: [32,true], released: true
