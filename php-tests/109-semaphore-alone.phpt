--TEST--
A Semaphore that nobody holds is taken without a script: SET NX PX of '<permits>:<weight>:<token>' in its holders' key, released by a small look at it (a token one byte apart releases nothing); the next acquisition, renewal or count turns it into the hash with its lease kept; a waiter queued before it is handed the permits its release frees, in the same step; fair mode and owner_info take the script; a process that found the semaphore held by others goes straight to the script for a second; listings and the CLI see it as a semaphore
--EXTENSIONS--
pcntl
posix
--FILE--
<?php
require __DIR__ . '/_cli.inc';
// A server of its own: the checks count its commands.
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$o = ['dsn' => $dsn];
$raw = fn(string ...$a) => rl_cmd($dsn, ...$a);
$holders = fn(string $k) => '{' . $k . '}:readers';
/** Calls of each command since the last look. */
$last = [];
$ran = function () use ($raw, &$last): array {
    preg_match_all('/^cmdstat_(\w+):calls=(\d+)/m', $raw('INFO', 'commandstats'), $m, PREG_SET_ORDER);
    $now = [];
    foreach ($m as [, $name, $calls]) { $now[$name] = (int) $calls; }
    $d = [];
    foreach ($now as $name => $calls) {
        if ($name === 'info') { continue; }
        if (($n = $calls - ($last[$name] ?? 0)) > 0) { $d[$name] = $n; }
    }
    $last = $now;
    ksort($d);
    return $d;
};
$show = fn(array $d) => implode(' ', array_map(fn($k, $v) => "$k=$v", array_keys($d), $d));
// What the client sent (a script's own commands are counted too, and left out here).
$sent = fn(array $d) => $show(array_intersect_key($d, ['set' => 1, 'evalsha' => 1, 'eval' => 1]));

