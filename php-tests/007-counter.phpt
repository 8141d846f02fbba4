--TEST--
Sixteen processes do a non-atomic GET/SET increment under the lock: no update is lost
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('counter');
$counter = "$key:value";
rl_cmd($dsn, 'SET', $counter, '0');
$rounds = 50;
$codes = rl_fork(16, function ($i) use ($dsn, $key, $counter, $rounds) {
    $l = new Lock($key, 10, 5, ['dsn' => $dsn] + RL_PATIENT);
    $c = new Resp($dsn, 60, 60);
    for ($r = 0; $r < $rounds; $r++) {
        $t = $l->addLock();
        if ($t === false) { return 2; }
        $v = (int) $c->ask('GET', $counter);
        usleep(100);                         // widen the window a lost update needs
        $c->ask('SET', $counter, (string) ($v + 1));
        if (!$l->releaseLock($t)) { return 3; }
    }
    return 0;
});
echo "exit codes: ", implode(',', array_unique($codes)), "\n";
echo "counter: ", rl_cmd($dsn, 'GET', $counter), " of ", 16 * $rounds, "\n";
?>
--EXPECT--
exit codes: 0
counter: 800 of 800
