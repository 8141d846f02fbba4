--TEST--
docs/async.md's examples parse: each PHP block in it (the Revolt, ReactPHP and Swoole ones are not run here: their libraries are not installable on Debian) and each file of docs/examples, which 113, 114 and 120 run; the Fibers and AMPHP blocks are the files' own code
--FILE--
<?php
$md = file_get_contents(__DIR__ . '/../docs/async.md');
preg_match_all('/```php\n(.*?)```/s', $md, $m);
$bad = [];
$tmp = tempnam(sys_get_temp_dir(), 'rl-117-');
foreach ($m[1] as $i => $code) {
    file_put_contents($tmp, "<?php\n" . $code);
    exec(escapeshellarg(PHP_BINARY) . ' -n -l ' . escapeshellarg($tmp) . ' 2>&1', $out, $rc);
    if ($rc !== 0) { $bad[] = "block $i: " . implode(' ', $out); }
    $out = [];
}
unlink($tmp);
echo count($m[1]), " blocks, ", count($bad) ? implode("\n", $bad) : 'all parse', "\n";
foreach (glob(__DIR__ . '/../docs/examples/*.php') as $f) {
    exec(escapeshellarg(PHP_BINARY) . ' -n -l ' . escapeshellarg($f) . ' 2>&1', $out, $rc);
    echo basename($f), ": ", $rc === 0 ? 'parses' : implode(' ', $out), "\n";
    $out = [];
}
// The functions the doc shows for Fibers and AMPHP are the example files' own, word for word.
$src = file_get_contents(__DIR__ . '/../docs/examples/fibers.php') . file_get_contents(__DIR__ . '/../docs/examples/amp.php');
foreach (['rl_await', 'rl_fiber_synchronized', 'rl_amp_wait'] as $fn) {
    preg_match('/\nfunction ' . $fn . '\(.*?\n}\n/s', $md, $d);
    echo "$fn: ", isset($d[0]) && str_contains($src, ltrim($d[0], "\n")) ? 'the same as the file' : 'differs from the file', "\n";
}
--EXPECT--
5 blocks, all parse
amp.php: parses
fibers.php: parses
metrics.php: parses
rl_await: the same as the file
rl_fiber_synchronized: the same as the file
rl_amp_wait: the same as the file
