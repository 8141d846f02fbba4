--TEST--
An uncontended cycle is two round trips: a plain SET and the release script while nobody asks for a fencing token (and no counter exists); after the first getFencingToken(), a short acquire script with the INCR inside (with the server's TIME as its floor, and a SET of the counter when the floor is above it) and the release script; both fall back to EVAL after SCRIPT FLUSH
--FILE--
<?php
require __DIR__ . '/_helper.inc';
// The scripts are what this counts: a server's own compare-and-delete (Valkey 9,
// Redis 8.4; 104-server-cad.phpt) is turned off with the bench and debug switch.
putenv('REDIS_LOCK_NO_CAD=1');
$srv = rl_start_redis();
try {
    $dsn = $srv['dsn'];
    $stats = function () use ($dsn) {
        $info = rl_cmd($dsn, 'INFO', 'commandstats');
        preg_match_all('/cmdstat_(\w+):calls=(\d+)/', $info, $m);
        $s = array_combine($m[1], array_map('intval', $m[2]));
        // These run inside the scripts: no round trip of their own. An EVALSHA that
        // finds no script (NOSCRIPT) counts as a call, before the EVAL that loads it.
        unset($s['config'], $s['info'], $s['get'], $s['del'], $s['exists'], $s['lpop'], $s['lindex']);
        ksort($s);
        return $s;
    };
    $key = rl_key('scripts');
    $l = new Lock($key, 0, 5, ['dsn' => $dsn]);
    $l->isLocked();                     // connect (and its handshake) before counting
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    for ($i = 0; $i < 100; $i++) { $l->addLock(); $l->releaseLock(); }
    // Nobody asked for a fencing token: a plain SET, the release script (loaded by
    // EVAL on its first call), and no counter.
    echo json_encode($stats()), ", counter: ", rl_cmd($dsn, 'EXISTS', "{{$key}}:fence"), "\n";
    $plain = new Lock(rl_key('scripts'), 0, 5, ['dsn' => $dsn, 'fencing' => false]);
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    for ($i = 0; $i < 100; $i++) { $plain->addLock(); $plain->releaseLock(); }
    echo json_encode($stats()), "\n";
    var_dump($plain->getFencingToken());
    // Released without a number: none can be issued for that hold any more.
    try { $l->getFencingToken(); echo "no exception\n"; } catch (LockException $e) { echo get_class($e), ": ", $e->getMessage(), "\n"; }
    // Held without a number: the first request issues it, with one check-and-INCR; the
    // new counter's 1 is below the server's clock in µs, which is the number then (the
    // counter SET to it). Clock readings outside the counted stretch (TIME counts).
    $before = rl_server_us($dsn);
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    $l->addLock();
    $first = $l->getFencingToken();
    var_dump(rl_is_fence($first), $l->getFencingToken() === $first, rl_cmd($dsn, 'GET', "{{$key}}:fence") === (string) $first);
    $l->releaseLock();
    var_dump($l->getFencingToken() === $first);    // kept after the release
    echo json_encode($stats()), "\n";
    $after = rl_server_us($dsn);
    echo "the server's clock when issued: ", var_export($first >= $before && $first <= $after, true), "\n";
    // From now on this process issues numbers as it takes locks: one script each way.
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    $last = $first;
    $increasing = true;
    for ($i = 0; $i < 100; $i++) {
        $l->addLock();
        $increasing = $increasing && $l->getFencingToken() > $last;
        $last = $l->getFencingToken();
        $l->releaseLock();
    }
    echo json_encode($stats()), ", increasing: ", var_export($increasing, true),
        ", last: the counter's ", var_export(rl_cmd($dsn, 'GET', "{{$key}}:fence") === (string) $last, true),
        ", at least 100 above the first: ", var_export($last - $first >= 100, true), "\n";
    rl_cmd($dsn, 'SCRIPT', 'FLUSH');
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    $t = $l->addLock();
    var_dump($l->releaseLock($t));
    $t = $l->addLock();
    $f = $l->getFencingToken();
    var_dump($l->releaseLock($t), rl_is_fence($f, $last), rl_cmd($dsn, 'GET', "{{$key}}:fence") === (string) $f);
    echo json_encode($stats()), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECTF--
{"eval":1,"evalsha":100,"set":100}, counter: 0
{"evalsha":100,"set":100}
NULL
LockException: redis-lock: no fencing token for the lock "%s": this object no longer holds it (its lease ran out, someone else took it, or it was released)
bool(true)
bool(true)
bool(true)
bool(true)
{"eval":1,"evalsha":2,"incr":1,"set":2,"time":1}
the server's clock when issued: true
{"evalsha":200,"incr":100,"set":200,"time":100}, increasing: true, last: the counter's true, at least 100 above the first: true
bool(true)
bool(true)
bool(true)
bool(true)
{"eval":2,"evalsha":4,"incr":2,"set":4,"time":2}
