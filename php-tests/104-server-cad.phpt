--TEST--
The server's own compare-and-delete (Valkey 9 DELIFEQ, Redis 8.4 DELEX, and SET IFEQ): a Lock taken with nobody queued is released and renewed (extendLock(), the watchdog) without a script, its value exactly its token; a waiter that queued meanwhile is handed the lock at once (the release's kick); a release of a lock another token took is false; a user refused EVALSHA and EVAL releases and renews an uncontended lock, and cannot wait. Elsewhere the scripts run as before: each check says which path it expects
--FILE--
<?php
require __DIR__ . '/_acl.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$cad = rl_cad($dsn);
// Which path this server takes: the line differs by server, every other line not.
echo "path: ", $cad ?? 'scripts (no compare-and-delete here)', "\n";
if ($cad === null) {
    rl_untested("the server's own compare-and-delete (DELIFEQ or DELEX releases, SET IFEQ renewals, the kick after a release that found a waiter)", 'this server has none: Valkey 9 and Redis 8.4 do');
}

function calls(string $dsn): array {
    $out = [];
    foreach (explode("\n", rl_cmd($dsn, 'INFO', 'commandstats')) as $line) {
        if (preg_match('/^cmdstat_([^:]+):calls=(\d+)/', trim($line), $m)) { $out[$m[1]] = (int) $m[2]; }
    }
    return $out;
}
function delta(array $before, array $after, string $cmd): int {
    return ($after[$cmd] ?? 0) - ($before[$cmd] ?? 0);
}
function check(string $what, bool $ok, string $detail): void {
    echo "$what: ", $ok ? 'ok' : "FAILED ($detail)", "\n";
}

