--TEST--
Fork with a live connection: the child never reads the parent's replies, and both keep working
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$held = rl_key('fork-held');
$parentLock = new Lock($held, 0, 30, ['dsn' => $dsn]);
$token = $parentLock->addLock();           // the connection is now open, and shared by fork
var_dump(is_string($token));
$pid = pcntl_fork();
if ($pid === 0) {
    // Child: uses the same object and new ones; every reply must be its own.
    $ok = $parentLock->isLocked();
    $mine = new Lock(rl_key('fork-child'), 0, 30, ['dsn' => $dsn]);
    for ($i = 0; $i < 300 && $ok; $i++) {
        $t = $mine->tryLock();
        $ok = is_string($t) && $mine->isLocked() && $mine->tryLock() === false && $mine->releaseLock($t);
    }
    exit($ok ? 0 : 1);
}
// Parent, at the same time, on the inherited connection.
$other = new Lock(rl_key('fork-parent'), 0, 30, ['dsn' => $dsn]);
$ok = true;
for ($i = 0; $i < 300 && $ok; $i++) {
    $t = $other->tryLock();
    $ok = is_string($t) && $other->isLocked() && $other->tryLock() === false && $other->releaseLock($t);
}
pcntl_waitpid($pid, $status);
echo "child: ", pcntl_wexitstatus($status) === 0 ? "ok" : "failed", "\n";
echo "parent: ", $ok ? "ok" : "failed", "\n";
var_dump($parentLock->isLocked(), $parentLock->releaseLock(), $parentLock->isLocked());
?>
--EXPECT--
bool(true)
child: ok
parent: ok
bool(true)
bool(true)
bool(false)
