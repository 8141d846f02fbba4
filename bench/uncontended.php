<?php
// Uncontended acquire+release: this extension against the article's class on
// phpredis. Every round runs each case in a fresh process (bench/cycle.php), one
// after the other, so all see the same machine; the figures are medians over the
// rounds of each round's ratio to the article's class; the order of the cases
// turns by one each round. Then, where valgrind is
// installed, the user-space instructions per cycle, counted by callgrind: a figure
// that does not move with the machine's load.
// Usage: BENCH_PHP="php -n -d extension=..." php ... bench/uncontended.php [CYCLES] [ROUNDS]
//
// With --cad [CYCLES] [ROUNDS] (default 20000 cycles, 5 rounds): what the server spends
// on redis_lock's uncontended cycle, with its own compare-and-delete (Valkey 9,
// Redis 8.4: DELIFEQ or DELEX, no script) and with the scripts (REDIS_LOCK_NO_CAD=1,
// the bench switch that turns it off), in alternating fresh processes: the server's
// CPU (INFO cpu, user + sys) per cycle, the client's wall time, and the commands it
// ran per cycle (INFO commandstats). Writes bench/results/cad.md.
$cad = ($argv[1] ?? '') === '--cad';
if ($cad) { array_splice($argv, 1, 1); }
$cycles = (int) ($argv[1] ?? ($cad ? 20000 : 5000));
$rounds = (int) ($argv[2] ?? ($cad ? 5 : 21));
$php = getenv('BENCH_PHP') ?: PHP_BINARY;
$cycleScript = escapeshellarg(__DIR__ . '/cycle.php');
if ($cad) {
    $paths = ['cad' => 'server command (DELIFEQ / DELEX)', 'scripts' => 'scripts (REDIS_LOCK_NO_CAD=1)'];
    $got = [];
    for ($r = 0; $r < $rounds; $r++) {
        foreach ($r % 2 ? array_reverse($paths, true) : $paths as $path => $_) {
            $env = 'BENCH_SERVER=1' . ($path === 'scripts' ? ' REDIS_LOCK_NO_CAD=1' : '');
            $out = shell_exec("$env $php $cycleScript native $cycles 500");
            $m = json_decode((string) $out, true);
            if (!is_array($m) || !isset($m['server_cpu'])) { fwrite(STDERR, "bench/cycle.php native ($path) failed: $out\n"); exit(1); }
            $got[$path][] = $m;
        }
        fprintf(STDERR, "round %d/%d: server CPU %.2f µs (command) vs %.2f µs (scripts) a cycle\n", $r + 1, $rounds, end($got['cad'])['server_cpu'], end($got['scripts'])['server_cpu']);
    }
    $med = function (array $runs, string $f) { $xs = array_column($runs, $f); sort($xs); return $xs[intdiv(count($xs), 2)]; };
    $cmds = function (array $runs) {
        $c = end($runs)['commands'] ?? [];
        ksort($c);
        return implode(', ', array_map(fn($k, $v) => sprintf('%s %.2f', $k, $v), array_keys($c), $c));
    };
    require_once __DIR__ . '/../tools/lib/resp.php';
    $i = (string) Resp::once(getenv('REDIS_LOCK_DSN') ?: getenv('REDIS_LOCK_TEST_DSN') ?: 'redis://127.0.0.1:6379', 'INFO', 'server');
    // Valkey gives redis_version (7.2.4, for compatibility) and valkey_version.
    $server = preg_match('/^valkey_version:(\S+)/m', $i, $v) ? "Valkey $v[1]" : (preg_match('/^redis_version:(\S+)/m', $i, $v) ? "Redis $v[1]" : 'an unknown server');
    $lines = ["| release | server CPU µs a cycle | client wall µs a cycle | commands a cycle (INFO commandstats) |", '|---|---|---|---|'];
    foreach ($paths as $path => $label) {
        $lines[] = sprintf('| %s | %.2f | %.1f | %s |', $label, $med($got[$path], 'server_cpu'), $med($got[$path], 'wall'), $cmds($got[$path]));
    }
    $ratio = $med($got['cad'], 'server_cpu') / $med($got['scripts'], 'server_cpu');
    $text = "# The server's own compare-and-delete: what an uncontended cycle costs the server\n\n"
        . "`bench/uncontended.php --cad $cycles $rounds` on $server (one process at a time, each\n"
        . "$cycles `addLock()` + `releaseLock()` cycles of one `Lock` after 500 to warm up;\n"
        . "medians of $rounds rounds, the two paths alternating). `REDIS_LOCK_NO_CAD=1` is the\n"
        . "bench switch that makes the extension ignore the server's commands.\n\n"
        . implode("\n", $lines) . "\n\n"
        . sprintf("The server's CPU a cycle with its own command: %.2fx that with the scripts.\n", $ratio);
    echo $text;
    file_put_contents(__DIR__ . '/results/cad.md', $text);
    exit(0);
}
$cases = [
    'article' => 'article class (phpredis), one object',
    'native' => 'redis_lock, defaults',
    'native-fenced' => 'redis_lock, getFencingToken() every cycle',
    'native-nofence' => "redis_lock, 'fencing' => false",
    'native-owner' => "redis_lock, 'owner_info' => true",
    'native-renew' => "redis_lock, 'auto_renew' => true",
    'native-multi3' => 'redis_lock, a MultiLock of 3 keys',
    'native-nometrics' => 'redis_lock, redis_lock.metrics=0',
    'article-new' => 'article class, new object per cycle',
    'native-new' => 'redis_lock, new object per cycle',
];

