--TEST--
Semaphore: 16 processes on 4 permits never exceed 4 holders; weights; a SIGKILLed holder's permits come back at its lease end; wake on release, not polling; 64 waiters cause no herd; a heavy waiter is not starved by light ones; fair mode lets nobody pass; bad input
--CONFLICTS--
all # forks 64 waiters at once, and checks a wake-up to 100 ms: alone
--EXTENSIONS--
pcntl
posix
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();                               // a server of its own, for exact counts
$dsn = $srv['dsn'];
$opts = ['dsn' => $dsn] + RL_PATIENT;
try {
    echo "== 16 processes, 4 permits\n";
    $key = rl_key('sem');
    rl_cmd($dsn, 'MSET', 'in', '0', 'max', '0');
    $enter = "local n = redis.call('incr', 'in') if n > tonumber(redis.call('get', 'max')) then redis.call('set', 'max', n) end return n";
    $codes = rl_fork(16, function () use ($key, $opts, $dsn, $enter) {
        $s = new Semaphore($key, 4, 10, 5, $opts);
        for ($i = 0; $i < 15; $i++) {
            if (!is_string($s->acquire())) { return 2; }
            rl_cmd($dsn, 'EVAL', $enter, '0');
            usleep(2000);
            rl_cmd($dsn, 'DECR', 'in');
            if (!$s->release()) { return 3; }
        }
        return 0;
    });
    echo "exits: ", implode(',', array_unique($codes)), "; most holders at once: ", rl_cmd($dsn, 'GET', 'max'), "\n";
    echo "left: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers", "{{$key}}:queue"), " keys\n";

    echo "== weights\n";
    $a = new Semaphore($key, 5, 0, 10, $opts);
    $b = new Semaphore($key, 5, 0, 10, $opts);
    $ta = $a->tryAcquire(3);
    echo "3 of 5 taken: available ", $a->available(), "; 3 more: ", var_export($b->tryAcquire(3), true), "; 2 more: ", var_export(is_string($b->tryAcquire(2)), true), ", available ", $b->available(), "\n";
    echo "isOwned: ", var_export([$a->isOwned(), $b->isOwned($ta), $b->isOwned('nobody')], true), "\n";
    echo "release: ", var_export($a->release(), true), ", again: ", var_export($a->release(), true), ", available ", $b->available(), "\n";
    echo "extend: ", var_export($b->extend(null, 30), true), ", the keys live 30 s: ", var_export(rl_cmd($dsn, 'PTTL', $key) > 25000, true), "\n";
    unset($b);
    echo "after unset: available ", $a->available(), ", keys left ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers"), "\n";

    echo "== a SIGKILLed holder\n";
    $pid = pcntl_fork();
    if ($pid === 0) {
        $s = new Semaphore($key, 2, 0, 0.5, $opts);
        $s->tryAcquire(2);
        posix_kill(posix_getpid(), SIGKILL);
    }
    pcntl_waitpid($pid, $st);
    $s = new Semaphore($key, 2, 5, 5, $opts + ['retry_delay' => 1, 'retry_delay_max' => 1]);
    echo "available while the dead holder's lease runs: ", $s->available(), "\n";
    $t0 = microtime(true);
    $got = $s->acquire(2);
    $waited = microtime(true) - $t0;
    echo "its permits come back at the lease end: ", var_export(is_string($got) && $waited > 0.3 && $waited < 1.2, true), "\n";
    $s->release();

    echo "== wake on release\n";
    $h = new Semaphore($key, 1, 0, 10, $opts);
    $h->tryAcquire();
    $file = sys_get_temp_dir() . '/rl-051-' . getmypid();
    $pid = pcntl_fork();
    if ($pid === 0) {
        $w = new Semaphore($key, 1, 5, 10, $opts + ['retry_delay' => 1, 'retry_delay_max' => 1]);
        $t = $w->acquire();
        file_put_contents($file, (string) microtime(true));
        exit(is_string($t) ? 0 : 1);
    }
    for ($i = 0; $i < 100 && !rl_cmd($dsn, 'LLEN', "{{$key}}:queue"); $i++) { usleep(10000); }
    usleep(100000);
    $released = microtime(true);
    $h->release();
    pcntl_waitpid($pid, $st);
    $woke = (float) file_get_contents($file) - $released;
    unlink($file);
    echo "woken by the release, within 100 ms while its retry_delay is 1 s: ", var_export(pcntl_wexitstatus($st) === 0 && $woke < 0.1, true), "\n";

    echo "== 64 waiters, no herd\n";
    $h->tryAcquire();
    $pids = [];
    for ($i = 0; $i < 64; $i++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $w = new Semaphore($key, 1, 30, 30, $opts);
            $t = $w->acquire();
            usleep(2000);
            exit($t !== false && $w->release() ? 0 : 1);
        }
        $pids[] = $pid;
    }
    $deadline = microtime(true) + 20;
    while (rl_cmd($dsn, 'LLEN', "{{$key}}:queue") < 64 && microtime(true) < $deadline) { usleep(10000); }
    echo "queued: ", rl_cmd($dsn, 'LLEN', "{{$key}}:queue"), "\n";
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    $h->release();
    $bad = 0;
    foreach ($pids as $pid) { pcntl_waitpid($pid, $st); $bad += pcntl_wexitstatus($st) !== 0 ? 1 : 0; }
    preg_match_all('/^cmdstat_([a-z|]+):calls=(\d+)/m', rl_cmd($dsn, 'INFO', 'commandstats'), $m);
    $stats = array_combine($m[1], array_map('intval', $m[2]));
    // 65 releases, each waking the one waiter that fits.
    printf("failed waiters %d; scripts sent per release: %s; publishes per release: %s\n", $bad,
        ($stats['evalsha'] ?? 0) / 65 <= 1.5 ? 'at most 1.5' : round(($stats['evalsha'] ?? 0) / 65, 2),
        ($stats['publish'] ?? 0) / 65 <= 1.1 ? 'at most 1.1' : round(($stats['publish'] ?? 0) / 65, 2));

    echo "== a heavy waiter among light ones\n";
    $stop = sys_get_temp_dir() . '/rl-051-stop-' . getmypid();
    $pids = [];
    for ($i = 0; $i < 6; $i++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $s = new Semaphore($key, 4, 10, 5, $opts);
            while (!file_exists($stop)) { if ($s->acquire()) { usleep(10000); $s->release(); } }
            exit(0);
        }
        $pids[] = $pid;
    }
    usleep(300000);                                    // six light holders keep the permits busy
    $heavy = new Semaphore($key, 4, 5, 5, $opts);
    $t0 = microtime(true);
    $got = $heavy->acquire(4);
    $waited = microtime(true) - $t0;
    echo "the heavy waiter got all 4: ", var_export(is_string($got) && $heavy->available() === 0, true), ", within a second: ", var_export($waited < 1.0, true), "\n";
    $heavy->release();
    touch($stop);
    foreach ($pids as $pid) { pcntl_waitpid($pid, $st); }
    unlink($stop);

    echo "== fair: nobody passes the first waiter\n";
    $fkey = rl_key('sem-fair');
    $f1 = new Semaphore($fkey, 3, 0, 10, $opts + ['fair' => true]);
    $f1->tryAcquire(2);
    $pid = pcntl_fork();
    if ($pid === 0) {
        $w = new Semaphore($fkey, 3, 5, 10, $opts + ['fair' => true]);
        exit(is_string($w->acquire(3)) ? 0 : 1);
    }
    for ($i = 0; $i < 100 && !rl_cmd($dsn, 'LLEN', "{{$fkey}}:queue"); $i++) { usleep(10000); }
    $light = new Semaphore($fkey, 3, 0, 10, $opts + ['fair' => true]);
    echo "a light newcomer that fits, fair: ", var_export($light->tryAcquire(1), true);
    $unfair = new Semaphore($fkey, 3, 0, 10, $opts);
    echo "; not fair, within the first waiter's patience: ", var_export(is_string($t = $unfair->tryAcquire(1)), true), "\n";
    $unfair->release();
    $f1->release();
    pcntl_waitpid($pid, $st);
    echo "the first waiter got all 3: ", var_export(pcntl_wexitstatus($st) === 0, true), "\n";

    echo "== shared with Lock: watchdog, max_hold, fork, auto_release\n";
    $r = new Semaphore($key, 2, 0, 0.3, $opts + ['auto_renew' => true]);
    $r->tryAcquire();
    usleep(1000000);
    echo "renewed past three leases: ", var_export($r->isOwned(), true), "\n";
    $pid = pcntl_fork();
    if ($pid === 0) { unset($r); exit(0); }            // a forked child's copy releases nothing
    pcntl_waitpid($pid, $st);
    echo "after a forked child's copy died: available ", $r->available(), "\n";
    $r->release();
    $cap = new Semaphore($key, 2, 0, 0.3, $opts + ['auto_renew' => true, 'max_hold' => 0.5]);
    $cap->tryAcquire();
    usleep(1200000);
    echo "max_hold ends the renewals: ", var_export($cap->isOwned(), true), ", available ", $cap->available(), "\n";
    $kept = new Semaphore($key, 2, 0, 30, $opts + ['auto_release' => false]);
    $tk = $kept->tryAcquire(2);
    unset($kept);
    echo "auto_release off, after unset: available ", (new Semaphore($key, 2, 0, 30, $opts))->available(),
        "; released by token elsewhere: ", var_export((new Semaphore($key, 2, 0, 30, $opts))->release($tk), true), "\n";

    echo "== synchronized\n";
    $sy = new Semaphore($key, 3, 0, 10, $opts);
    echo "returns: ", $sy->synchronized(fn() => "ran with " . $sy->available() . " free", 2), "; after: ", $sy->available(), " free\n";
    try { $sy->synchronized(function () { throw new RuntimeException('boom'); }, 3); }
    catch (RuntimeException $e) { echo "rethrown: ", $e->getMessage(), "; released: ", $sy->available(), " free\n"; }
    $busy = new Semaphore($key, 3, 0, 10, $opts);
    $busy->tryAcquire(3);
    try { $sy->synchronized(fn() => 1); echo "ran\n"; }
    catch (LockTimeoutException $e) { echo get_class($e), ': ', str_replace($key, 'KEY', $e->getMessage()), "\n"; }
    $busy->release();

    echo "== bad input\n";
    $bad = [
        'permits 0' => fn() => new Semaphore($key, 0),
        'weight 0' => fn() => (new Semaphore($key, 3, 0, 1, $opts))->tryAcquire(0),
        'weight above permits' => fn() => (new Semaphore($key, 3, 0, 1, $opts))->acquire(4),
        'lockOut 0' => fn() => new Semaphore($key, 3, 0, 0, $opts),
        'Redlock' => fn() => new Semaphore($key, 3, 0, 1, ['servers' => [$dsn, $dsn, $dsn]]),
    ];
    foreach ($bad as $name => $f) {
        try { $f(); echo "$name: no error\n"; }
        catch (ValueError $e) { echo "$name: ", get_class($e), ': ', $e->getMessage(), "\n"; }
    }
    $m = new Semaphore($key, 3, 0, 10, $opts);
    $m->tryAcquire();
    try { (new Semaphore($key, 5, 0, 10, $opts))->tryAcquire(); echo "no error\n"; }
    catch (LockException $e) { echo get_class($e), ': ', str_replace($key, 'KEY', $e->getMessage()), "\n"; }
    $m->release();
    echo "left: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers", "{{$key}}:queue", $fkey, "{{$fkey}}:readers", "{{$fkey}}:queue"), " keys\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
