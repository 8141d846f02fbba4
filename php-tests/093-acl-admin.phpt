--TEST--
ACL: the redis-lock tool (list, inspect, release --force handing locks to a fenced writer and to readers) runs as an operator with exactly the admin rules of docs/acl.md: nothing refused, every rule used; a read-only operator (the doc's) lists and inspects; without +scan, list says so
--FILE--
<?php
require __DIR__ . '/_acl.inc';
require __DIR__ . '/_cli.inc';
$srv = rl_start_redis();
$done = sys_get_temp_dir() . '/rl-acl-admin-done-' . getmypid();
$waiters = [];
try {
    $admin = $srv['dsn'];
    $app = ['dsn' => $admin, 'prefix' => 'app:', 'owner_info' => true];
    $ops = rl_acl_user($admin, 'ops', ['admin']);
    $cli = fn(string ...$args) => rl_cli(array_merge(["--dsn=$ops", '--prefix=app:'], $args));
    // Held locks, each with a waiter that a forced release hands it to.
    $held = [];
    foreach (['w', 'r', 'b', 'c'] as $name) { $held[$name] = new Lock("job-$name", 0, 10, $app); }
    $held['w']->addLock();
    $waiters['w'] = rl_acl_waiter(function () use ($app) {
        $l = rl_acl_keep(new Lock('job-w', 5, 10, $app + RL_ACL_SLOW));
        $l->getFencingToken();   // its grant takes a number: INCR in the operator's script
        return $l->addLock() !== false;
    }, $done);
    $held['r']->addReadLock();
    $reader = new Lock('job-r', 0, 10, $app);
    $reader->addReadLock();
    // Readers waiting for a writer: with a lease (PEXPIRE on their set), without (PERSIST).
    foreach (['b' => 10, 'c' => INF] as $name => $lease) {
        $held[$name]->addLock();
        $waiters[$name] = rl_acl_waiter(fn() => rl_acl_keep(new Lock("job-$name", 5, $lease, $app + RL_ACL_SLOW))->addReadLock() !== false, $done);
    }
    $pool = new Semaphore('pool', 3, 0, 10, $app);
    $pool->acquire(2);
    $all = rl_acl_until(fn() => array_sum(array_map(fn($n) => $held[$n]->inspect()['waiters'], ['w', 'b', 'c'])) === 3);
    echo "waiters queued: ", var_export($all, true), "\n";

    rl_cmd($admin, 'SCRIPT', 'FLUSH');   // the operator's first calls load the scripts (EVAL)
    $deltas = [];
    rl_acl_log_reset([$admin]);
    $window = function (string $label, array $args, ?string $woken = null) use ($admin, $cli, &$deltas, &$waiters) {
        $before = rl_acl_stats([$admin]);
        $started = microtime(true);
        $r = $cli(...$args);
        $deltas[] = rl_acl_delta($before, rl_acl_stats([$admin]));
        echo "$label: exit {$r['rc']}", $r['err'] === '' ? '' : ", stderr: {$r['err']}", "\n";
        if ($woken !== null) { echo "  its waiter: ", rl_acl_woken(rl_acl_outcome($waiters[$woken], 10, true), $started), "\n"; }
        return $r;
    };
    $r = $window('list', ['--json', 'list']);
    $doc = json_decode($r['out'], true);
    echo "  listed: ", implode(' ', array_map(fn($i) => "{$i['key']}={$i['state']}/{$i['waiters']}", $doc['items'] ?? [])), "\n";
    $r = $window('inspect pool', ['--json', 'inspect', 'pool']);
    echo "  pool: ", json_decode($r['out'], true)['used'] ?? 'none', " of 3 used\n";
    $window('release --force job-w', ['release', '--force', 'job-w'], 'w');
    $window('release --force job-r', ['release', '--force', 'job-r']);
    $window('release --force job-b', ['release', '--force', 'job-b'], 'b');
    $window('release --force job-c', ['release', '--force', 'job-c'], 'c');
    echo "admin: ", rl_acl_verdict(rl_acl_refused([$admin], 'ops'), rl_acl_sum(...$deltas), ['admin']), "\n";

    // The doc's read-only operator: the admin block without its last line and the channels.
    $writes = array_slice(preg_split('/ +/', trim(array_slice(rl_acl_block('admin'), -1)[0])), 3);
    $ro = rl_acl_user($admin, 'ro', ['admin'], [...$writes, '&redis_lock:wake:*']);
    rl_acl_log_reset([$admin]);
    $codes = array_map(fn($args) => rl_cli(array_merge(["--dsn=$ro", '--prefix=app:'], $args))['rc'], [['list'], ['inspect', 'pool'], ['inspect', 'job-w']]);
    echo "read-only operator: list and inspect exit ", implode(' ', $codes), ", refused: ", implode(' ', rl_acl_refused([$admin], 'ro')) ?: 'none', "\n";
    echo "read-only operator, release --force: ", str_contains(rl_cli(["--dsn=$ro", '--prefix=app:', 'release', '--force', 'job-w'])['err'], 'redis-lock: ') ? 'refused' : 'not refused', "\n";
    $r = rl_cli(['--dsn=' . rl_acl_user($admin, 'ops', ['admin'], ['+scan']), '--prefix=app:', 'list']);
    echo "admin without +scan, list: exit {$r['rc']}, ", str_contains($r['err'], "'scan'") ? "stderr names 'scan'" : "stderr: {$r['err']}", "\n";
} finally {
    touch($done);
    foreach ($waiters as $w) { rl_acl_reap($w); }
    @unlink($done);
    rl_stop_redis($srv);
}
?>
--EXPECT--
waiters queued: true
list: exit 0
  listed: job-b=write/1 job-c=write/1 job-r=read/0 job-w=write/1 pool=held/0
inspect pool: exit 0
  pool: 2 of 3 used
release --force job-w: exit 0
  its waiter: woken by the release
release --force job-r: exit 0
release --force job-b: exit 0
  its waiter: woken by the release
release --force job-c: exit 0
  its waiter: woken by the release
admin: refused: none; never ran: none
read-only operator: list and inspect exit 0 0 0, refused: none
read-only operator, release --force: refused
admin without +scan, list: exit 1, stderr names 'scan'
