--TEST--
redis-lock CLI, inspect: a held lock with a waiter and a fence, a lock with no expiry, a read lock with two readers, a semaphore with two holders, a free key with a fence, a key never used; human-readable and JSON; no token shown, nothing changed
--EXTENSIONS--
pcntl
posix
--FILE--
<?php
require __DIR__ . '/_cli.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$opts = ['dsn' => $dsn, 'owner_info' => true];
$pids = [];
$me = gethostname() . ':' . getmypid() . ' cli ' . $_SERVER['SCRIPT_FILENAME'];
$owner = ['host' => gethostname(), 'pid' => getmypid(), 'sapi' => 'cli', 'script' => $_SERVER['SCRIPT_FILENAME']];
// Whether an owner in JSON is this process, acquired within the last minute.
$mine = fn(?array $o) => $o !== null && array_diff_key($o, ['since' => 1]) === $owner && abs($o['since'] - time()) < 60;
// The fencing numbers issued in the set-up, each shown as the name of the hold it was
// issued to (`<job:write>`): any other number, or one shown for another key, stays as is.
$fenceNames = [];
$named = function (string $s) use (&$fenceNames) { return strtr($s, $fenceNames); };
// The human output, with what varies made fixed.
$show = fn(array $r) => "exit {$r['rc']}" . ($r['err'] === '' ? '' : ", stderr: {$r['err']}") . "\n"
    . $named(preg_replace(['/\d+\.\d\ds/', '/since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/'], ['N.NNs', 'since DATE UTC'], str_replace($me, 'ME', $r['out'])));
$tokens = [];
try {
    $w = new Lock('job:write', 0, 30, $opts);
    $tokens[] = $w->tryLock();
    $fence = $w->getFencingToken();
    $pid = pcntl_fork();
    if ($pid === 0) { (new Lock('job:write', 60, 30, $opts))->addLock(); exit(0); }
    $pids[] = $pid;
    for ($i = 0; $i < 500 && rl_cmd($dsn, 'LLEN', '{job:write}:queue') < 1; $i++) { usleep(10000); }
    // After that first getFencingToken(), this process's write acquisitions issue numbers as they go.
    $inf = new Lock('job:forever', 0, INF, $opts);
    $tokens[] = $inf->tryLock();
    $infFence = $inf->getFencingToken();
    [$r1, $r2] = [new Lock('job:read', 0, 20, $opts), new Lock('job:read', 0, 40, $opts)];
    $tokens[] = $r1->tryReadLock();
    $tokens[] = $r2->tryReadLock();
    [$s1, $s2] = [new Semaphore('pool', 4, 0, 20, $opts), new Semaphore('pool', 4, 0, INF, $opts)];
    $tokens[] = $s1->tryAcquire(2);
    $tokens[] = $s2->tryAcquire(1);
    $f = new Lock('job:done', 0, 30, $opts);
    $tokens[] = $f->tryLock();
    $doneFirst = $f->getFencingToken();
    $doneAgain = $f->getFencingToken();
    $f->releaseLock();
    $f->tryLock();
    $doneFence = $f->getFencingToken();
    $f->releaseLock();
    // Each counter's first number is the server's clock in µs then; the next, above it.
    echo "set up: ", count(array_filter($tokens, 'is_string')), " holds, fences from the server's clock: ",
        var_export(rl_is_fence($fence) && rl_is_fence($infFence, $fence) && rl_is_fence($doneFirst, $infFence), true),
        ", job:done's asked twice, one number: ", var_export($doneAgain === $doneFirst, true),
        ", its second hold's above it: ", var_export(rl_is_fence($doneFence, $doneFirst), true), "\n";
    $fenceNames = [(string) $fence => '<job:write>', (string) $infFence => '<job:forever>', (string) $doneFence => '<job:done>'];
    $before = rl_snapshot($dsn, '/:patience$/');
    $out = '';

    echo "== a write lock with a waiter\n";
    $r = rl_cli(['--dsn', $dsn, 'inspect', 'job:write']);
    $out .= $r['out'] . $r['err'];
    echo $show($r);
    $j = rl_cli_json($r = rl_cli(['--dsn', $dsn, 'inspect', '--json', 'job:write']));
    $out .= $r['out'] . $r['err'];
    echo "json: ", $named(json_encode(array_diff_key($j, ['ttl' => 1, 'owners' => 1]))), ", ttl in (25, 30]: ", var_export($j['ttl'] > 25 && $j['ttl'] <= 30, true),
        ", owner: ", var_export(count($j['owners']) === 1 && $mine($j['owners'][0]), true), "\n";

    echo "== no expiry\n";
    echo $show($r = rl_cli(['--dsn', $dsn, 'inspect', 'job:forever']));
    $out .= $r['out'] . $r['err'];
    $j = rl_cli_json($r = rl_cli(['--dsn', $dsn, '--json', 'inspect', 'job:forever']));
    $out .= $r['out'] . $r['err'];
    echo "json: ", $named(json_encode(array_diff_key($j, ['owners' => 1]))), "\n";

    echo "== a read lock, two readers\n";
    echo $show($r = rl_cli(['--dsn', $dsn, 'inspect', 'job:read']));
    $out .= $r['out'] . $r['err'];
    $j = rl_cli_json($r = rl_cli(['--dsn', $dsn, '--json', 'inspect', 'job:read']));
    $out .= $r['out'] . $r['err'];
    echo "json: ", json_encode(array_diff_key($j, ['ttl' => 1, 'owners' => 1])), ", ttl is the longest lease: ", var_export($j['ttl'] > 35 && $j['ttl'] <= 40, true),
        ", owners: ", var_export(count($j['owners']) === 2 && $mine($j['owners'][0]) && $mine($j['owners'][1]), true), "\n";

    echo "== a semaphore, two holders\n";
    echo $show($r = rl_cli(['--dsn', $dsn, 'inspect', 'pool']));
    $out .= $r['out'] . $r['err'];
    $j = rl_cli_json($r = rl_cli(['--dsn', $dsn, '--json', 'inspect', 'pool']));
    $out .= $r['out'] . $r['err'];
    echo "json: ", json_encode(array_diff_key($j, ['owners' => 1, 'holds' => 1])), "\n";
    echo "holds: ", json_encode(array_map(fn($h) => array_diff_key($h, $h['expires'] ? ['owner' => 1, 'ttl' => 1] : ['owner' => 1]), $j['holds'])),
        ", the weight-2 hold's ttl in (15, 20]: ", var_export($j['holds'][0]['ttl'] > 15 && $j['holds'][0]['ttl'] <= 20, true),
        ", owners: ", var_export($mine($j['holds'][0]['owner']) && $mine($j['holds'][1]['owner']) && count($j['owners']) === 2, true), "\n";

    echo "== free, with a fence\n";
    echo $show($r = rl_cli(['--dsn', $dsn, 'inspect', 'job:done']));
    $j = rl_cli_json(rl_cli(['--dsn', $dsn, '--json', 'inspect', 'job:done']));
    echo "json: ", $named(json_encode($j)), "\n";

    echo "== a key never used\n";
    echo $show($r = rl_cli(['--dsn', $dsn, 'inspect', 'never:used']));
    $j = rl_cli_json(rl_cli(['--dsn', $dsn, '--json', 'inspect', 'never:used']));
    echo "json: ", json_encode($j), "\n";
    echo "a key with glob characters, never used: ", json_encode(rl_cli_json(rl_cli(['--dsn', $dsn, '--json', 'inspect', 'p*o?[l]']))['state']), "\n";

    echo "== no token, nothing changed\n";
    echo "tokens in the output: ", count(array_filter($tokens, fn($t) => is_string($t) && str_contains($out, $t))), "\n";
    echo "the server as before: ", var_export(rl_snapshot($dsn, '/:patience$/') === $before, true), "\n";
} finally {
    foreach ($pids as $pid) { posix_kill($pid, SIGKILL); pcntl_waitpid($pid, $st); }
    rl_stop_redis($srv);
}
?>
--EXPECT--
set up: 7 holds, fences from the server's clock: true, job:done's asked twice, one number: true, its second hold's above it: true
== a write lock with a waiter
exit 0
key:       job:write
kind:      lock
state:     write
ttl:       N.NNs
readers:   0
waiters:   1
fence:     <job:write>
owner:     ME, since DATE UTC
json: {"key":"job:write","kind":"lock","state":"write","expires":true,"holders":1,"waiters":1,"readers":0,"fence":<job:write>}, ttl in (25, 30]: true, owner: true
== no expiry
exit 0
key:       job:forever
kind:      lock
state:     write
ttl:       inf
readers:   0
waiters:   0
fence:     <job:forever>
owner:     ME, since DATE UTC
json: {"key":"job:forever","kind":"lock","state":"write","ttl":null,"expires":false,"holders":1,"waiters":0,"readers":0,"fence":<job:forever>}
== a read lock, two readers
exit 0
key:       job:read
kind:      lock
state:     read
ttl:       N.NNs
readers:   2
waiters:   0
fence:     -
owners:    ME, since DATE UTC
           ME, since DATE UTC
