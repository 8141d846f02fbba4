--TEST--
Eviction's check at connect: a server whose maxmemory-policy can evict lock keys (allkeys-*, and volatile-*: lock keys carry a TTL) is told with one line of PHP's error log, as a warning (no E_WARNING a framework would turn into an exception), per process and address (naming the address, the policy and maxmemory, never a password) and counted in redis_lock_stats()['evicting_servers']; noeviction and maxmemory 0 say nothing; a policy changed at run time is found by the next connection; a user refused CONFIG is asked INFO memory, once per process and server, and later connections ask INFO first; refused both, nothing is said and the lock works
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_acl.inc';
$servers = [];
$start = function (string $policy, string $max) use (&$servers) {
    return $servers[] = rl_start_redis(['--maxmemory', $max, '--maxmemory-policy', $policy]);
};
$main = getmypid();
register_shutdown_function(function () use (&$servers, $main) {
    if (getmypid() !== $main) { return; }   // not at the forked child's exit
    foreach ($servers as $s) { rl_stop_redis($s); }
});
// Told in PHP's error log (here a file), never as an error a handler could turn into
// an exception: none may reach this handler.
$log = tempnam(sys_get_temp_dir(), 'rl-evict-log');
ini_set('error_log', $log);
set_error_handler(function (int $no, string $msg) {
    if (!(error_reporting() & $no)) { return false; }   // the helpers' @-silenced ones
    echo "UNEXPECTED error $no: $msg\n";
    return true;
});
/** The lines PHP's error log gained since the last call, without their timestamps. */
$logged = function () use ($log): array {
    static $at = 0;   // a forked child starts where its parent was
    clearstatcache();
    $text = (string) file_get_contents($log, false, null, $at);
    $at += strlen($text);
    return array_values(array_filter(array_map(fn($l) => preg_replace('/^\[[^\]]*\] /', 'log: ', $l), explode("\n", $text))));
};
$ports = [];
/** Takes and releases a lock on $o, then says what was warned (ports named), and the counters. */
$run = function (string $what, array $o) use ($logged, &$ports) {
    // Timeouts a busy machine cannot reach (the default 0.5 s connect was, in CI);
    // a read_timeout of 6 makes a connection of its own, as other settings would.
    $o += ['connect_timeout' => 5, 'read_timeout' => 5];
    $l = new Lock(rl_key('evict'), 0, 10, $o);
    $ok = is_string($l->addLock()) && $l->releaseLock();
    $warnings = $logged();
    $text = $warnings ? implode(' | ', $warnings) : 'none';
    foreach ($ports as $name => $port) { $text = str_replace((string) $port, $name, $text); }
    $s = redis_lock_stats();
    echo "$what: ", $ok ? 'locked' : 'NOT LOCKED', ", evicting_servers=$s[evicting_servers], warnings: $text\n";
};

$lru = $start('allkeys-lru', '64mb');
$ttl = $start('volatile-ttl', '1gb');
$noev = $start('noeviction', '64mb');
$unlimited = $start('allkeys-lru', '0');
$ports = ['LRU' => $lru['port'], 'TTL' => $ttl['port'], 'NOEV' => $noev['port'], 'UNLIMITED' => $unlimited['port']];

$run('allkeys-lru', ['dsn' => $lru['dsn']]);
// Other settings, the same address: a connection of its own, which tells nothing more.
$connects = redis_lock_stats()['connects'];
$run('allkeys-lru again, another connection', ['dsn' => $lru['dsn'], 'read_timeout' => 6]);
echo 'a new connection was made: ', redis_lock_stats()['connects'] > $connects ? 'yes' : 'no', "\n";
$run('volatile-ttl', ['dsn' => $ttl['dsn']]);
$run('noeviction', ['dsn' => $noev['dsn']]);
$run('maxmemory 0', ['dsn' => $unlimited['dsn']]);

// A policy changed at run time: the next connection finds it.
rl_cmd($noev['dsn'], 'CONFIG', 'SET', 'maxmemory-policy', 'volatile-lfu');
$run('noeviction turned volatile-lfu, a new connection', ['dsn' => $noev['dsn'], 'read_timeout' => 6]);

// Per process: a forked child tells and counts for itself.
$pid = pcntl_fork();
if ($pid === 0) {
    $run('in a forked child, allkeys-lru', ['dsn' => $lru['dsn'], 'read_timeout' => 6]);
    exit(0);
}
pcntl_waitpid($pid, $status);
$logged();   // the child's line, shown by the child

// A password in the dsn is never shown.
$secret = $start('allkeys-random', '64mb');
$ports['SECRET'] = $secret['port'];
rl_cmd($secret['dsn'], 'CONFIG', 'SET', 'requirepass', 's3cret-pw');
$run('allkeys-random, with a password', ['dsn' => "redis://:s3cret-pw@127.0.0.1:$secret[port]"]);

