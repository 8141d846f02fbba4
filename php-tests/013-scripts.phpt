--TEST--
An uncontended cycle is two round trips: the acquire script (SET NX PX and the fencing INCR inside) and the release script, or a plain SET with fencing off; both fall back to EVAL after SCRIPT FLUSH
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
try {
    $dsn = $srv['dsn'];
    $stats = function () use ($dsn) {
        $info = rl_cmd($dsn, 'INFO', 'commandstats');
        preg_match_all('/cmdstat_(\w+):calls=(\d+)/', $info, $m);
        $s = array_combine($m[1], array_map('intval', $m[2]));
        // These run inside the scripts: no round trip of their own.
        unset($s['config'], $s['info'], $s['get'], $s['del'], $s['exists']);
        ksort($s);
        return $s;
    };
    $l = new Lock(rl_key('scripts'), 0, 5, ['dsn' => $dsn]);
    $l->isLocked();                     // connect (and its handshake) before counting
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    for ($i = 0; $i < 100; $i++) { $l->addLock(); $l->releaseLock(); }
    echo json_encode($stats()), "\n";   // the first calls load the scripts by EVAL
    $plain = new Lock(rl_key('scripts'), 0, 5, ['dsn' => $dsn, 'fencing' => false]);
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    for ($i = 0; $i < 100; $i++) { $plain->addLock(); $plain->releaseLock(); }
    echo json_encode($stats()), "\n";
    var_dump($plain->getFencingToken(), $l->getFencingToken());
    rl_cmd($dsn, 'SCRIPT', 'FLUSH');
    rl_cmd($dsn, 'CONFIG', 'RESETSTAT');
    $t = $l->addLock();
    var_dump($l->releaseLock($t));
    $t = $l->addLock();
    var_dump($l->releaseLock($t));
    echo json_encode($stats()), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
{"eval":2,"evalsha":200,"incr":100,"set":100}
{"evalsha":100,"set":100}
NULL
int(100)
bool(true)
bool(true)
{"eval":2,"evalsha":4,"incr":2,"set":2}