json: {"key":"job:read","kind":"lock","state":"read","expires":true,"holders":2,"waiters":0,"readers":2,"fence":null}, ttl is the longest lease: true, owners: true
== a semaphore, two holders
exit 0
key:       pool
kind:      semaphore
state:     held
ttl:       inf
permits:   4
available: 1
waiters:   0
holders:   weight 2, ttl N.NNs, ME, since DATE UTC
           weight 1, ttl inf, ME, since DATE UTC
json: {"key":"pool","kind":"semaphore","state":"held","ttl":null,"expires":false,"holders":2,"waiters":0,"permits":4,"available":1,"used":3}
holds: [{"weight":2,"expires":true},{"weight":1,"ttl":null,"expires":false}], the weight-2 hold's ttl in (15, 20]: true, owners: true
== free, with a fence
exit 0
key:       job:done
kind:      lock
state:     free
ttl:       -
readers:   0
waiters:   0
fence:     <job:done>
owner:     -
json: {"key":"job:done","kind":"lock","state":"free","ttl":null,"expires":null,"holders":0,"waiters":0,"owners":[],"readers":0,"fence":<job:done>}
== a key never used
exit 0
key:       never:used
kind:      lock
state:     free
ttl:       -
readers:   0
waiters:   0
fence:     -
owner:     -
json: {"key":"never:used","kind":"lock","state":"free","ttl":null,"expires":null,"holders":0,"waiters":0,"owners":[],"readers":0,"fence":null}
a key with glob characters, never used: "free"
== no token, nothing changed
tokens in the output: 0
the server as before: true