try {
    // Every script loaded and the connection made before anything is counted.
    $w = new Semaphore('warm', 3, 0, 10, $o + ['fair' => true]);
    $w->release($w->acquire(1));
    echo "== alone\n";
    $k = 'alone';
    $s = new Semaphore($k, 3, 0, 10, $o);
    $s->available();
    $ran();
    $t = $s->acquire(2);
    echo "acquire sent: ", $sent($ran()), "\n";
    echo "holders' key: ", $raw('TYPE', $holders($k)), ", its value is 3:2:<token>: ", var_export($raw('GET', $holders($k)) === "3:2:$t", true),
        ", its lease 9-10 s: ", var_export(($p = $raw('PTTL', $holders($k))) > 9000 && $p <= 10000, true), ", own key: ", $raw('EXISTS', $k), "\n";
    $i = $s->inspect();
    echo "inspect: permits {$i['permits']}, available {$i['available']}, holders ", count($i['holders']), " (weight {$i['holders'][0]['weight']}, ttl ", $i['holders'][0]['ttl'] > 9 ? 'over 9 s' : $i['holders'][0]['ttl'], "), waiters {$i['waiters']}\n";
    $ran();
    foreach ([$t . '!', substr($t, 0, -1), strtoupper($t) === $t ? strtolower($t) : strtoupper($t)] as $other) {
        echo "release(a token one byte apart): ", var_export($s->release($other), true), "\n";
    }
    $d = $ran();
    echo "kept as it was: ", var_export($raw('GET', $holders($k)) === "3:2:$t", true), ", ran: ", $show($d), "\n";
    $ran();
    echo "release(own): ", var_export($s->release($t), true), ", ran: ", $show($ran()), ", keys left: ", $raw('EXISTS', $k, $holders($k)), "\n";
    echo "release(own) again: ", var_export($s->release($t), true), "\n";

    echo "== turned into the hash by the next\n";
    $t = $s->acquire(1);
    $pttl = $raw('PTTL', $holders($k));
    $codes = rl_fork(1, function () use ($k, $o) {
        $b = new Semaphore($k, 3, 0, 10, $o);
        $u = $b->acquire(2);
        return is_string($u) && $b->release($u) ? 0 : 1;
    });
    echo "another process took 2 beside it and released them: ", $codes[0] === 0 ? 'yes' : "no ({$codes[0]})", "\n";
    echo "holders' key: ", $raw('TYPE', $holders($k)), ", own key: ", $raw('TYPE', $k), ", lease kept: ", var_export(abs($raw('PTTL', $k) - $pttl) < 2000 && $raw('PTTL', $k) <= $pttl, true), "\n";
    echo "available: ", $s->available(), ", isOwned: ", var_export($s->isOwned(), true), "\n";
    echo "release(own): ", var_export($s->release($t), true), ", keys left: ", $raw('EXISTS', $k, $holders($k)), "\n";

    echo "== renewed: turned into the hash, the new lease\n";
    $t = $s->acquire(1);
    echo "extend to 20 s: ", var_export($s->extend($t, 20), true), ", holders' key: ", $raw('TYPE', $holders($k)), ", lease over 19 s: ", var_export($raw('PTTL', $k) > 19000, true), "\n";
    echo "release: ", var_export($s->release($t), true), ", keys left: ", $raw('EXISTS', $k, $holders($k)), "\n";

    echo "== another number of permits\n";
    $t = $s->acquire(1);
    try {
        (new Semaphore($k, 5, 0, 10, $o))->acquire(1);
        echo "no error\n";
    } catch (LockException $e) {
        echo get_class($e), ": ", $e->getMessage(), "\n";
    }
    echo "the hold: ", var_export($s->isOwned(), true), ", release: ", var_export($s->release($t), true), "\n";
    usleep(1100000); // past this process's note that others held it (retake::shared_lately)

    echo "== no lease\n";
    $n = new Semaphore('forever', 2, 0, INF, $o);
    $t = $n->acquire(1);
    echo "holders' key: ", $raw('TYPE', $holders('forever')), ", PTTL ", $raw('PTTL', $holders('forever')), ", inspect ttl: ", $n->inspect()['holders'][0]['ttl'], "\n";
    echo "release: ", var_export($n->release($t), true), ", keys left: ", $raw('EXISTS', 'forever', $holders('forever')), "\n";

    echo "== seen as a semaphore\n";
    $t = $s->acquire(1);
    $found = fn(string $pattern) => implode(',', array_map(fn($e) => "{$e['key']}:{$e['kind']}", redis_lock_scan($o, $pattern)));
    echo "redis_lock_scan('alone'): ", $found('alone'), "; ('al*'): ", $found('al*'), "; ('*'): ", $found('*'), "; ('x*'): '", $found('x*'), "'\n";
    // A Lock of the same name sees no lock (its key is the semaphore's own, absent): the
    // tool looks again, as a semaphore.
    echo "Lock::inspect(): ", (new Lock($k, 0, 10, $o))->inspect()['state'], "\n";
    $r = rl_cli(['--dsn', $dsn, 'inspect', $k]);
    echo "redis-lock inspect: exit {$r['rc']}, ", preg_match('/semaphore/', $r['out']) ? 'a semaphore' : $r['out'] . $r['err'], "\n";
    echo "still alone after all that: ", $raw('TYPE', $holders($k)), "; release: ", var_export($s->release($t), true), "\n";

    echo "== a waiter queued before it was taken\n";
    $a = new Semaphore('q', 1, 0, 0.5, $o);
    $ta = $a->acquire(1);
    $pipe = sys_get_temp_dir() . '/rl109-' . getmypid();
    @unlink($pipe);
    $pid = pcntl_fork();
    if ($pid === 0) {
        $b = new Semaphore('q', 1, 5, 10, $o);
        $u = $b->acquire(1);
        file_put_contents($pipe, is_string($u) ? 'acquired' : 'not acquired');
        exit(0);
    }
    $deadline = microtime(true) + 5;
    while ($a->inspect()['waiters'] < 1 && microtime(true) < $deadline) { usleep(5000); }
    posix_kill($pid, SIGSTOP);
    echo "queued, then stopped: ", $a->inspect()['waiters'], " waiter\n";
    usleep(700000); // the first hold's lease ends; the queue stays
    echo "after the lease: keys ", $raw('EXISTS', 'q', $holders('q')), ", queue ", $raw('LLEN', '{q}:queue'), "\n";
    $c = new Semaphore('q', 1, 0, 10, $o);
    $tc = $c->acquire(1);
    echo "taken alone past the queue: ", $raw('TYPE', $holders('q')), "\n";
    echo "release: ", var_export($c->release($tc), true), "; now held by the waiter: ", count($c->inspect()['holders']), " holder, queue ", $raw('LLEN', '{q}:queue'), "\n";
    posix_kill($pid, SIGCONT);
    pcntl_waitpid($pid, $st);
    echo "the waiter: ", @file_get_contents($pipe), "\n";
    @unlink($pipe);
    echo "the first hold's release, after its lease: ", var_export($a->release($ta), true), "\n";

    echo "== the script where it must\n";
    foreach (['fair' => ['fair' => true], 'owner_info' => ['owner_info' => true]] as $what => $opt) {
        $f = new Semaphore("m-$what", 2, 0, 10, $o + $opt);
        $t = $f->acquire(1);
        echo "$what: holders' key ", $raw('TYPE', $holders("m-$what")), ", release ", var_export($f->release($t), true), "\n";
    }

    echo "== held by others lately: straight to the script\n";
    $pid = pcntl_fork();
    if ($pid === 0) {
        $h = new Semaphore('shared', 4, 0, 10, $o);
        $u = $h->acquire(1);
        file_put_contents($pipe, 'held');
        usleep(1500000);
        exit($h->release($u) ? 0 : 1);
    }
    $deadline = microtime(true) + 5;
    while (@file_get_contents($pipe) !== 'held' && microtime(true) < $deadline) { usleep(5000); }
    $sh = new Semaphore('shared', 4, 0, 10, $o);
    $ran();
    $t = $sh->acquire(1);
    echo "first: ", $sent($ran()), "; ";
    $sh->release($t);
    $ran();
    $t = $sh->acquire(1);
    echo "next: ", $sent($ran()), "\n";
    $sh->release($t);
    pcntl_waitpid($pid, $st);
    echo "the other holder's release: ", pcntl_wexitstatus($st) === 0 ? 'true' : 'false', "\n";
    @unlink($pipe);
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
== alone
acquire sent: set=1
holders' key: string, its value is 3:2:<token>: true, its lease 9-10 s: true, own key: 0
inspect: permits 3, available 1, holders 1 (weight 2, ttl over 9 s), waiters 0
release(a token one byte apart): false
release(a token one byte apart): false
release(a token one byte apart): false
kept as it was: true, ran: evalsha=3 get=3
release(own): true, ran: del=1 evalsha=1 exists=1 get=1, keys left: 0
release(own) again: false
== turned into the hash by the next
another process took 2 beside it and released them: yes
holders' key: zset, own key: hash, lease kept: true
available: 2, isOwned: true
release(own): true, keys left: 0
== renewed: turned into the hash, the new lease
extend to 20 s: true, holders' key: zset, lease over 19 s: true
release: true, keys left: 0
== another number of permits
LockException: redis-lock: the semaphore "alone" is held with 3 permits, not 5: every user of a semaphore must give the same number
the hold: true, release: true
== no lease
holders' key: string, PTTL -1, inspect ttl: INF
release: true, keys left: 0
== seen as a semaphore
redis_lock_scan('alone'): alone:semaphore; ('al*'): alone:semaphore; ('*'): alone:semaphore; ('x*'): ''
Lock::inspect(): free
redis-lock inspect: exit 0, a semaphore
still alone after all that: string; release: true
== a waiter queued before it was taken
queued, then stopped: 1 waiter
after the lease: keys 0, queue 1
taken alone past the queue: string
release: true; now held by the waiter: 1 holder, queue 0
the waiter: acquired
the first hold's release, after its lease: false
== the script where it must
fair: holders' key zset, release true
owner_info: holders' key zset, release true
== held by others lately: straight to the script
first: evalsha=1 set=1; next: evalsha=1
the other holder's release: true
