--TEST--
Waits an event loop drives under a real php-fpm (SAPI fpm-fcgi): a request waits for a held lock through its LockWait's stream (stream_select) and gets it from the release, woken by the grant; a request that ends mid-wait leaves nothing queued, and a request on the same worker after it waits again
--SKIPIF--
<?php
if (PHP_ZTS) die('skip php-fpm here is the NTS build');
if (!function_exists('pcntl_fork')) die('skip pcntl');
if (!is_executable('/usr/sbin/php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION)) die('skip no php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . ' (tools/env/deps.sh installs it)');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/_fpm.inc';
$dsn = rl_dsn();
$dir = sys_get_temp_dir() . '/rl-fpm-118-' . getmypid();
@mkdir($dir);
// await.php: waits through the stream; leave=1 ends the request mid-wait.
file_put_contents("$dir/await.php", <<<'PHP'
<?php
$l = new Lock($_GET['key'], 5, 10, ['dsn' => $_GET['dsn']]);
$w = $l->addLockAsync();
if (isset($_GET['leave'])) { echo 'left ', $w->isDone() ? 'done' : 'pending', ' ', php_sapi_name(); return; }
$t0 = microtime(true);
while (!$w->poll()) { $r = [$w->stream()]; $x = $y = null; stream_select($r, $x, $y, 5, 0); }
$t = $w->result();
echo is_string($t) ? 'got' : 'false', ' ', round(microtime(true) - $t0, 1) < 0.9 ? 'woken by the grant' : 'late', ' ', php_sapi_name(), ' ', $l->releaseLock($t) ? 'released' : 'not released';
PHP);
[$fpm, $port] = rl_start_fpm($dir);
try {
    $k = rl_key('fpm-async');
    $q = 'key=' . urlencode($k) . '&dsn=' . urlencode($dsn);
    $h = new Lock($k, 0, 30, ['dsn' => $dsn]);
    $t = $h->addLock();
    // A request that ends mid-wait: nothing of it stays queued.
    echo fcgi_get($port, "$dir/await.php", '/await', "$q&leave=1"), "\n";
    $queued = array_filter((array) rl_cmd($dsn, 'KEYS', "*$k*"), fn($x) => $x !== $k);
    echo "queue keys after it: ", count($queued), "\n";
    // A request that waits; the holder releases 0.3 s in (from a child: this process is in the request).
    $pid = pcntl_fork();
    if ($pid === 0) { usleep(300000); (new Lock($k, 0, 30, ['dsn' => $dsn]))->releaseLock($t); exit(0); }
    echo fcgi_get($port, "$dir/await.php", '/await', $q), "\n";
    pcntl_waitpid($pid, $st);
    echo "held after: ", var_export((new Lock($k, 0, 30, ['dsn' => $dsn]))->isLocked(), true), "\n";
} finally {
    proc_terminate($fpm, SIGQUIT);
    proc_close($fpm);
    array_map('unlink', glob("$dir/*"));
    rmdir($dir);
}
--EXPECT--
left pending fpm-fcgi
queue keys after it: 0
got woken by the grant fpm-fcgi released
held after: false