try {
    $patient = RL_PATIENT;   // about commands, not timeouts (_helper.inc)
    $o = ['dsn' => $dsn, 'auto_renew' => false] + $patient;
    $key = rl_key('cad');
    $l = new Lock($key, 0, 10, $o);

    // The uncontended cycle: no script at all where the server has the commands.
    $t = $l->addLock();
    $raw = rl_cmd($dsn, 'GET', $key);
    check('held alone: the value is the token', $raw === $t, var_export($raw, true));
    check('held alone: isOwned, inspect', $l->isOwned() && $l->inspect()['mine'] && $l->isLocked(), 'not seen as held');
    $l->releaseLock();
    $n = 50;
    $s0 = redis_lock_stats();
    $before = calls($dsn);
    for ($i = 0; $i < $n; $i++) {
        $l->addLock() or die("not acquired\n");
        $l->extendLock(null, 10) or die("not extended\n");
        $l->releaseLock() or die("not released\n");
    }
    $after = calls($dsn);
    $s1 = redis_lock_stats();
    $d = ['evalsha' => delta($before, $after, 'evalsha'), 'eval' => delta($before, $after, 'eval'), 'cmd' => $cad ? delta($before, $after, $cad) : 0,
          'releases' => $s1['cad_releases'] - $s0['cad_releases'], 'renewals' => $s1['cad_renewals'] - $s0['cad_renewals']];
    $detail = json_encode($d);
    check("$n uncontended cycles (take, extendLock, release)", $cad
        ? $d['evalsha'] === 0 && $d['eval'] === 0 && $d['cmd'] === $n && $d['releases'] === $n && $d['renewals'] === $n
        : $d['evalsha'] === 2 * $n && $d['releases'] === 0 && $d['renewals'] === 0, $detail);

    // The watchdog renews a hold taken alone the same way.
    // A 1.2 s lease is renewed every 0.4 s: 0.8 s of room for a busy machine.
    $w = new Lock(rl_key('cad-watchdog'), 0, 1.2, ['dsn' => $dsn, 'auto_renew' => true] + $patient);
    $s0 = redis_lock_stats();
    $before = calls($dsn);
    $w->addLock();
    usleep(1800000);
    $kept = $w->isOwned();
    $w->releaseLock();
    $after = calls($dsn);
    $s1 = redis_lock_stats();
    $renewals = $s1['renewals'] - $s0['renewals'];
    $d = ['kept' => $kept, 'renewals' => $renewals, 'cad_renewals' => $s1['cad_renewals'] - $s0['cad_renewals'], 'evalsha' => delta($before, $after, 'evalsha')];
    check('the watchdog, 1.2 s lease held 1.8 s', $kept && $renewals >= 1 && ($cad
        ? $d['cad_renewals'] === $renewals && $d['evalsha'] === 0
        : $d['cad_renewals'] === 0 && $d['evalsha'] >= $renewals + 1), json_encode($d));

    // A waiter queued: the value stays the token, and the release hands over at once
    // (not at the end of the 10 s lease): where the server has the commands, its
    // compare-and-delete frees the lock and the kick that follows hands it over.
    $t = $l->addLock();
    $alone = rl_cmd($dsn, 'GET', $key);
    $sync = tempnam(sys_get_temp_dir(), 'rl-cad');
    $pid = pcntl_fork();
    if ($pid === 0) {
        $start = microtime(true);
        $w = new Lock($key, 10, 10, $o);
        $got = $w->addLock();
        file_put_contents($sync, json_encode([$got !== false, microtime(true)]));
        // Held until the parent has counted the release's commands: this process's
        // own release, at its exit, is not one of them.
        $until = microtime(true) + 10;
        while (!file_exists("$sync.done") && microtime(true) < $until) { usleep(10000); }
        exit(0);
    }
    $until = microtime(true) + 5;
    while ($l->inspect()['waiters'] < 1 && microtime(true) < $until) { usleep(10000); }
    $raw = rl_cmd($dsn, 'GET', $key);
    check('a waiter queued: the value is the token', $alone === $t && $raw === $t, var_export([$alone, $raw], true));
    $before = calls($dsn);
    $s0 = redis_lock_stats();
    $released = microtime(true);
    $ok = $l->releaseLock();
    $until = microtime(true) + 10;
    while (filesize($sync) === 0 && microtime(true) < $until) { usleep(5000); clearstatcache(); }
    $after = calls($dsn);
    touch("$sync.done");
    pcntl_waitpid($pid, $status);
    [$got, $at] = json_decode((string) file_get_contents($sync), true) ?? [false, 0];
    @unlink($sync);
    @unlink("$sync.done");
    $s1 = redis_lock_stats();
    $d = ['released' => $ok, 'got' => $got, 'after_ms' => (int) (($at - $released) * 1000), 'cmd' => $cad ? delta($before, $after, $cad) : 0,
          'evalsha' => delta($before, $after, 'evalsha'), 'eval' => delta($before, $after, 'eval'), 'kicks' => $s1['cad_kicks'] - $s0['cad_kicks']];
    // Where the server has the commands: its compare-and-delete, then the kick (by its
    // text, unawaited); elsewhere the release script hands over.
    check('released with a waiter: handed over at once', $ok && $got && $at - $released < 2.0 && ($cad
        ? $d['cmd'] === 1 && $d['evalsha'] === 0 && $d['eval'] === 1 && $d['kicks'] === 1
        : $d['cmd'] === 0 && $d['evalsha'] === 1 && $d['kicks'] === 0), json_encode($d));

    // A release of a lock that another token took since: false, and the other hold stays.
    $short = new Lock($key, 0, 0.2, $o);
    $short->addLock() or die("not acquired\n");
    usleep(300000);
    $other = new Lock($key, 0, 10, $o);
    $to = $other->addLock();
    $before = calls($dsn);
    $r = $short->releaseLock();
    $after = calls($dsn);
    // Where the server has the command: tried first, deleted nothing, then the script.
    $d = ['released' => $r, 'cmd' => $cad ? delta($before, $after, $cad) : 0, 'evalsha' => delta($before, $after, 'evalsha')];
    check('a release after another token took it', $r === false && rl_cmd($dsn, 'GET', $key) === $to && $other->isOwned()
        && $d['cmd'] === ($cad ? 1 : 0) && $d['evalsha'] === 1, json_encode($d));
    check('a release by a wrong token', $short->releaseLock(str_repeat('ab', 16)) === false && $other->isOwned(), 'released');
    $other->releaseLock();

    // A user refused EVALSHA and EVAL: the uncontended cycle works where the server
    // has the commands (with the `cad` block of docs/acl.md); waiting needs scripts.
    $blocks = $cad ? ['user', 'mutex', 'cad'] : ['user', 'mutex'];
    $udsn = rl_acl_user($dsn, 'noscript', $blocks, ['+evalsha', '+eval']);
    if ($cad === 'delex') { rl_cmd($dsn, 'ACL', 'SETUSER', 'noscript', '-delifeq', '+delex'); }
    $u = ['dsn' => $udsn, 'prefix' => 'app:', 'auto_renew' => false] + $patient;
    $a = new Lock('job', 0, 10, $u);
    $steps = [];
    foreach (['take' => fn() => $a->addLock() !== false, 'extend' => fn() => $a->extendLock(null, 10), 'owned' => fn() => $a->isOwned(), 'release' => fn() => $a->releaseLock()] as $step => $fn) {
        try { $steps[$step] = $fn() ? 'yes' : 'no'; } catch (LockException $e) { $steps[$step] = 'refused'; }
    }
    $h = new Lock('job2', 0, 10, $u);
    $h->addLock() or die("not acquired\n");
    try { $waited = (new Lock('job2', 0.2, 10, $u))->addLock() === false ? 'timed out' : 'taken'; } catch (LockException $e) { $waited = 'refused'; }
    $steps['wait'] = $waited;
    check('no scripts: take, extend, isOwned, release; a wait is refused', $cad
        ? $steps === ['take' => 'yes', 'extend' => 'yes', 'owned' => 'yes', 'release' => 'yes', 'wait' => 'refused']
        : $steps['take'] === 'yes' && $steps['extend'] === 'refused' && $steps['release'] === 'refused' && $steps['wait'] === 'refused', json_encode($steps));
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECTF--
path: %s
held alone: the value is the token: ok
held alone: isOwned, inspect: ok
50 uncontended cycles (take, extendLock, release): ok
the watchdog, 1.2 s lease held 1.8 s: ok
a waiter queued: the value is the token: ok
released with a waiter: handed over at once: ok
a release after another token took it: ok
a release by a wrong token: ok
no scripts: take, extend, isOwned, release; a wait is refused: ok
