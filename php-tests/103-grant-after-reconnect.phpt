--TEST--
A grant heard after the wait's connection changed (a reconnect: a failover, a node back from its own files, which may still hand out grants from a queue the real master has moved past) is checked where the key lives before the lock counts as taken: a forged grant on the wait's channel after its connection was reset is not taken while another holds the key, and the wait goes on to its deadline; a grant heard on the connection the wait started on is taken as before
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$proxy = rl_fault_proxy($srv['port']);
$file = sys_get_temp_dir() . '/rl-103-' . getmypid();
try {
    $key = rl_key('after-reconnect');
    $holder = new Lock($key, 0, 30, ['dsn' => $dsn]);
    $ht = $holder->addLock();
    /** The first entry queued for $key once it is there, then a grant forged for it on its channel. */
    $forge = function (bool $reset) use ($dsn, $proxy, $key, $file): int {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $entry = null;
            for ($i = 0; $i < 200 && !$entry; $i++) { usleep(10000); $entry = rl_cmd($dsn, 'LINDEX', "{{$key}}:queue", '0'); }
            if ($reset) {
                // The wait's connection ends; it reconnects and listens again.
                usleep(100000);
                rl_proxy($proxy, 'reset');
                usleep(50000);
            }
            // Until the wait listens on the channel of an entry of its (after a reset, the
            // one it queued again: the first stays ahead until a release passes it over).
            $channel = null;
            for ($i = 0; $i < 300 && $channel === null; $i++) {
                foreach ((array) rl_cmd($dsn, 'LRANGE', "{{$key}}:queue", '0', '-1') as $entry) {
                    [$token, $ch] = rl_queue_entry((string) $entry);
                    if (rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $ch)[1] >= 1) { $channel = $ch; }
                }
                usleep(5000);
            }
            file_put_contents($file, (string) rl_cmd($dsn, 'PUBLISH', $channel, 'g@' . intdiv(rl_server_us($dsn), 1000) . ':' . $token));
            exit(0);
        }
        return $pid;
    };

    // After a reset: the forged grant is checked against the key, which the holder has.
    $pid = $forge(true);
    $w = new Lock($key, 1.5, 10, ['dsn' => $proxy['dsn']]);
    $t0 = microtime(true);
    $got = $w->addLock();
    $took = microtime(true) - $t0;
    pcntl_waitpid($pid, $st);
    echo "after a reconnect: the grant was heard: ", file_get_contents($file) >= 1 ? 'yes' : 'no', ", taken: ", var_export($got, true),
        ", waited to its deadline: ", var_export($took > 1.4, true), ", the holder still holds it: ", var_export($holder->isOwned(), true), "\n";

    // Without a reconnect, a grant is taken as the lock's (a real one, here).
    $pid = pcntl_fork();
    if ($pid === 0) {
        usleep(300000);
        exit((new Lock($key, 0, 30, ['dsn' => $dsn]))->releaseLock($ht) ? 0 : 1);
    }
    $got = $w->addLock();
    pcntl_waitpid($pid, $st);
    echo "a grant on the same connection: taken: ", var_export(is_string($got) && rl_cmd($dsn, 'GET', $key) === $got, true), "\n";
} finally {
    @unlink($file);
    rl_stop_proxy($proxy);
    rl_stop_redis($srv);
}
?>
--EXPECT--
after a reconnect: the grant was heard: yes, taken: false, waited to its deadline: true, the holder still holds it: true
a grant on the same connection: taken: true
