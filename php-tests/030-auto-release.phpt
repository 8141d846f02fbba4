--TEST--
Auto-release: a lock still held is released when its object is destroyed, at script end, after exit() and after a fatal error (checked in separate php processes), and never touches a lock someone else holds now
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$php = escapeshellarg(PHP_BINARY) . ' -n -d extension=' . escapeshellarg(rl_ext()) . ' -d memory_limit=16M';

// Object destruction: unset, end of a function's scope, a temporary object.
$key = rl_key('destroy');
$l = new Lock($key, 0, 30, ['dsn' => $dsn]);
$l->addLock();
echo "held: ", rl_cmd($dsn, 'EXISTS', $key), "\n";
unset($l);
echo "after unset: ", rl_cmd($dsn, 'EXISTS', $key), "\n";
(function () use ($dsn, $key) { (new Lock($key, 0, 30, ['dsn' => $dsn, 'auto_renew' => true]))->addLock(); })();
echo "after a temporary object: ", rl_cmd($dsn, 'EXISTS', $key), "\n";
$keep = new Lock($key, 0, 30, ['dsn' => $dsn]);
$keep->addLock();
(function () use ($dsn, $key) { $inner = new Lock("$key:inner", 0, 30, ['dsn' => $dsn]); $inner->addLock(); })();
echo "after the function returned: ", rl_cmd($dsn, 'EXISTS', "$key:inner"), ", the outer lock: ", rl_cmd($dsn, 'EXISTS', $key), "\n";
$keep->releaseLock();

// An object whose lease ran out while someone else took the lock: its end leaves that lock alone.
$old = new Lock($key, 0, 0.05, ['dsn' => $dsn]);
$old->addLock();
usleep(100000);
$new = new Lock($key, 0, 30, ['dsn' => $dsn]);
$tn = $new->addLock();
unset($old);
echo "new holder intact: ", var_export(rl_cmd($dsn, 'GET', $key) === $tn, true), "\n";
unset($new);

// Separate processes: the lease is 30 s, so only a release can free the key in time.
$cases = [
    'script end'   => '$l->addLock(); echo "ok";',
    'exit()'       => '$l->addLock(); exit(3);',
    'fatal error'  => '$l->addLock(); trigger_error("boom", E_USER_ERROR);',
    'out of memory' => '$l->addLock(); $a = []; while (true) { $a[] = str_repeat("x", 1 << 20); }',
    'global kept alive' => '$GLOBALS["keep"] = $l; $l->addLock(); register_shutdown_function(function () { echo "shutdown"; });',
    'auto_renew, fatal error' => '$l = new Lock($k, 0, 0.3, ["dsn" => $d, "auto_renew" => true]); $l->addLock(); usleep(500000); trigger_error("boom", E_USER_ERROR);',
];
foreach ($cases as $name => $code) {
    $k = rl_key('auto-release');
    $script = '$k = ' . var_export($k, true) . '; $d = ' . var_export($dsn, true) . ';'
        . '$l = new Lock($k, 0, 30, ["dsn" => $d]);' . $code;
    $out = shell_exec("$php -r " . escapeshellarg($script) . ' 2>&1');
    $fatal = str_contains((string) $out, 'Fatal error') ? 'fatal' : 'clean';
    echo str_pad($name, 24), ": $fatal, key left: ", rl_cmd($dsn, 'EXISTS', $k), ", fencing counter: ", rl_cmd($dsn, 'EXISTS', "{{$k}}:fence"), "\n";
}
?>
--EXPECT--
held: 1
after unset: 0
after a temporary object: 0
after the function returned: 0, the outer lock: 1
new holder intact: true
script end              : clean, key left: 0, fencing counter: 0
exit()                  : clean, key left: 0, fencing counter: 0
fatal error             : fatal, key left: 0, fencing counter: 0
out of memory           : fatal, key left: 0, fencing counter: 0
global kept alive       : clean, key left: 0, fencing counter: 0
auto_renew, fatal error : fatal, key left: 0, fencing counter: 0
