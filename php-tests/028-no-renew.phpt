--TEST--
Without auto_renew, a holder that sleeps past its lockOut loses the lock to another process; its late release returns false and leaves the new holder's lock alone
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('no-renew');
$holder = pcntl_fork();
if ($holder === 0) {
    $l = new Lock($key, 0, 0.3, ['dsn' => $dsn]);
    $l->addLock() or exit(10);
    rl_cmd($dsn, 'SET', "$key:phase", 'held');
    usleep(1000000);
    $owned = $l->isOwned();
    $released = $l->releaseLock();
    $extended = $l->extendLock();
    exit(!$owned && !$released && !$extended ? 0 : 11);
}
while (rl_cmd($dsn, 'GET', "$key:phase") !== 'held') { usleep(2000); }
$t0 = microtime(true);
$n = new Lock($key, 2, 10, ['dsn' => $dsn]);
$tn = $n->addLock();
$waited = microtime(true) - $t0;
echo "taken when the lease ran out: ", var_export(is_string($tn) && $waited > 0.2 && $waited < 0.45, true), "\n";
pcntl_waitpid($holder, $st);
echo "late holder: not owned, release and extend refused: ", var_export(pcntl_wexitstatus($st) === 0, true), "\n";
$pttl = rl_cmd($dsn, 'PTTL', $key);
echo "new holder intact: ", var_export(rl_cmd($dsn, 'GET', $key) === $tn && $pttl > 9000, true), "\n";
var_dump($n->isOwned(), $n->releaseLock());
?>
--EXPECT--
taken when the lease ran out: true
late holder: not owned, release and extend refused: true
new holder intact: true
bool(true)
bool(true)
