--TEST--
redis-lock CLI, release --force: a lock held by another process is freed and handed to the process waiting for it (far before the lease ends); the old holder finds it lost; a read lock's readers all go; a free key is reported, not an error; JSON; a semaphore is refused and kept
--FILE--
<?php
require __DIR__ . '/_cli.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];

/** A php process running $code with the extension; stdin and stdout are pipes. */
function spawn(string $code, array $argv): array {
    $p = proc_open(array_merge([PHP_BINARY, '-n', '-d', 'extension=' . rl_ext(), '-r', $code], $argv),
        [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    return [$p, $pipes];
}

$holder = <<<'PHP'
[, $dsn, $key] = $argv;
$l = new Lock($key, 0, 60, ['dsn' => $dsn]);
echo is_string($t = $l->addLock()) ? "held\n" : "not held\n";
fgets(STDIN);                                   // until the test says
echo "owned: ", var_export($l->isOwned(), true), ", extend: ", var_export($l->extendLock(), true), ", release: ", var_export($l->releaseLock(), true), "\n";
PHP;
$waiter = <<<'PHP'
[, $dsn, $key] = $argv;
$l = new Lock($key, 30, 60, ['dsn' => $dsn]);
$t = $l->addLock();
printf("%s %.6f %s\n", is_string($t) ? 'got' : 'timed out', microtime(true), $t);
fgets(STDIN);
$l->releaseLock();
PHP;
try {
    echo "== a lock held by another process, a process waiting for it\n";
    [$hp, $h] = spawn($holder, [$dsn, 'jobs:import']);
    echo "holder: ", fgets($h[1]);
    [$wp, $w] = spawn($waiter, [$dsn, 'jobs:import']);
    for ($i = 0; $i < 500 && rl_cmd($dsn, 'LLEN', '{jobs:import}:queue') < 1; $i++) { usleep(10000); }
    $heldBy = rl_cmd($dsn, 'GET', 'jobs:import');
    echo "queued: ", rl_cmd($dsn, 'LLEN', '{jobs:import}:queue'), "\n";
    $t0 = microtime(true);
    $r = rl_cli(['--dsn', $dsn, 'release', '--force', 'jobs:import']);
    echo "exit {$r['rc']}, stderr ", var_export($r['err'], true), ": ", $r['out'];
    [$what, $at, $token] = explode(' ', trim(fgets($w[1])));
    echo "the waiter: $what, within a second of the release: ", var_export($at - $t0 < 1.0, true),
        ", the key holds its token: ", var_export(rl_cmd($dsn, 'GET', 'jobs:import') === $token && $token !== $heldBy, true), "\n";
    echo "no token in the output: ", var_export(!str_contains($r['out'] . $r['err'], $heldBy) && !str_contains($r['out'] . $r['err'], $token), true), "\n";
    fwrite($h[0], "go\n");
    echo "the old holder: ", fgets($h[1]);
    fwrite($w[0], "go\n");
    proc_close($hp);
    proc_close($wp);
    echo "after the waiter's release: ", rl_cmd($dsn, 'EXISTS', 'jobs:import'), " key\n";

    echo "== a free key\n";
    $r = rl_cli(['--dsn', $dsn, 'release', '--force', 'jobs:import']);
    echo "exit {$r['rc']}, stderr ", var_export($r['err'], true), ": ", $r['out'];
    $r = rl_cli(['--dsn', $dsn, '--json', 'release', '--force', 'jobs:import']);
    echo "json: exit {$r['rc']}: ", json_encode(rl_cli_json($r)), "\n";

    echo "== a read lock\n";
    [$a, $b] = [new Lock('jobs:read', 0, 60, ['dsn' => $dsn]), new Lock('jobs:read', 0, 60, ['dsn' => $dsn])];
    $a->tryReadLock();
    $b->tryReadLock();
    $r = rl_cli(['--dsn', $dsn, '--json', 'release', '--force', 'jobs:read']);
    echo "json: exit {$r['rc']}: ", json_encode(rl_cli_json($r)), "\n";
    echo "the readers: ", var_export([$a->isOwned(), $b->isOwned()], true), ", keys left: ", rl_cmd($dsn, 'EXISTS', 'jobs:read', '{jobs:read}:readers'), "\n";

    echo "== a semaphore\n";
    $s = new Semaphore('jobs:pool', 2, 0, 60, ['dsn' => $dsn]);
    $s->tryAcquire();
    $before = rl_snapshot($dsn);
    $r = rl_cli(['--dsn', $dsn, 'release', '--force', 'jobs:pool']);
    echo "exit {$r['rc']}, stdout ", var_export($r['out'], true), ", stderr: ", strtok($r['err'], "\n"), "\n";
    // The keys first: isOwned() may write them (a hold taken alone is turned into the hash).
    echo "kept: ", var_export(rl_snapshot($dsn) === $before && $s->isOwned(), true), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
== a lock held by another process, a process waiting for it
holder: held
queued: 1
exit 0, stderr '': released jobs:import: its holder was removed; the first waiter, if any, has it now
the waiter: got, within a second of the release: true, the key holds its token: true
no token in the output: true
the old holder: owned: false, extend: false, release: false
after the waiter's release: 0 key
== a free key
exit 0, stderr '': jobs:import was not held: nothing released
json: exit 0: {"key":"jobs:import","released":false}
== a read lock
json: exit 0: {"key":"jobs:read","released":true}
the readers: array (
  0 => false,
  1 => false,
), keys left: 0
== a semaphore
exit 2, stdout '', stderr: redis-lock: "jobs:pool" is a semaphore: release --force frees locks only
kept: true
