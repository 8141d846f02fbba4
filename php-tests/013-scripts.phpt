--TEST--
An uncontended cycle is one SET and one EVALSHA; release falls back to EVAL after SCRIPT FLUSH
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
    echo json_encode($stats()), "\n";   // the first release loads its script by EVAL
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
{"eval":1,"evalsha":100,"set":100}
bool(true)
bool(true)
{"eval":1,"evalsha":2,"set":2}
