--TEST--
A forked child never listens on its parent's wake channel: both wait at once and both are woken
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$a = rl_key('fork-a');
$b = rl_key('fork-b');
// The parent gets its subscriber by waiting once.
$warm = new Lock("$a:warm", 0, 0.2, ['dsn' => $dsn]);
$warm->addLock();
$w = new Lock("$a:warm", 2, 5, ['dsn' => $dsn]);
$w->addLock() or die("warm-up failed\n");
$w->releaseLock();
// A third process holds both locks and frees them at the same instant.
$holder = pcntl_fork();
if ($holder === 0) {
    $la = new Lock($a, 0, 10, ['dsn' => $dsn]);
    $lb = new Lock($b, 0, 10, ['dsn' => $dsn]);
    $la->addLock() && $lb->addLock() or exit(1);
    rl_cmd($dsn, 'SET', "$a:held", '1');
    usleep(600000);
    $la->releaseLock();
    $lb->releaseLock();
    exit(0);
}
while (!rl_cmd($dsn, 'EXISTS', "$a:held")) { usleep(5000); }
$child = pcntl_fork();
if ($child === 0) {
    $t0 = microtime(true);
    $t = (new Lock($b, 3, 5, ['dsn' => $dsn, 'retry_delay' => 2.0, 'retry_delay_max' => 2.0]))->addLock();
    exit($t !== false && microtime(true) - $t0 < 1.2 ? 0 : 1);
}
$t0 = microtime(true);
$t = (new Lock($a, 3, 5, ['dsn' => $dsn, 'retry_delay' => 2.0, 'retry_delay_max' => 2.0]))->addLock();
$parentOk = $t !== false && microtime(true) - $t0 < 1.2;
pcntl_waitpid($child, $st);
printf("parent woken: %s, child woken: %s\n", var_export($parentOk, true), var_export(pcntl_wexitstatus($st) === 0, true));
pcntl_waitpid($holder, $st);
?>
--EXPECT--
parent woken: true, child woken: true
