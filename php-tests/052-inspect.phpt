--TEST--
inspect(): a lock's state, lease, readers, live waiters (3 blocked processes; a killed one stops counting), fence and whether this object holds it; a semaphore's permits, holders and waiters; never a token
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('inspect');
$o = ['dsn' => $dsn];
// A fence equal to $issued (the number the test expects there) shows as "<issued>".
$show = function (array $i, ?int $issued = null) { if ($issued !== null && $i['fence'] === $issued) { $i['fence'] = '<issued>'; } $i['ttl'] = $i['ttl'] === null ? null : ($i['ttl'] === INF ? 'INF' : ($i['ttl'] > 9 && $i['ttl'] <= 10 ? '9..10' : $i['ttl'])); return json_encode($i); };
$a = new Lock($key, 0, 10, $o);
echo "free: ", $show($a->inspect()), "\n";
$t = $a->addLock();
echo "write: ", $show($a->inspect()), "\n";
$b = new Lock($key, 0, 10, $o);
echo "seen by another object: ", $show($b->inspect()), "\n";
var_dump(str_contains(serialize($a->inspect()), $t));

// Three processes block in addLock(); the queue counts them while they listen.
function wait_for_waiters(Lock $l, int $n): int {
    $deadline = microtime(true) + 5;
    do { $w = $l->inspect()['waiters']; if ($w === $n) { return $w; } usleep(20000); } while (microtime(true) < $deadline);
    return $w;
}
$pids = [];
for ($i = 0; $i < 3; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $w = new Lock($key, 8, 10, $o);
        $got = $w->addLock();
        usleep(100000);
        exit($got !== false && $w->releaseLock() ? 0 : 1);
    }
    $pids[] = $pid;
}
echo "waiters: ", wait_for_waiters($a, 3), "\n";
// A waiter killed while it waits leaves its entry queued, but nobody listens on it.
posix_kill($pids[2], SIGKILL);
echo "after one is killed: ", wait_for_waiters($a, 2), " (queue length ", rl_cmd($dsn, 'LLEN', '{' . $key . '}:queue'), ")\n";
$a->releaseLock();
foreach ($pids as $i => $pid) { pcntl_waitpid($pid, $st); $codes[] = $i === 2 ? 'killed' : pcntl_wexitstatus($st); }
echo "waiters' exits: ", implode(',', $codes), "\n";
echo "after the hand-overs: ", $show($a->inspect()), "\n";

// Fencing: the number last issued for the name, whoever asked.
$f = new Lock($key, 0, 10, $o);
$f->addLock();
$n = $f->getFencingToken();
$i = $b->inspect();
var_dump($i['fence'] === $n, $i['mine'], $f->inspect()['mine']);
$f->releaseLock();
var_dump($b->inspect()['fence'] === $n);

// Read mode: two readers, a writer queued behind them.
$r1 = new Lock($key, 0, 10, $o); $r1->addReadLock();
$r2 = new Lock($key, 0, 10, $o); $r2->addReadLock();
$pid = pcntl_fork();
if ($pid === 0) { $w = new Lock($key, 5, 10, $o); exit($w->addLock() !== false ? 0 : 1); }
wait_for_waiters($r1, 1);
echo "read: ", $show($r1->inspect(), $n), "\n";
echo "read, by a non-reader: ", $show($b->inspect(), $n), "\n";
$r1->releaseLock(); $r2->releaseLock();
pcntl_waitpid($pid, $st);
echo "writer after the readers: ", pcntl_wexitstatus($st), "\n";

// No expiry (a fencing number too: this process asked for one before).
$inf = new Lock($key . ':inf', 0, INF, $o);
$inf->addLock();
$nf = $inf->getFencingToken();
var_dump(rl_is_fence($nf, $n), rl_cmd($dsn, 'GET', '{' . $key . ':inf}:fence') === (string) $nf);
echo "no expiry: ", $show($inf->inspect(), $nf), "\n";
$inf->releaseLock();

// A semaphore: 2 permits held by one, three processes waiting for one each.
$skey = rl_key('inspect-sem');
$s = new Semaphore($skey, 2, 0, 10, $o);
echo "semaphore, free: ", json_encode($s->inspect()), "\n";
$st1 = $s->acquire(2);
$spids = [];
for ($i = 0; $i < 3; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) { $w = new Semaphore($skey, 2, 8, 10, $o); $ok = $w->acquire() !== false; usleep(50000); exit($ok ? 0 : 1); }
    $spids[] = $pid;
}
$deadline = microtime(true) + 5;
do { $si = $s->inspect(); usleep(20000); } while ($si['waiters'] < 3 && microtime(true) < $deadline);
$si['holders'][0]['ttl'] = $si['holders'][0]['ttl'] > 9 && $si['holders'][0]['ttl'] <= 10 ? '9..10' : $si['holders'][0]['ttl'];
echo "semaphore, held: ", json_encode($si), "\n";
// Another object with another number of permits still sees the agreed number.
echo "seen with permits 5: ", (new Semaphore($skey, 5, 0, 10, $o))->inspect()['permits'], "\n";
var_dump(str_contains(serialize($s->inspect()), $st1));
$s->release();
foreach ($spids as $pid) { pcntl_waitpid($pid, $st); $sc[] = pcntl_wexitstatus($st); }
echo "semaphore waiters' exits: ", implode(',', $sc), "\n";
echo "semaphore after: ", json_encode($s->inspect()), "\n";
?>
--EXPECT--
free: {"state":"free","ttl":null,"readers":0,"waiters":0,"fence":null,"mine":false,"owner":null}
write: {"state":"write","ttl":"9..10","readers":0,"waiters":0,"fence":null,"mine":true,"owner":null}
seen by another object: {"state":"write","ttl":"9..10","readers":0,"waiters":0,"fence":null,"mine":false,"owner":null}
bool(false)
waiters: 3
after one is killed: 2 (queue length 3)
waiters' exits: 0,0,killed
after the hand-overs: {"state":"free","ttl":null,"readers":0,"waiters":0,"fence":null,"mine":false,"owner":null}
bool(true)
bool(false)
bool(true)
bool(true)
read: {"state":"read","ttl":"9..10","readers":2,"waiters":1,"fence":"<issued>","mine":true,"owner":null}
read, by a non-reader: {"state":"read","ttl":"9..10","readers":2,"waiters":1,"fence":"<issued>","mine":false,"owner":null}
writer after the readers: 0
bool(true)
bool(true)
no expiry: {"state":"write","ttl":"INF","readers":0,"waiters":0,"fence":"<issued>","mine":true,"owner":null}
semaphore, free: {"permits":2,"available":2,"holders":[],"waiters":0}
semaphore, held: {"permits":2,"available":0,"holders":[{"weight":2,"ttl":"9..10","owner":null}],"waiters":3}
seen with permits 5: 2
bool(false)
semaphore waiters' exits: 0,0,0
semaphore after: {"permits":2,"available":2,"holders":[],"waiters":0}
