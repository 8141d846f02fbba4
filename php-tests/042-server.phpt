--TEST--
The suite runs on the server it was asked for (REDIS_LOCK_TEST_SERVER: redis or valkey), in a supported version: Redis 7.0 or later, Valkey 8 or later
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$flavour = getenv('REDIS_LOCK_TEST_SERVER') ?: 'redis';
$private = rl_start_redis();
foreach (['the shared server' => rl_dsn(), 'a private server' => $private['dsn']] as $which => $dsn) {
    $info = (string) rl_cmd($dsn, 'INFO', 'server');
    // Valkey names itself in valkey_version (and keeps a redis_version for old clients).
    $isValkey = preg_match('/^valkey_version:(\d+)\./m', $info, $v) === 1;
    if (!$isValkey) { preg_match('/^redis_version:(\d+)\./m', $info, $v); }
    $is = $isValkey ? 'valkey' : 'redis';
    $min = $isValkey ? 8 : 7;
    echo "$which: ", $is === $flavour ? 'the server asked for' : "$is, not $flavour", ', ',
        (int) ($v[1] ?? 0) >= $min ? 'a supported version' : "version {$v[1]} is too old", "\n";
    // And it takes locks.
    $lock = new Lock(rl_key('server'), 0, 5, ['dsn' => $dsn]);
    var_dump($lock->releaseLock($lock->addLock()));
}
rl_stop_redis($private);
?>
--EXPECT--
the shared server: the server asked for, a supported version
bool(true)
a private server: the server asked for, a supported version
bool(true)
