--TEST--
Passing server states: a server still loading its dataset (LOADING, a restart with a slow load) is a LockConnectionException that names the state when there is no time to wait, or when the wait ends first; with time to wait, the acquisition waits it out (even on its first try) and gets the lock. Nothing is left behind by a refused try
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$srv = rl_start_redis(['--enable-debug-command', 'yes']);
try {
    // About 40,000 keys, each loaded 50 µs slower: a load of 2 s or more.
    rl_cmd($srv['dsn'], 'DEBUG', 'POPULATE', '40000');
    rl_cmd($srv['dsn'], 'SAVE');
    rl_kill_redis($srv);
    $srv = rl_start_redis(['--enable-debug-command', 'yes', '--key-load-delay', '50', '--loading-process-events-interval-bytes', '1024'], $srv['port']);
    $loading = rl_cmd($srv['dsn'], 'GET', 'x');
    echo "the server is loading: ", var_export($loading instanceof RuntimeException && str_starts_with($loading->getMessage(), 'LOADING'), true), "\n";
    $key = rl_key('loading');
    $o = ['dsn' => $srv['dsn']];
    $show = function (Throwable $e) use ($srv) {
        $m = $e->getMessage();
        return get_class($e) . ', names the address: ' . var_export(str_contains($m, "127.0.0.1:{$srv['port']}"), true)
            . ', the state: ' . var_export(str_contains($m, 'LOADING') && str_contains($m, 'loading its dataset'), true);
    };
    try { (new Lock($key, 0, 10, $o))->addLock(); echo "no wait: no error\n"; }
    catch (LockException $e) { echo "no wait: ", $show($e), "\n"; }
    $t0 = microtime(true);
    try { (new Lock($key, 0.3, 10, $o))->addLock(); echo "a short wait: no error\n"; }
    catch (LockException $e) { printf("a short wait: %s, after the wait: %s\n", $show($e), var_export(microtime(true) - $t0 >= 0.3, true)); }
    $l = new Lock($key, 15, 10, $o);
    $t = $l->addLock();
    echo "a long wait: token ", var_export(is_string($t), true), ", the server done loading: ",
        var_export(rl_cmd($srv['dsn'], 'DBSIZE') >= 40000, true), "\n";
    echo "released: ", var_export($l->releaseLock(), true), ", left: ", rl_cmd($srv['dsn'], 'EXISTS', $key), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
the server is loading: true
no wait: LockConnectionException, names the address: true, the state: true
a short wait: LockConnectionException, names the address: true, the state: true, after the wait: true
a long wait: token true, the server done loading: true
released: true, left: 0
