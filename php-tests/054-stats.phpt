--TEST--
redis_lock_stats(): the process's counters after a scripted sequence (an uncontended cycle, a wait handed over, a timeout, a lost lease, renewals, errors), reset, per process (a forked child counts from zero), and shown by phpinfo()
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('stats');
$o = ['dsn' => $dsn];
$counts = fn() => array_filter(redis_lock_stats(), 'is_int');
// The children hold until the step they stand for is seen (10 s at most), and the
// parent waits for them to hold: no fixed sleep that a busy machine can outlast.
$until = function (callable $seen) {
    $deadline = microtime(true) + 10;
    while (!$seen() && microtime(true) < $deadline) { usleep(2000); }
};
$show = function (array $want) {
    $s = redis_lock_stats();
    $line = [];
    foreach ($want as $name) { $line[] = "$name=" . $s[$name]; }
    echo implode(' ', $line), "\n";
};
echo "names: ", implode(',', array_keys(redis_lock_stats())), "\n";
var_dump(array_sum(redis_lock_stats()) == 0);

// An uncontended cycle: one connection, one acquisition, one release.
$l = new Lock($key, 0, 10, $o);
$l->addLock();
$l->releaseLock();
$show(['acquired', 'released', 'contended', 'connects', 'errors']);

// A wait that a release ends: the holder is another process (which counts from zero).
$pid = pcntl_fork();
if ($pid === 0) {
    $zero = array_sum(redis_lock_stats()) == 0;
    $h = new Lock($key, 0, 10, $o);
    $h->addLock();
    // Released 0.15 s after the parent queued: its wait is 0.15 s and a wake-up.
    $until(fn() => rl_cmd($dsn, 'LLEN', "{{$key}}:queue") > 0);
    usleep(150000);
    $h->releaseLock();
    exit($zero ? 0 : 1);
}
$until(fn() => rl_cmd($dsn, 'EXISTS', $key));
$w = new Lock($key, 3, 10, $o);
$w->addLock();
pcntl_waitpid($pid, $st);
echo "child counted from zero: ", pcntl_wexitstatus($st) === 0 ? 'yes' : 'no', "\n";
$w->releaseLock();
$show(['acquired', 'contended', 'handed_over', 'timeouts', 'released', 'stale']);   // a hand-over in time: not stale
$s = redis_lock_stats();
var_dump($s['wait_seconds_total'] > 0.1 && $s['wait_seconds_total'] < 1, $s['wait_seconds_max'] === $s['wait_seconds_total']);

// A wait that gives up.
$pid = pcntl_fork();
if ($pid === 0) { $h = new Lock($key, 0, 10, $o); $h->addLock(); $until(fn() => rl_cmd($dsn, 'EXISTS', "$key:gave-up")); exit(0); }
$until(fn() => rl_cmd($dsn, 'EXISTS', $key));
var_dump((new Lock($key, 0.2, 10, $o))->addLock());
rl_cmd($dsn, 'SET', "$key:gave-up", '1');
pcntl_waitpid($pid, $st);
$show(['acquired', 'contended', 'timeouts', 'handed_over']);
$s = redis_lock_stats();
var_dump($s['wait_seconds_max'] >= 0.19 && $s['wait_seconds_max'] < 1);

// Renewals: extendLock(), and the watchdog's.
$e = new Lock($key, 0, 10, $o);
$e->addLock();
$e->extendLock();
$show(['renewals']);
$e->releaseLock();
// A 0.6 s lease, renewed every 0.2 s, held until the watchdog has renewed it 3 times
// (5 s at most): extendLock()'s 1 stays 1 without a watchdog.
$r = new Lock($key, 0, 0.6, $o + ['auto_renew' => true]);
$r->addLock();
$until(fn() => redis_lock_stats()['renewals'] >= 4);
$r->releaseLock();
$s = redis_lock_stats();
echo "watchdog renewed: ", $s['renewals'] >= 4 ? 'yes' : "no ({$s['renewals']})", "\n";

// A lease that ran out under synchronized(), taken meanwhile by another process.
$pid = pcntl_fork();
// The other process queues once the lease is held, takes the lock when it runs out,
// and keeps it until the work has ended; the work runs until it has the lock.
if ($pid === 0) {
    $until(fn() => rl_cmd($dsn, 'EXISTS', $key));
    $c = new Lock($key, 5, 10, $o);
    $t = $c->addLock();
    rl_cmd($dsn, 'SET', "$key:taken", '1');
    $until(fn() => rl_cmd($dsn, 'EXISTS', "$key:work-done"));
    exit($t === false ? 1 : 0);
}
try {
    (new Lock($key, 0, 0.2, $o))->synchronized(function () use ($until, $dsn, $key) { usleep(300000); $until(fn() => rl_cmd($dsn, 'EXISTS', "$key:taken")); });
} catch (LockLostException $x) {
    echo get_class($x), "\n";
}
rl_cmd($dsn, 'SET', "$key:work-done", '1');
pcntl_waitpid($pid, $st);
$show(['lost', 'errors']);

// Errors: Redis trouble counts, a bad argument does not.
try { new Lock('', 0, 10, $o); } catch (ValueError $x) { echo "ValueError\n"; }
try { (new Lock($key, 0, 10, ['dsn' => 'redis://127.0.0.1:' . rl_free_port(), 'connect_timeout' => 0.2]))->addLock(); } catch (LockConnectionException $x) { echo "LockConnectionException\n"; }
$show(['errors', 'connects']);

// phpinfo() shows them.
ob_start();
phpinfo(INFO_MODULES);
$info = ob_get_clean();
var_dump((bool) preg_match('/^acquired => ' . redis_lock_stats()['acquired'] . '$/m', $info), (bool) preg_match('/^wait_seconds_max => 0\.\d{6}$/m', $info));

// A reset returns the figures, then starts again from zero.
$before = redis_lock_stats(true);
var_dump($before['acquired'] > 0, array_sum(redis_lock_stats()) == 0);
$l->addLock();
$l->releaseLock();
$show(['acquired', 'released', 'connects']);
?>
--EXPECT--
names: acquired,contended,timeouts,wait_seconds_total,wait_seconds_max,handed_over,released,renewals,lost,errors,connects,stale,not_durable,evicting_servers,cad_releases,cad_renewals,cad_kicks,durable_acks
bool(true)
acquired=1 released=1 contended=0 connects=1 errors=0
child counted from zero: yes
acquired=2 contended=1 handed_over=1 timeouts=0 released=2 stale=0
bool(true)
bool(true)
bool(false)
acquired=2 contended=2 timeouts=1 handed_over=1
bool(true)
renewals=1
watchdog renewed: yes
LockLostException
lost=1 errors=1
ValueError
LockConnectionException
errors=2 connects=2
bool(true)
bool(true)
bool(true)
bool(true)
acquired=1 released=1 connects=0
