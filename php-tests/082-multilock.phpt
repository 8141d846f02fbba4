--TEST--
MultiLock: several keys all or none, shared with Lock (keys, queues, fencing counters), woken by a release, moved on to the next busy key without taking a subset, released at its end
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$o = ['dsn' => $dsn];
$base = rl_key('multi');
[$a, $b, $c] = ["$base:a", "$base:b", "$base:c"];
$held = fn() => implode(',', array_map(fn($k) => rl_cmd($dsn, 'EXISTS', $k), [$a, $b, $c]));

// Arguments.
$m = new MultiLock([$c, $a, $b, $a], 0, 5, $o);
echo "keys in order, once each: ", json_encode($m->getKeys() === [$a, $b, $c]), "\n";
foreach ([[[], 'ValueError'], [[$a, ''], 'ValueError'], [[$a, [1]], 'TypeError']] as [$keys, $want]) {
    try { new MultiLock($keys, 0, 5, $o); echo "no error\n"; }
    catch (Throwable $e) { echo get_class($e) === $want ? "$want: " : 'WRONG ' . get_class($e) . ': ', $e->getMessage(), "\n"; }
}
try { new MultiLock([$a], -1, 5, $o); } catch (ValueError $e) { echo "negative timeOut: ValueError\n"; }

// All or none: with b held by a Lock, the MultiLock takes nothing.
$lb = new Lock($b, 0, 5, $o);
$tb = $lb->addLock();
var_dump($m->tryLock());
echo "held with b taken by a Lock: {$held()}\n";
$lb->releaseLock();
$t = $m->tryLock();
echo "taken: ", json_encode(is_string($t)), ", held {$held()}, every key holds the token: ",
    json_encode(array_map(fn($k) => rl_cmd($dsn, 'GET', $k) === $t, [$a, $b, $c])), "\n";
$la = new Lock($a, 0, 5, $o);
echo "a Lock on one of its keys: ", var_export($la->tryLock(), true), "\n";
$ttl = $m->getTtl();
echo "owned ", json_encode($m->isOwned()), ", ttl ", $ttl > 4 && $ttl <= 5 ? 'about 5' : $ttl, "\n";
var_dump($m->extendLock(null, 30));
echo "ttl after extend: ", $m->getTtl() > 29 ? 'about 30' : $m->getTtl(), ", each key: ",
    json_encode(array_map(fn($k) => rl_cmd($dsn, 'PTTL', $k) > 29000, [$a, $b, $c])), "\n";
echo "isOwned of another token: ", json_encode($m->isOwned('someone-else')), "\n";

// Fencing: each key's own counter, the one a Lock uses.
$f = $m->getFencingToken();
echo "fencing tokens: ", json_encode(array_keys($f) === [$a, $b, $c] && count(array_filter($f, 'rl_is_fence')) === 3), "\n";
var_dump($m->releaseLock(), $held(), $m->releaseLock(), $m->isOwned(), $m->getTtl());
$ta = $la->addLock();
$fa = $la->getFencingToken();
echo "a Lock's number after: ", json_encode($fa > $f[$a]), "\n";
$la->releaseLock();
$t = $m->addLock();
echo "the MultiLock's after the Lock's: ", json_encode($m->getFencingToken()[$a] > $fa), "\n";
$m->releaseLock();

// inspect(), with owner_info: each key as Lock::inspect() shows it, with who holds it.
$mi = new MultiLock([$b, $a], 0, 5, $o + ['owner_info' => true]);
$mi->addLock();
$i = $mi->inspect();
echo "inspect: mine ", json_encode($i['mine']), ", keys in order ", json_encode(array_keys($i['keys']) === [$a, $b]),
    ", states ", implode(',', array_column($i['keys'], 'state')), ", each mine ", json_encode(array_column($i['keys'], 'mine')),
    ", owner is this process ", json_encode(array_map(fn($k) => ($k['owner']['pid'] ?? null) === getmypid(), array_values($i['keys']))), "\n";
$mi->releaseLock();
$i = $mi->inspect();
echo "after the release: mine ", json_encode($i['mine']), ", states ", implode(',', array_column($i['keys'], 'state')),
    ", records left ", rl_cmd($dsn, 'EXISTS', "{{$a}}:owner") + rl_cmd($dsn, 'EXISTS', "{{$b}}:owner"), "\n";

// Keys of any bytes, and numeric ones, keep their own places in the arrays it returns.
$kb = ["$base:\xff\x01", "$base:\xfe\x01", (string) random_int(100000, 999999)];
$mb = new MultiLock($kb, 0, 5, $o);
$mb->addLock();
$fb = $mb->getFencingToken();
$ib = $mb->inspect()['keys'];
echo "binary and numeric keys: ", count($fb), " numbers, ", count($ib), " inspected, each found: ",
    json_encode(array_map(fn($k) => isset($fb[$k], $ib[$k]), $kb)), "\n";
$mb->releaseLock();

