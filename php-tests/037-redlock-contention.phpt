--TEST--
Redlock: 8 contending processes do non-atomic increments with no lost update; the watchdog keeps a Redlock past 3x its lease by majority; object destruction releases it on every node
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$nodes = rl_start_many(5);
$servers = array_column($nodes, 'dsn');
$data = rl_dsn();
try {
    $key = rl_key('redlock-counter');
    $codes = rl_fork(8, function ($i) use ($servers, $data, $key) {
        $l = new Lock($key, 10, 5, ['servers' => $servers] + RL_PATIENT);
        for ($n = 0; $n < 25; $n++) {
            $l->addLock() or exit(20);
            $v = (int) rl_cmd($data, 'GET', "$key:counter");
            usleep(200);
            rl_cmd($data, 'SET', "$key:counter", (string) ($v + 1));
            $l->releaseLock() or exit(21);
        }
        return 0;
    });
    echo "children: ", implode(',', $codes), ", counter: ", rl_cmd($data, 'GET', "$key:counter"), "\n";

    $key = rl_key('redlock-renew');
    $l = new Lock($key, 0, 0.3, ['servers' => $servers, 'auto_renew' => true]);
    $l->addLock();
    // One node dies meanwhile: the other four still make a majority for renewals.
    rl_kill_redis($nodes[0]);
    usleep(1000000);
    $other = new Lock($key, 0, 5, ['servers' => array_slice($servers, 1)]);
    echo "renewed past 3x its lease: ", var_export($l->isOwned(), true), ", others refused: ", var_export($other->tryLock() === false, true), "\n";
    unset($l);
    $left = 0;
    foreach (array_slice($servers, 1) as $dsn) { $left += rl_cmd($dsn, 'EXISTS', $key); }
    echo "after the object is gone, left on the live nodes: $left\n";
} finally {
    foreach ($nodes as $n) { rl_stop_redis($n); }
}
?>
--EXPECT--
children: 0,0,0,0,0,0,0,0, counter: 200
renewed past 3x its lease: true, others refused: true
after the object is gone, left on the live nodes: 0
