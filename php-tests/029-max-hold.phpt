--TEST--
max_hold ends auto-renewal: the lock runs out max_hold after it was taken, not at lockOut and not later; the holder then sees it lost. The php.ini directives work the same way
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
foreach (['option', 'ini'] as $how) {
    $key = rl_key("max-hold-$how");
    if ($how === 'option') {
        $l = new Lock($key, 0, 0.5, ['dsn' => $dsn, 'auto_renew' => true, 'max_hold' => 1.5]);
    } else {
        ini_set('redis_lock.auto_renew', '1');
        ini_set('redis_lock.max_hold', '1.5');
        $l = new Lock($key, 0, 0.5, ['dsn' => $dsn]);
        ini_restore('redis_lock.auto_renew');
        ini_restore('redis_lock.max_hold');
    }
    $t0 = microtime(true);
    $l->addLock() or die("not acquired\n");
    // Watch the key from outside until it goes.
    while (rl_cmd($dsn, 'EXISTS', $key) === 1 && microtime(true) - $t0 < 3) { usleep(5000); }
    $gone = microtime(true) - $t0;
    // A 0.5 s lease renewed every 0.17 s: a watchdog 0.3 s without a core still keeps
    // it. Gone at max_hold (1.5 s), not when a last full lease would end (up to 2 s):
    // the 0.25 s between is room for this loop waiting for a core on a busy machine.
    printf("%s: renewed past lockOut: %s, gone at max_hold: %s\n", $how,
        var_export($gone > 0.75, true), var_export($gone > 1.45 && $gone < 1.75, true));
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
