--TEST--
max_hold ends auto-renewal: the lock runs out max_hold after it was taken, not at lockOut and not later; the holder then sees it lost. The php.ini directives work the same way
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
foreach (['option', 'ini'] as $how) {
    $key = rl_key("max-hold-$how");
    if ($how === 'option') {
        $l = new Lock($key, 0, 0.2, ['dsn' => $dsn, 'auto_renew' => true, 'max_hold' => 0.6]);
    } else {
        ini_set('redis_lock.auto_renew', '1');
        ini_set('redis_lock.max_hold', '0.6');
        $l = new Lock($key, 0, 0.2, ['dsn' => $dsn]);
        ini_restore('redis_lock.auto_renew');
        ini_restore('redis_lock.max_hold');
    }
    $t0 = microtime(true);
    $l->addLock() or die("not acquired\n");
    // Watch the key from outside until it goes.
    while (rl_cmd($dsn, 'EXISTS', $key) === 1 && microtime(true) - $t0 < 3) { usleep(5000); }
    $gone = microtime(true) - $t0;
    printf("%s: renewed past lockOut: %s, gone at max_hold: %s\n", $how,
        var_export($gone > 0.3, true), var_export($gone > 0.55 && $gone < 0.7, true));
    var_dump($l->isOwned(), $l->releaseLock());
}
?>
--EXPECT--
option: renewed past lockOut: true, gone at max_hold: true
bool(false)
bool(false)
ini: renewed past lockOut: true, gone at max_hold: true
bool(false)
bool(false)