// Without phpredis (Debian ships none for PHP 8.5 and 8.6) the article's class cannot
// run: its cases are left out, and the ratios are to redis_lock's defaults instead.
$article = trim((string) shell_exec("$php -r " . escapeshellarg('echo class_exists("Redis") ? 1 : 0;'))) === '1';
if (!$article) {
    $cases = array_filter($cases, fn($k) => !str_starts_with($k, 'article'), ARRAY_FILTER_USE_KEY);
    echo "(no phpredis for this PHP, and the article's class is written on it: its cases are left out; ratios are to redis_lock's defaults)\n";
}
$baseline = fn(string $case) => $article ? (str_ends_with($case, '-new') ? 'article-new' : 'article') : 'native';

// The pool's metrics are a php.ini switch, read at startup: their case runs with it off.
function php_for(string $php, string $case): string {
    return $case === 'native-nometrics' ? "$php -d redis_lock.metrics=0" : $php;
}
function run_case(string $php, string $script, string $case, int $cycles, int $warmup = 500): array {
    $php = php_for($php, $case);
    $out = shell_exec("$php $script " . escapeshellarg($case) . " $cycles $warmup");
    $r = json_decode((string) $out, true);
    if (!is_array($r)) { fwrite(STDERR, "bench/cycle.php $case failed: $out\n"); exit(1); }
    return $r;
}
function median(array $xs): float { sort($xs); $n = count($xs); return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2; }

