<?php
// ZTS against NTS, in the same run: the uncontended cycle (bench/cycle.php native) and
// W processes sharing one lock with H µs holds, on Debian's NTS CLI and on the ZTS CLI
// built from Debian's source (tools/env/php-src.sh zts), each with the module built for
// it. Rounds alternate the order (NTS then ZTS, ZTS then NTS); "ZTS / NTS" is the
// median over the rounds of each round's ratio. Run by tools/bench/bench-zts.sh (make
// bench-zts), which builds both and gives the commands.
//
// Usage: BENCH_NTS="php -n ..." BENCH_ZTS="/…/php -n ..." [BENCH_ROUNDS=10] php bench/zts.php
// Prints a Markdown table and writes bench/results/zts.md.
require __DIR__ . '/../php-tests/_helper.inc';

$mode = $argv[1] ?? 'drive';
$dsn = getenv('REDIS_LOCK_DSN') ?: getenv('REDIS_LOCK_TEST_DSN') ?: 'redis://127.0.0.1:6379';

// One contention run (under the PHP being measured): W workers, S sections in all.
if ($mode === 'contend') {
    [$workers, $holdUs, $sections] = [(int) $argv[2], (int) $argv[3], (int) $argv[4]];
    $each = intdiv($sections, $workers);
    $t0 = hrtime(true);
    $pids = [];
    for ($w = 0; $w < $workers; $w++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $l = new Lock('bench:zts:contend', 30, 10, ['dsn' => $dsn]);
            for ($i = 0; $i < $each; $i++) {
                $t = $l->addLock();
                if ($t === false) { exit(3); }
                usleep($holdUs);
                if (!$l->releaseLock($t)) { exit(4); }
            }
            exit(0);
        }
        $pids[] = $pid;
    }
    foreach ($pids as $pid) {
        pcntl_waitpid($pid, $status);
        if (pcntl_wexitstatus($status) !== 0) { fwrite(STDERR, "worker failed\n"); exit(1); }
    }
    echo json_encode(['tput' => $each * $workers / ((hrtime(true) - $t0) / 1e9)]), "\n";
    exit(0);
}

$php = ['NTS' => getenv('BENCH_NTS'), 'ZTS' => getenv('BENCH_ZTS')];
if (!$php['NTS'] || !$php['ZTS']) {
    fwrite(STDERR, "set BENCH_NTS and BENCH_ZTS (tools/bench/bench-zts.sh does)\n");
    exit(2);
}
$rounds = (int) (getenv('BENCH_ROUNDS') ?: 10);
/** Runs a command under $which's PHP and decodes its JSON line. */
$run = function (string $which, string $args) use ($php): array {
    $out = shell_exec("$php[$which] $args");
    $r = json_decode((string) $out, true);
    if (!is_array($r)) { fwrite(STDERR, "$which $args: $out\n"); exit(1); }
    return $r;
};
$cases = [
    'uncontended cycle, µs (lower is better)' => [__DIR__ . '/cycle.php native 5000 500', 'wall'],
    '8 processes × 1 ms holds, sections/s (higher is better)' => [__FILE__ . ' contend 8 1000 800', 'tput'],
];
$table = "| | NTS (Debian's CLI) | ZTS (built from source) | ZTS / NTS, median of $rounds rounds |\n|---|---|---|---|\n";
foreach ($cases as $name => [$args, $field]) {
    $seen = ['NTS' => [], 'ZTS' => []];
    $ratios = [];
    for ($r = 0; $r < $rounds; $r++) {
        $got = [];
        foreach ($r % 2 ? ['ZTS', 'NTS'] : ['NTS', 'ZTS'] as $which) {
            $got[$which] = $run($which, $args)[$field];
            $seen[$which][] = $got[$which];
        }
        $ratios[] = $got['ZTS'] / $got['NTS'];
    }
    $median = function (array $a): float { sort($a); $n = count($a); return $n % 2 ? $a[intdiv($n, 2)] : ($a[$n / 2 - 1] + $a[$n / 2]) / 2; };
    $fmt = $field === 'wall' ? '%.1f' : '%.0f';
    $table .= sprintf("| %s | $fmt | $fmt | %.3f |\n", $name, $median($seen['NTS']), $median($seen['ZTS']), $median($ratios));
}
echo $table;
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/zts.md', "<!-- written by bench/zts.php (make bench-zts) -->\n" . $table);