// The redis-lock tool lists a MultiLock's keys as the locks they are.
require_once __DIR__ . '/_cli.inc';
$mt = new MultiLock([$a, $b], 0, 5, $o + ['owner_info' => true]);
$mt->addLock();
$listed = rl_cli(["--dsn=$dsn", '--json', 'list', "$base:*"]);
$rows = json_decode($listed['out'], true)['items'] ?? null;
echo "redis-lock list: rc {$listed['rc']}, ", is_array($rows) ? json_encode(array_values(array_intersect([$a, $b], array_column($rows, 'key'))) === [$a, $b]) : $listed['out'] . $listed['err'], "\n";
$mt->releaseLock();

// A key lost behind its back: the release frees the rest and says false.
$t = $m->addLock();
rl_cmd($dsn, 'DEL', $b);
echo "owned with b gone: ", json_encode($m->isOwned()), ", extend: ", json_encode($m->extendLock()), "\n";
var_dump($m->releaseLock(), $held());

// Released by token from another object.
$t = $m->tryLock();
$other = new MultiLock([$a, $b, $c], 0, 5, $o);
echo "release by token elsewhere: ", json_encode($other->releaseLock($t)), ", held {$held()}\n";

// Woken by the release of the key it waits on (a forked holder of b, 300 ms).
rl_cmd($dsn, 'SET', $b, 'child', 'PX', '5000');
$pid = pcntl_fork();
if ($pid === 0) { usleep(300000); rl_cmd($dsn, 'DEL', $b); (new Lock($b, 0, 5, ['dsn' => $dsn]))->releaseLock('never'); exit(0); }
pcntl_waitpid($pid, $st);
// The DEL alone wakes no one: the waiter looks again by its own timer (the holder's
// lease, at most a second). A release through the queue wakes it at once:
rl_cmd($dsn, 'SET', $b, 'holder', 'PX', '5000');
$lb2 = new Lock($b, 0, 5, $o);
$pid = pcntl_fork();
if ($pid === 0) { usleep(300000); exit((new Lock($b, 0, 5, ['dsn' => $dsn]))->releaseLock('holder') ? 0 : 1); }
$w = new MultiLock([$a, $b, $c], 3, 5, $o);
$s = microtime(true);
$t = $w->addLock();
$took = microtime(true) - $s;
pcntl_waitpid($pid, $st);
echo "woken by the release: ", json_encode(is_string($t)), ", after ", $took >= 0.25 && $took < 0.8 ? '0.3 s' : "$took s", ", child ", pcntl_wexitstatus($st), "\n";
$w->releaseLock();

// Two keys busy: the release of the first moves the entry to the second's queue, and
// takes nothing; the release of the second takes all.
$lkA = new Lock($a, 0, 5, $o); $lkA->addLock();
$lkB = new Lock($b, 0, 5, $o); $lkB->addLock();
$pid = pcntl_fork();
if ($pid === 0) {
    $w = new MultiLock([$a, $b, $c], 5, 5, ['dsn' => $dsn]);
    $t = $w->addLock();
    exit(is_string($t) && $w->releaseLock($t) ? 0 : 1);
}
$qa = "{{$a}}:queue"; $qb = "{{$b}}:queue";
for ($i = 0; $i < 100 && rl_cmd($dsn, 'LLEN', $qa) != 1; $i++) { usleep(20000); }
echo "queued on a: ", rl_cmd($dsn, 'LLEN', $qa), ", on b: ", rl_cmd($dsn, 'LLEN', $qb), ", entry is an m entry: ",
    json_encode((bool) preg_match('/^\d+:\d+:m[01]\d+:/', rl_cmd($dsn, 'LINDEX', $qa, '0'))), "\n";
$lkA->releaseLock();
echo "a released: a held ", rl_cmd($dsn, 'EXISTS', $a), ", c held ", rl_cmd($dsn, 'EXISTS', $c),
    ", queued on a: ", rl_cmd($dsn, 'LLEN', $qa), ", on b: ", rl_cmd($dsn, 'LLEN', $qb), "\n";
$lkB->releaseLock();
pcntl_waitpid($pid, $st);
echo "b released: the waiter took all and released: exit ", pcntl_wexitstatus($st), ", held {$held()}\n";

