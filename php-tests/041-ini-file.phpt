--TEST--
redis_lock.ini as make install and the .deb write it (tools/package/ini.php, from packaging/redis_lock.ini.in, the module's directives and docs/configuration.md's table): priority 20, loads the module, and lists every directive, commented, with its default, in a form PHP reads back unchanged
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$write = escapeshellarg(PHP_BINARY) . ' -n -d extension=' . escapeshellarg(rl_ext()) . ' '
       . escapeshellarg(__DIR__ . '/../tools/package/ini.php') . ' 2>&1';
exec($write, $lines, $status);
$file = implode("\n", $lines) . "\n";
if ($status !== 0) { exit("ini.php failed: $file"); }
var_dump(preg_match('/^; priority=20$/m', $file) === 1);
var_dump(preg_match('/^extension=redis_lock\.so$/m', $file) === 1);
var_dump(!str_contains($file, '@DIRECTIVES@'));

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

// Every directive the module registers is in the file, with the module's default,
// under a comment (its meaning, from the docs).
$defaults = ini_get_all('redis_lock', false);
echo count($defaults), " directives\n";
foreach ($defaults as $name => $default) {
    if (!preg_match('/^;' . preg_quote($name, '/') . ' = /m', $file)) { echo "$name: missing from the file\n"; }
    elseif (($read[$name] ?? null) !== $default) { echo "$name: the file says ", var_export($read[$name] ?? null, true), ", the default is ", var_export($default, true), "\n"; }
    elseif (!preg_match('/^; \S.*\n(;redis_lock\.\w+ = .*\n)*;' . preg_quote($name, '/') . ' = /m', $file)) { echo "$name: no comment above it\n"; }
}
// And nothing the module does not know.
preg_match_all('/^;(redis_lock\.\w+) = /m', $file, $m);
foreach ($m[1] as $name) { if (!array_key_exists($name, $defaults)) { echo "$name: not a directive\n"; } }
echo "done\n";
?>
--EXPECT--
bool(true)
bool(true)
bool(true)
28 directives
done
