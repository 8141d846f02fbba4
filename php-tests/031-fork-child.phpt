--TEST--
Fork: a child's exit (normal, exit(), fatal error, its copy destroyed) never releases the parent's lock nor stops its renewals, and a child never renews its parent's locks
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('fork-parent');
$l = new Lock($key, 0, 0.3, ['dsn' => $dsn, 'auto_renew' => true]);
$t = $l->addLock();
$ways = [
    'return'      => fn() => 0,
    'exit()'      => function () { exit(0); },
    'unset copy'  => function () use (&$l) { $l = null; return 0; },
    'fatal error' => function () { trigger_error('boom', E_USER_ERROR); },
];
foreach ($ways as $name => $fn) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        ini_set('display_errors', '0');
        // The child takes an auto-renewed lock of its own: it has a watchdog too.
        $own = new Lock("$key:child", 0, 0.3, ['dsn' => $dsn, 'auto_renew' => true]);
        $own->addLock();
        $rc = $fn();
        exit($rc);
    }
    pcntl_waitpid($pid, $st);
    echo str_pad($name, 12), ": parent's lock kept: ", var_export(rl_cmd($dsn, 'GET', $key) === $t, true),
        ", child's own lock released: ", var_export(rl_cmd($dsn, 'EXISTS', "$key:child") === 0, true), "\n";
}
// The parent's watchdog still renews: 3x lockOut later it still holds the lock.
usleep(1000000);
var_dump($l->isOwned(), rl_cmd($dsn, 'GET', $key) === $t);

// A child does not renew what its parent holds: with the parent gone (SIGKILL), the
// parent's lock runs out on time although the child, and the child's watchdog, live on.
$k2 = rl_key('fork-orphan');
$script = '$d = ' . var_export($dsn, true) . '; $k = ' . var_export($k2, true) . ';'
    . '$l = new Lock($k, 0, 0.3, ["dsn" => $d, "auto_renew" => true]); $l->addLock();'
    . 'if (pcntl_fork() === 0) { $c = new Lock("$k:child", 0, 0.3, ["dsn" => $d, "auto_renew" => true]); $c->addLock(); usleep(1500000); exit(0); }'
    . 'echo "ready\n"; sleep(10);';
$proc = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . rl_ext(), '-r', $script], [1 => ['pipe', 'w']], $pipes);
echo trim(fgets($pipes[1])), "\n";
usleep(400000);                                 // renewed past one lease by the parent
$alive = rl_cmd($dsn, 'EXISTS', $k2);
$parent = proc_get_status($proc)['pid'];
posix_kill($parent, SIGKILL);
$t0 = microtime(true);
while (rl_cmd($dsn, 'EXISTS', $k2) === 1 && microtime(true) - $t0 < 2) { usleep(5000); }
$gone = microtime(true) - $t0;
echo "held while the parent lived: $alive, ran out after the parent died: ", var_export($gone < 0.45, true),
    ", the child still renews its own: ", rl_cmd($dsn, 'EXISTS', "$k2:child"), "\n";
proc_close($proc);
?>
--EXPECT--
return      : parent's lock kept: true, child's own lock released: true
exit()      : parent's lock kept: true, child's own lock released: true
unset copy  : parent's lock kept: true, child's own lock released: true
fatal error : parent's lock kept: true, child's own lock released: true
bool(true)
bool(true)
ready
held while the parent lived: 1, ran out after the parent died: true, the child still renews its own: 1
