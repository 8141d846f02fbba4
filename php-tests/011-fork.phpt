--TEST--
Fork with a live connection: the child never reads the parent's replies, both keep working, and no token the child draws is one the parent draws
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
$drawn = tempnam(sys_get_temp_dir(), 'rl-fork-tokens');
$pid = pcntl_fork();
if ($pid === 0) {
    // Child: uses the same object and new ones; every reply must be its own.
    $ok = $parentLock->isLocked();
    $mine = new Lock(rl_key('fork-child'), 0, 30, ['dsn' => $dsn]);
    $tokens = [];
    for ($i = 0; $i < 300 && $ok; $i++) {
        $tokens[] = $t = $mine->tryLock();
        $ok = is_string($t) && $mine->isLocked() && $mine->tryLock() === false && $mine->releaseLock($t);
    }
    file_put_contents($drawn, implode("\n", $tokens));
    exit($ok ? 0 : 1);
}
// Parent, at the same time, on the inherited connection.
$other = new Lock(rl_key('fork-parent'), 0, 30, ['dsn' => $dsn]);
$ok = true;
$tokens = [];
for ($i = 0; $i < 300 && $ok; $i++) {
    $tokens[] = $t = $other->tryLock();
    $ok = is_string($t) && $other->isLocked() && $other->tryLock() === false && $other->releaseLock($t);
}
pcntl_waitpid($pid, $status);
echo "child: ", pcntl_wexitstatus($status) === 0 ? "ok" : "failed", "\n";
echo "parent: ", $ok ? "ok" : "failed", "\n";
$childTokens = explode("\n", (string) file_get_contents($drawn));
@unlink($drawn);
echo "tokens drawn by both: ", count($childTokens), " and ", count($tokens), ", in common: ", count(array_intersect($childTokens, $tokens)), "\n";
var_dump($parentLock->isLocked(), $parentLock->releaseLock(), $parentLock->isLocked());
?>
--EXPECT--
bool(true)
child: ok
parent: ok
tokens drawn by both: 300 and 300, in common: 0
bool(true)
bool(true)
bool(false)