== 16 processes, 4 permits
exits: 0; most holders at once: 4
left: 0 keys
== weights
3 of 5 taken: available 2; 3 more: false; 2 more: true, available 0
isOwned: array (
  0 => true,
  1 => true,
  2 => false,
)
release: true, again: false, available 3
extend: true, the keys live 30 s: true
after unset: available 5, keys left 0
== a SIGKILLed holder
available while the dead holder's lease runs: 0
its permits come back at the lease end: true
== wake on release
woken by the release, within 100 ms while its retry_delay is 1 s: true
== 64 waiters, no herd
queued: 64
failed waiters 0; scripts sent per release: at most 1.5; publishes per release: at most 1.1
== a heavy waiter among light ones
the heavy waiter got all 4: true, within a second: true
== fair: nobody passes the first waiter
a light newcomer that fits, fair: false; not fair, within the first waiter's patience: true
the first waiter got all 3: true
== shared with Lock: watchdog, max_hold, fork, auto_release
renewed past three leases: true
after a forked child's copy died: available 1
max_hold ends the renewals: false, available 2
auto_release off, after unset: available 0; released by token elsewhere: true
== synchronized
returns: ran with 1 free; after: 3 free
rethrown: boom; released: 3 free
LockTimeoutException: redis-lock: could not acquire the semaphore "KEY" within 0 s
== bad input
permits 0: ValueError: Semaphore::__construct(): Argument #2 ($permits) must be between 1 and 1000000, 0 given
weight 0: ValueError: Semaphore::tryAcquire(): Argument #1 ($weight) must be between 1 and 3 (the permits), 0 given
weight above permits: ValueError: Semaphore::acquire(): Argument #1 ($weight) must be between 1 and 3 (the permits), 4 given
lockOut 0: ValueError: Semaphore::__construct(): Argument #4 ($lockOut) must be a number of seconds greater than 0 (INF: no expiry), 0 given
Redlock: ValueError: Semaphore::__construct(): a semaphore needs one server, Sentinel or Cluster; Redlock ("servers") keeps no holders' leases on a majority
LockException: redis-lock: the semaphore "KEY" is held with 3 permits, not 5: every user of a semaphore must give the same number
left: 0 keys