// A MultiLock's release lets every key go before it hands any over: a MultiLock waiting
// for the same keys gets them together, ahead of a Lock queued behind it.
$x = new MultiLock([$a, $b], 0, 5, $o);
$x->addLock();
$pid = pcntl_fork();
if ($pid === 0) {
    $y = new MultiLock([$a, $b], 5, 5, ['dsn' => $dsn]);
    $t = $y->addLock();
    file_put_contents(sys_get_temp_dir() . '/082-y-' . getmypid(), json_encode([is_string($t), rl_cmd($dsn, 'GET', $a) === $t, rl_cmd($dsn, 'GET', $b) === $t, microtime(true)]));
    usleep(200000);
    exit($y->releaseLock() ? 0 : 1);
}
for ($i = 0; $i < 100 && rl_cmd($dsn, 'LLEN', $qa) < 1; $i++) { usleep(20000); }
$pid2 = pcntl_fork();
if ($pid2 === 0) {
    $wl = new Lock($a, 5, 5, ['dsn' => $dsn]);
    $ok = $wl->addLock() !== false;
    file_put_contents(sys_get_temp_dir() . '/082-w-' . getmypid(), (string) microtime(true));
    exit($ok && $wl->releaseLock() ? 0 : 1);
}
for ($i = 0; $i < 100 && rl_cmd($dsn, 'LLEN', $qa) < 2; $i++) { usleep(20000); }
echo "queued on a: ", rl_cmd($dsn, 'LLEN', $qa), "; ";
$x->releaseLock();
pcntl_waitpid($pid, $st);
pcntl_waitpid($pid2, $st2);
[$yFile, $wFile] = [sys_get_temp_dir() . "/082-y-$pid", sys_get_temp_dir() . "/082-w-$pid2"];
$y = json_decode(file_get_contents($yFile), true);
echo "the waiting MultiLock got both at once: ", json_encode(array_slice($y, 0, 3)), ", before the Lock behind it: ",
    json_encode($y[3] < (float) file_get_contents($wFile)), ", exits ", pcntl_wexitstatus($st), ",", pcntl_wexitstatus($st2), "\n";
unlink($yFile);
unlink($wFile);

// A wait that times out leaves nothing queued and nothing held.
$lkB->addLock();
$w = new MultiLock([$a, $b, $c], 0.3, 5, $o);
var_dump($w->addLock());
echo "after the timeout (b held by the Lock): held {$held()}, queues ", rl_cmd($dsn, 'EXISTS', $qa) + rl_cmd($dsn, 'EXISTS', $qb), "\n";
$lkB->releaseLock();

// synchronized(): the value, and the keys free after; a timeout throws.
echo "synchronized: ", $m->synchronized(function () use ($held) { return "ran with " . $held(); }) === 'ran with 1,1,1' ? 'ran with all held' : 'WRONG', ", after: {$held()}\n";
$lkB->addLock();
try { $w->synchronized(fn() => 1); } catch (LockTimeoutException $e) { echo "LockTimeoutException: ", str_contains($e->getMessage(), $b) ? 'names the keys' : $e->getMessage(), "\n"; }
$lkB->releaseLock();

// The object's end releases; so does a killed holder's lease.
$m->addLock(); unset($m);
echo "after unset: {$held()}\n";
// A script that ends holding them (its request ends): released at once.
$php = PHP_BINARY . ' -n -d extension=' . escapeshellarg(rl_ext());
$code = 'global $k; $k = new MultiLock(' . var_export([$a, $b, $c], true) . ', 0, 60, ["dsn" => ' . var_export($dsn, true) . ']); echo is_string($k->addLock()) ? "took" : "busy";';
echo "a script that ends holding: ", shell_exec("$php -r " . escapeshellarg($code)), ", then held {$held()}\n";
$pid = pcntl_fork();
if ($pid === 0) { $k = new MultiLock([$a, $b, $c], 0, 0.5, ['dsn' => $dsn]); $k->addLock(); posix_kill(getmypid(), SIGKILL); }
pcntl_waitpid($pid, $st);
echo "holder killed: held {$held()}; ";
usleep(700000);
echo "after its lease: {$held()}\n";
?>
--EXPECTF--
keys in order, once each: true
ValueError: MultiLock::__construct(): Argument #1 ($keys) must not be empty
ValueError: MultiLock::__construct(): Argument #1 ($keys) must not contain an empty key
TypeError: MultiLock::__construct(): Argument #1 ($keys) must contain only strings, Array given
negative timeOut: ValueError
bool(false)
held with b taken by a Lock: 0,1,0
taken: true, held 1,1,1, every key holds the token: [true,true,true]
a Lock on one of its keys: false
owned true, ttl about 5
bool(true)
ttl after extend: about 30, each key: [true,true,true]
isOwned of another token: false
fencing tokens: true
bool(true)
string(5) "0,0,0"
bool(false)
bool(false)
NULL
a Lock's number after: true
the MultiLock's after the Lock's: true
inspect: mine true, keys in order true, states write,write, each mine [true,true], owner is this process [true,true]
after the release: mine false, states free,free, records left 0
binary and numeric keys: 3 numbers, 3 inspected, each found: [true,true,true]
redis-lock list: rc 0, true
owned with b gone: false, extend: false
bool(false)
string(5) "0,0,0"
release by token elsewhere: true, held 0,0,0
woken by the release: true, after 0.3 s, child 0
queued on a: 1, on b: 0, entry is an m entry: true
a released: a held 0, c held 0, queued on a: 0, on b: 1
b released: the waiter took all and released: exit 0, held 0,0,0
queued on a: 2; the waiting MultiLock got both at once: [true,true,true], before the Lock behind it: true, exits 0,0
bool(false)
after the timeout (b held by the Lock): held 0,1,0, queues 0
synchronized: ran with all held, after: 0,0,0
LockTimeoutException: names the keys
after unset: 0,0,0
a script that ends holding: took, then held 0,0,0
holder killed: held 1,1,1; after its lease: 0,0,0
