--TEST--
packaging/redis_lock.ini (installed by make install and the .deb): priority 20, loads the module, and lists every directive with its default, in a form PHP reads back unchanged
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$file = file_get_contents(__DIR__ . '/../packaging/redis_lock.ini');
var_dump(preg_match('/^; priority=20$/m', $file) === 1);
var_dump(preg_match('/^extension=redis_lock\.so$/m', $file) === 1);

// Uncommented, pointed at this build, and read by a php with no other ini.
$ini = preg_replace('/^;(redis_lock\.)/m', '$1', $file);
$ini = str_replace('extension=redis_lock.so', 'extension=' . rl_ext(), $ini);
$tmp = tempnam(sys_get_temp_dir(), 'rl-ini');
file_put_contents($tmp, $ini);
$cmd = 'PHP_INI_SCAN_DIR= ' . escapeshellarg(PHP_BINARY) . ' -c ' . escapeshellarg($tmp)
     . ' -r ' . escapeshellarg('echo json_encode(ini_get_all("redis_lock", false));') . ' 2>&1';
$out = shell_exec($cmd);
unlink($tmp);
$read = json_decode((string) $out, true);
if (!is_array($read)) { exit("php did not read the file: $out\n"); }

// Every directive the module registers is in the file, with the module's default.
$defaults = ini_get_all('redis_lock', false);
echo count($defaults), " directives\n";
foreach ($defaults as $name => $default) {
    if (!preg_match('/^;' . preg_quote($name, '/') . ' = /m', $file)) { echo "$name: missing from the file\n"; }
    elseif (($read[$name] ?? null) !== $default) { echo "$name: the file says ", var_export($read[$name] ?? null, true), ", the default is ", var_export($default, true), "\n"; }
}
// And nothing the module does not know.
preg_match_all('/^;(redis_lock\.\w+) = /m', $file, $m);
foreach ($m[1] as $name) { if (!array_key_exists($name, $defaults)) { echo "$name: not a directive\n"; } }
echo "done\n";
?>
--EXPECT--
bool(true)
bool(true)
25 directives
done