$abs = $ratio = [];
for ($r = 0; $r < $rounds; $r++) {
    // Each round starts one case further on, so that no case always runs right
    // after the same other case (identical code measured 0.91x and 0.99x that way).
    $names = array_keys($cases);
    $order = array_merge(array_slice($names, $r % count($names)), array_slice($names, 0, $r % count($names)));
    $round = [];
    foreach ($order as $case) {
        $n = str_ends_with($case, '-new') ? intdiv($cycles, 4) : $cycles;
        $round[$case] = run_case($php, $cycleScript, $case, $n);
    }
    foreach ($round as $case => $m) {
        $base = $round[$baseline($case)];
        foreach (['wall', 'cpu', 'user', 'sys'] as $what) {
            $abs[$case][$what][] = $m[$what];
            $ratio[$case][$what][] = $m[$what] / $base[$what];
        }
    }
    fprintf(STDERR, "round %d/%d: defaults wall %.2fx, CPU %.2fx\n", $r + 1, $rounds, end($ratio['native']['wall']), end($ratio['native']['cpu']));
}
printf("%-44s %9s %9s %9s %9s %9s %9s\n", 'uncontended acquire+release', 'wall µs', 'CPU µs', 'wall', 'CPU', 'user CPU', 'sys CPU');
foreach ($cases as $case => $label) {
    printf("%-44s %9.1f %9.1f %8.2fx %8.2fx %8.2fx %8.2fx\n", $label, median($abs[$case]['wall']), median($abs[$case]['cpu']),
        median($ratio[$case]['wall']), median($ratio[$case]['cpu']), median($ratio[$case]['user']), median($ratio[$case]['sys']));
}
// What recording the owner costs, against the defaults in the same rounds: the
// README's rule is that owner_info is on by default only if this is within 3%.
$own = [];
foreach ($abs['native-owner']['wall'] as $i => $w) {
    $own['wall'][] = $w / $abs['native']['wall'][$i];
    $own['cpu'][] = $abs['native-owner']['cpu'][$i] / $abs['native']['cpu'][$i];
}
printf("%-44s %8.3fx wall, %.3fx CPU (median of per-round ratios)\n", "owner_info on against off", median($own['wall']), median($own['cpu']));
// Issue 40's rule: a 3-key MultiLock's cycle costs at most 1.3x a single Lock's.
$multi = [];
foreach ($abs['native-multi3']['wall'] as $i => $w) {
    $multi['wall'][] = $w / $abs['native']['wall'][$i];
    $multi['cpu'][] = $abs['native-multi3']['cpu'][$i] / $abs['native']['cpu'][$i];
}
printf("%-44s %8.3fx wall, %.3fx CPU (median of per-round ratios)\n", "a 3-key MultiLock against one Lock", median($multi['wall']), median($multi['cpu']));
printf("(ratios: median over %d rounds of each round's ratio to %s; %d cycles per case and round;\n"
    . " client CPU is user + system time, and the system part is mostly the kernel's own round-trip work, the same for both)\n",
    $rounds, $article ? "the article's class with the same object use" : "redis_lock's defaults", $cycles);

// Instructions per cycle: the difference between two runs of different lengths takes
// out PHP's startup and the connection's setup.
if (!shell_exec('command -v valgrind')) {
    echo "(valgrind is not installed: no instruction counts; apt-get install valgrind)\n";
    exit(0);
}
$count = function (string $case, int $n) use ($php, $cycleScript): int {
    $log = (string) shell_exec("valgrind --tool=callgrind --callgrind-out-file=/dev/null " . php_for($php, $case) . " $cycleScript " . escapeshellarg($case) . " $n 0 2>&1");
    if (!preg_match('/Collected : (\d+)/', $log, $m)) { fwrite(STDERR, "callgrind failed for $case:\n$log\n"); exit(1); }
    return (int) $m[1];
};
printf("\n%-44s %14s\n", 'user-space instructions per cycle (callgrind)', 'instructions');
$per = [];
$base = $article ? 'article' : 'native';
foreach (array_merge($article ? ['article'] : [], ['native', 'native-fenced', 'native-nofence', 'native-owner', 'native-multi3', 'native-nometrics']) as $case) {
    $per[$case] = ($count($case, 1100) - $count($case, 100)) / 1000;
    printf("%-44s %14.0f %s\n", $cases[$case], $per[$case], $case === $base ? '' : sprintf('(%.2fx)', $per[$case] / $per[$base]));
}
// Issue 60's rule: the pool's metrics (on by default) cost at most 1% of the cycle's
// instructions against the same build with them off.
printf("%-44s %+13.2f%%\n", 'metrics on against off (instructions)', ($per['native'] / $per['native-nometrics'] - 1) * 100);