// A user refused CONFIG (docs/acl.md's lock user, with the optional INFO block): asked
// INFO memory instead, on the same connection; the next connection asks INFO first.
$refusals = function (array $srv, string $user): string {
    $counts = [];
    foreach ((array) rl_cmd($srv['dsn'], 'ACL', 'LOG') as $entry) {
        $e = [];
        for ($i = 0; $i + 1 < count($entry); $i += 2) { $e[$entry[$i]] = $entry[$i + 1]; }
        // The server's own compare-and-delete, refused to a user without docs/acl.md's
        // `cad` block (Valkey 9, Redis 8.4), is not this test's: 104 runs it.
        if (in_array($e['object'], RL_ACL_CAD, true)) { continue; }
        if (($e['username'] ?? null) === $user) { $counts[$e['object']] = ($counts[$e['object']] ?? 0) + (int) $e['count']; }
    }
    ksort($counts);
    preg_match('/^cmdstat_info:calls=(\d+)/m', (string) rl_cmd($srv['dsn'], 'INFO', 'commandstats'), $m);
    $info = (int) ($m[1] ?? 0);   // this INFO of ours is counted once it has run
    $list = [];
    foreach ($counts as $cmd => $n) { $list[] = "$cmd x$n"; }
    return 'refused ' . ($list ? implode(', ', $list) : 'nothing') . ", INFO ran $info";
};
$aclSafe = $start('noeviction', '64mb');
$aclLru = $start('allkeys-lfu', '64mb');
$aclNone = $start('volatile-random', '64mb');
$ports += ['ACLSAFE' => $aclSafe['port'], 'ACLLRU' => $aclLru['port'], 'ACLNONE' => $aclNone['port']];
foreach ([$aclSafe, $aclLru] as $srv) {
    $dsn = rl_acl_user($srv['dsn'], 'app', ['user', 'eviction', 'mutex']);
    rl_cmd($srv['dsn'], 'CONFIG', 'RESETSTAT');
    $run($srv === $aclSafe ? 'ACL user, noeviction' : 'ACL user, allkeys-lfu', ['dsn' => $dsn, 'prefix' => 'app:']);
    $run('  the same user, another connection', ['dsn' => $dsn, 'prefix' => 'app:', 'read_timeout' => 6]);
    echo '  ', $refusals($srv, 'app'), "\n";
}
// Refused both: nothing is said, the lock works, and later connections ask nothing.
$dsn = rl_acl_user($aclNone['dsn'], 'app', ['user', 'mutex']);
$run('ACL user without INFO, volatile-random', ['dsn' => $dsn, 'prefix' => 'app:']);
$run('  the same user, another connection', ['dsn' => $dsn, 'prefix' => 'app:', 'read_timeout' => 6]);
echo '  ', $refusals($aclNone, 'app'), "\n";
echo 'the refusals rl_acl_refused() leaves out: ', implode(' ', array_diff(rl_acl_refused([$aclNone['dsn']], 'app', true), RL_ACL_CAD)), "\n";
?>
--EXPECT--
allkeys-lru: locked, evicting_servers=1, warnings: log: redis-lock: the Redis server at redis://127.0.0.1:LRU can evict lock keys (maxmemory-policy allkeys-lru, maxmemory 67108864 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
allkeys-lru again, another connection: locked, evicting_servers=1, warnings: none
a new connection was made: yes
volatile-ttl: locked, evicting_servers=2, warnings: log: redis-lock: the Redis server at redis://127.0.0.1:TTL can evict lock keys (maxmemory-policy volatile-ttl, maxmemory 1073741824 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
noeviction: locked, evicting_servers=2, warnings: none
maxmemory 0: locked, evicting_servers=2, warnings: none
noeviction turned volatile-lfu, a new connection: locked, evicting_servers=3, warnings: log: redis-lock: the Redis server at redis://127.0.0.1:NOEV can evict lock keys (maxmemory-policy volatile-lfu, maxmemory 67108864 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
in a forked child, allkeys-lru: locked, evicting_servers=1, warnings: log: redis-lock: the Redis server at redis://127.0.0.1:LRU can evict lock keys (maxmemory-policy allkeys-lru, maxmemory 67108864 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
allkeys-random, with a password: locked, evicting_servers=4, warnings: log: redis-lock: the Redis server at redis://127.0.0.1:SECRET can evict lock keys (maxmemory-policy allkeys-random, maxmemory 67108864 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
ACL user, noeviction: locked, evicting_servers=4, warnings: none
  the same user, another connection: locked, evicting_servers=4, warnings: none
  refused config|get x1, INFO ran 2
ACL user, allkeys-lfu: locked, evicting_servers=5, warnings: log: redis-lock: the Redis server at redis://127.0.0.1:ACLLRU can evict lock keys (maxmemory-policy allkeys-lfu, maxmemory 67108864 bytes): when its memory runs short a lock can vanish under its holder, and another process take it; set maxmemory-policy noeviction, or keep locks on a server of their own
  the same user, another connection: locked, evicting_servers=5, warnings: none
  refused config|get x1, INFO ran 1
ACL user without INFO, volatile-random: locked, evicting_servers=5, warnings: none
  the same user, another connection: locked, evicting_servers=5, warnings: none
  refused config|get x1, info x1, INFO ran 0
the refusals rl_acl_refused() leaves out: config|get info
