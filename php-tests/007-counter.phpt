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
    $u = parse_url($dsn);
    $c = stream_socket_client("tcp://{$u['host']}:{$u['port']}");
    for ($r = 0; $r < $rounds; $r++) {
        $t = $l->addLock();
        if ($t === false) { return 2; }
        rl_send($c, ['GET', $counter]);
        $v = (int) rl_read($c);
        usleep(100);                         // widen the window a lost update needs
        rl_send($c, ['SET', $counter, (string) ($v + 1)]);
        rl_read($c);
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
