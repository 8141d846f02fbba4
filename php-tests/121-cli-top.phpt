--TEST--
redis-lock top, driven in a real terminal (tmux) as a person would: its screen shows the held key with its holder and three waiters, and the pool's lock name from a metrics endpoint with its counts, losses, wait p50/p99 and a rate once a second frame came; q ends it and gives the terminal back; --once prints one frame; bad options are refused
--SKIPIF--
<?php
if (!function_exists('pcntl_fork')) die('skip pcntl');
if (!is_executable('/usr/bin/tmux')) die('skip no tmux (tools/env/deps.sh installs it)');
--FILE--
<?php
require __DIR__ . '/_cli.inc';
$dsn = rl_dsn();
$dir = sys_get_temp_dir() . '/rl-top-121-' . getmypid();
@mkdir($dir);
$base = rl_key('top');
// A metrics endpoint in one process of its own (php -S): its requests take locks
// named $base:orders:N (folded: ...:orders:*), the pool being that one process.
file_put_contents("$dir/router.php", <<<'PHP'
<?php
if ($_SERVER['REQUEST_URI'] === '/metrics') { header('Content-Type: text/plain; version=0.0.4'); echo redis_lock_metrics_text(); return; }
$l = new Lock($_GET['key'], (float) $_GET['wait'], 10, ['dsn' => $_GET['dsn']]);
$t = $l->addLock();
if ($t !== false) { usleep(10000); $l->releaseLock($t); }
// A hold taken from under synchronized() (a lease short enough that its release waits
// for the answer): LockLostException, counted as a loss.
if (isset($_GET['lose'])) {
    try {
        (new Lock($_GET['key'], 0, 0.4, ['dsn' => $_GET['dsn']]))->synchronized(fn() => (new Lock($_GET['key'], 0, 10, ['dsn' => $_GET['dsn']]))->forceReleaseLock());
    } catch (LockLostException $e) { echo 'LockLostException'; return; }
}
echo $t === false ? 'busy' : 'ok';
PHP);
$port = rl_free_port();
$server = proc_open([PHP_BINARY, '-n', '-d', 'extension=' . rl_ext(), '-S', "127.0.0.1:$port", "$dir/router.php"], [1 => ['file', "$dir/server.out", 'w'], 2 => ['file', "$dir/server.out", 'a']], $pipes);
$deadline = microtime(true) + 10;
while (!@fsockopen('127.0.0.1', $port) && microtime(true) < $deadline) { usleep(50000); }
$request = fn(string $query) => @file_get_contents("http://127.0.0.1:$port/work?dsn=" . urlencode($dsn) . "&$query");
$session = 'rl-top-' . getmypid();
$screen = fn() => (string) shell_exec('tmux capture-pane -p -t ' . escapeshellarg($session) . ' 2>/dev/null');
$children = [];
try {
    for ($i = 1; $i <= 6; $i++) { $request('key=' . urlencode("$base:orders:$i") . '&wait=1'); }
    // A held key with three waiters, and a wait that times out on it through the endpoint.
    $held = "$base:orders:9";
    $children[] = $holder = pcntl_fork();
    if ($holder === 0) { $l = new Lock($held, 0, 30, ['dsn' => $dsn, 'owner_info' => true]); $l->addLock(); sleep(30); exit(0); }
    usleep(200000);
    for ($i = 0; $i < 3; $i++) {
        $children[] = $pid = pcntl_fork();
        if ($pid === 0) { (new Lock($held, 25, 30, ['dsn' => $dsn]))->addLock(); exit(0); }
    }
    echo 'timed out: ', $request('key=' . urlencode($held) . '&wait=0.3'), "\n";
    echo 'lost: ', $request('key=' . urlencode("$base:orders:7") . '&wait=1&lose=1'), "\n";

    $cmd = implode(' ', array_map('escapeshellarg', [PHP_BINARY, '-n', '-d', 'extension=' . rl_ext(), '-d', 'extension=posix', rl_cli_path(),
        "--dsn=$dsn", 'top', "$base:*", "--metrics=http://127.0.0.1:$port/metrics", '--interval=0.5']));
    // Then the terminal's modes, as top left them.
    exec('tmux new-session -d -s ' . escapeshellarg($session) . ' -x 200 -y 40 ' . escapeshellarg("$cmd; stty -a > $dir/stty.after"), $o, $rc);
    echo "tmux started: ", $rc === 0 ? 'yes' : "no ($rc)", "\n";
    // The screen, once the waiters queued and the endpoint answered.
    $deadline = microtime(true) + 15;
    do { usleep(200000); $s = $screen(); } while (!preg_match('/orders:9 .* 3 /', $s) && microtime(true) < $deadline);
    $lines = explode("\n", $s);
    $row = fn(string $start) => array_values(array_filter($lines, fn($l) => str_starts_with($l, $start)))[0] ?? '';
    echo 'title: ', str_contains($s, 'redis-lock top') && str_contains($s, 'q to quit') ? 'yes' : 'no', "\n";
    echo 'locks line: ', preg_replace('/\d+ keys?/', 'N keys', $row('LOCKS ON REDIS')), "\n";
    $k = preg_split('/\s+/', trim($row($held)));
    echo 'held key: kind ', $k[1] ?? '-', ', state ', $k[2] ?? '-', ', holders ', $k[4] ?? '-', ', waiters ', $k[5] ?? '-', ', owner sapi ', $k[7] ?? '-', "\n";
    $n = preg_split('/\s+/', trim($row(preg_replace('/:[0-9a-f]{12}$/', ':*', $base) . ':orders:*')));
    echo 'name row: acquired ', $n[2] ?? '-', ', waits ', $n[3] ?? '-', ', timeouts ', $n[4] ?? '-', ', lost ', $n[5] ?? '-', ', wait p50 ', preg_match('/^[\d.]+ms$/', $n[9] ?? '') ? 'ms' : ($n[9] ?? '-'), ', wait p99 in 256-512 ms: ', preg_match('/^([\d.]+)ms$/', $n[10] ?? '', $x) && $x[1] > 256 && $x[1] <= 512 ? 'yes' : ($n[10] ?? '-'), "\n";
    // More acquisitions: a later frame gives a rate.
    for ($i = 0; $i < 4; $i++) { $request('key=' . urlencode("$base:orders:$i") . '&wait=1'); }
    $deadline = microtime(true) + 10;
    do { usleep(200000); $s = $screen(); } while (!preg_match('/orders:\*\s+(?!0\.0\s)\d[\d.]*\s+12\s/', $s) && microtime(true) < $deadline);
    echo 'a rate after more acquisitions: ', preg_match('/orders:\*\s+(?!0\.0\s)(\d[\d.]*)\s+(12)\s/', $s, $x) && $x[1] > 0 ? "yes (acquired $x[2])" : "no\n$s", "\n";
    // q ends it, and the session with it.
    exec('tmux send-keys -t ' . escapeshellarg($session) . ' q');
    $deadline = microtime(true) + 5;
    do { usleep(100000); exec('tmux has-session -t ' . escapeshellarg($session) . ' 2>/dev/null', $o, $alive); } while ($alive === 0 && microtime(true) < $deadline);
    echo 'after q: ', $alive === 0 ? 'still running' : 'ended', "\n";
    $modes = (string) @file_get_contents("$dir/stty.after");
    echo 'the terminal given back: ', preg_match('/(?<!-)\bicanon\b/', $modes) && preg_match('/(?<![-\w])echo\b/', $modes) ? 'canonical, echoing' : "no: $modes", "\n";
} finally {
    exec('tmux kill-session -t ' . escapeshellarg($session) . ' 2>/dev/null');
    foreach ($children as $pid) { posix_kill($pid, SIGKILL); pcntl_waitpid($pid, $st); }
    proc_terminate($server);
    proc_close($server);
}
// --once, and what top refuses.
$r = rl_cli(["--dsn=$dsn", 'top', "$base:*", '--once']);
echo 'once: rc ', $r['rc'], ', no screen control: ', str_contains($r['out'], "\e[") ? 'no' : 'yes', ', ', trim(explode("\n", trim($r['out']))[count(explode("\n", trim($r['out']))) - 1]), "\n";
foreach ([['top', '--interval=0'], ['top', '--metrics=ftp://x'], ['list', '--once'], ['top', '--json'], ['top', 'a', 'b']] as $args) {
    $r = rl_cli(array_merge(["--dsn=$dsn"], $args));
    echo implode(' ', $args), ': rc ', $r['rc'], ', ', strtok($r['err'], "\n"), "\n";
}
exec('rm -rf ' . escapeshellarg($dir));
?>
--EXPECT--
timed out: busy
lost: LockLostException
tmux started: yes
title: yes
locks line: LOCKS ON REDIS: N keys, 1 held, 3 waiters
held key: kind lock, state write, holders 1, waiters 3, owner sapi cli
name row: acquired 8, waits 1, timeouts 1, lost 1, wait p50 ms, wait p99 in 256-512 ms: yes
a rate after more acquisitions: yes (acquired 12)
after q: ended
the terminal given back: canonical, echoing
once: rc 0, no screen control: yes, (no --metrics=URL: the pool's lock names are not shown)
top --interval=0: rc 2, redis-lock: --interval must be seconds from 0.1 to 3600, not "0"
top --metrics=ftp://x: rc 2, redis-lock: --metrics must be an http:// or https:// URL, not "ftp://x"
list --once: rc 2, redis-lock: --once is for top only
top --json: rc 2, redis-lock: top has no --json: use list --json, or the metrics endpoint
top a b: rc 2, redis-lock: top takes at most one PATTERN
