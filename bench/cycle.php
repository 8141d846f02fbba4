<?php
// One implementation's uncontended acquire+release, in a process of its own: the
// extension's first fencing-token request switches the whole process to eager
// numbers, so each case must start from a fresh process.
// Usage: php ... bench/cycle.php CASE CYCLES [WARMUP]
// Prints {"wall": µs per cycle, "cpu": client CPU µs per cycle, "user": its user
// part, "sys": its system part}.
// With BENCH_SERVER=1, also what the server did over the timed cycles (INFO cpu and
// commandstats, before and after): "server_cpu" (its CPU µs per cycle),
// "commands" (per command, calls per cycle) and "usec" (per command, its µs per
// cycle: a script's include the commands it runs, which are also counted alone).
// CASE: article | native | native-nometrics (the same; bench/uncontended.php runs it with
//       redis_lock.metrics=0) | native-nofence | native-fenced | native-owner | native-renew
//       | native-multi3 (a MultiLock of 3 keys) | native-sem (a Semaphore of one permit)
//       | article-new | native-new   (-new: a new object every cycle)
require __DIR__ . '/ArticleLock.php';
require __DIR__ . '/commands.php';

[$case, $cycles, $warmup] = [$argv[1] ?? 'native', (int) ($argv[2] ?? 10000), (int) ($argv[3] ?? 500)];
$dsn = getenv('REDIS_LOCK_DSN') ?: getenv('REDIS_LOCK_TEST_DSN') ?: 'redis://127.0.0.1:6379';
$u = parse_url($dsn);
$key = "bench:cycle:$case:" . getmypid();

function native_cycle(Lock $l, bool $fence): void {
    $t = $l->addLock();
    if ($t === false) { throw new Exception('native: lock busy'); }
    if ($fence && !is_int($l->getFencingToken())) { throw new Exception('native: no fencing token'); }
    if (!$l->releaseLock($t)) { throw new Exception('native: release failed'); }
}
function multi_cycle(MultiLock $l): void {
    $t = $l->addLock();
    if ($t === false || !$l->releaseLock($t)) { throw new Exception('multi: cycle failed'); }
}
function sem_cycle(Semaphore $s): void {
    $t = $s->acquire();
    if ($t === false || !$s->release($t)) { throw new Exception('semaphore: cycle failed'); }
}
function article_cycle(ArticleLock $l): void {
    $t = $l->addLock();
    if ($t === false || !$l->releaseLock1($t)) { throw new Exception('article: cycle failed'); }
}
$cycle = match ($case) {
    'article' => (fn($l) => fn() => article_cycle($l))(new ArticleLock($key, 0, 10, $u['host'], $u['port'])),
    'native', 'native-nometrics' => (fn($l) => fn() => native_cycle($l, false))(new Lock($key, 0, 10, ['dsn' => $dsn])),
    'native-nofence' => (fn($l) => fn() => native_cycle($l, false))(new Lock($key, 0, 10, ['dsn' => $dsn, 'fencing' => false])),
    'native-fenced' => (fn($l) => fn() => native_cycle($l, true))(new Lock($key, 0, 10, ['dsn' => $dsn])),
    'native-owner' => (fn($l) => fn() => native_cycle($l, false))(new Lock($key, 0, 10, ['dsn' => $dsn, 'owner_info' => true])),
    'native-renew' => (fn($l) => fn() => native_cycle($l, false))(new Lock($key, 0, 10, ['dsn' => $dsn, 'auto_renew' => true])),
    'native-multi3' => (fn($l) => fn() => multi_cycle($l))(new MultiLock(["$key:a", "$key:b", "$key:c"], 0, 10, ['dsn' => $dsn])),
    'native-sem' => (fn($s) => fn() => sem_cycle($s))(new Semaphore($key, 1, 0, 10, ['dsn' => $dsn])),
    'article-new' => fn() => article_cycle(new ArticleLock($key, 0, 10, $u['host'], $u['port'])),
    'native-new' => fn() => native_cycle(new Lock($key, 0, 10, ['dsn' => $dsn]), false),
    default => throw new ValueError("unknown case $case"),
};
/** [user, system] CPU µs of this process so far. */
function cpu_us(): array {
    $r = getrusage();
    return [$r['ru_utime.tv_sec'] * 1e6 + $r['ru_utime.tv_usec'], $r['ru_stime.tv_sec'] * 1e6 + $r['ru_stime.tv_usec']];
}
/** INFO of the server at $dsn, on a connection of its own. */
function server_info(string $dsn): string {
    require_once __DIR__ . '/../tools/lib/resp.php';
    $c = new Resp($dsn);
    $info = $c->call('INFO', 'all');
    $c->close();
    return $info;
}
$server = getenv('BENCH_SERVER') === '1';
for ($i = 0; $i < $warmup; $i++) { $cycle(); }
$i0 = $server ? server_info($dsn) : '';
$c0 = cpu_us(); $t0 = hrtime(true);
for ($i = 0; $i < $cycles; $i++) { $cycle(); }
$c1 = cpu_us();
$wall = (hrtime(true) - $t0) / 1e3 / $cycles;
[$user, $sys] = [($c1[0] - $c0[0]) / $cycles, ($c1[1] - $c0[1]) / $cycles];
$out = ['wall' => $wall, 'cpu' => $user + $sys, 'user' => $user, 'sys' => $sys];
if ($server) {
    $i1 = server_info($dsn);
    $out['server_cpu'] = (server_cpu($i1) - server_cpu($i0)) * 1e6 / $cycles;
    $d0 = command_detail($i0);
    foreach (command_detail($i1) as $name => [$calls, $usec]) {
        $n = $calls - ($d0[$name][0] ?? 0);
        if ($n > 0) {
            $out['commands'][$name] = $n / $cycles;
            // The server's µs in the command (a script's: its commands included).
            $out['usec'][$name] = round(($usec - ($d0[$name][1] ?? 0)) / $cycles, 2);
        }
    }
}
echo json_encode($out), "\n";
