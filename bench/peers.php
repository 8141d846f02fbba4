<?php
// Redisson beside this extension, on one throwaway Redis: `make bench-peers`.
//
// The locks: this extension's Lock and Semaphore (one permit), the article's class
// (bench/ArticleLock.php, which polls every 5 ms), and Redisson's RLock (waiters
// woken by pub/sub), RFairLock (a queue) and RSemaphore (one permit), run by
// bench/peers/redisson (Java 17, Redisson pinned in its pom.xml) as threads of one
// JVM, as Redisson is used. The PHP locks run as forked processes, as PHP is used,
// through bench/contention.php's workers (contend_once() in bench/lib.php). One more
// row runs RLock as PHP runs: a JVM of one thread per contender (a small connection
// pool, C1 only), about 320 sections a run. In one JVM, Redisson wakes one waiting
// thread per release message; across JVMs every JVM wakes one, so this row shows
// the pub/sub herd that the one-JVM rows hide.
//
// The loads, bench/contention.php's: W contenders each acquire (waiting up to 60 s,
// lease 5 s), do a deliberately non-atomic GET/SET increment of a counter on a
// second server, hold 1 ms, release; and the uncontended acquire+release, one
// client, CYCLES times (bench/cycle.php for PHP). Every lock runs once per round,
// in an order that turns by one each round, on the same lock server; the table
// gives the median over the rounds of each round's figure (and of each round's
// ratio to Lock's figure in the same round).
//
// Columns. sections/s: sections over the run's wall time. Redis CPU/section: the
// lock server's INFO cpu (used_cpu_user + used_cpu_sys) over the run, divided by the
// sections, so Redisson's waiting inside the JVM is not counted as Redis work, only
// what its commands cost the server. commands/section: every command INFO
// commandstats counts (a script's inner commands included; the bench's own INFO,
// CONFIG RESETSTAT and SCRIPT FLUSH left out); scripts/section: the EVAL and EVALSHA
// among them. commandstats cannot tell a command a script ran from the same command
// sent by a client (Redisson sends a DEL of its own after each unlock script, and its
// scripts DEL too), so the split comes from a census: one more, shorter run of each
// lock under MONITOR, which marks a script's commands "[0 lua]": sent/section is what
// clients sent (every round trip: scripts, SUBSCRIBE, SET, DEL, ...), in scripts/section
// what the scripts ran. MONITOR slows the server, so the census run is timed by
// nothing and counts only. Waits: from the call to acquire to its return, in the
// client; p50, p99 and max per round. lost: increments lost (0 unless exclusion
// broke). The Java side's JVM start and Redisson's connection setup come before the
// server's counters are reset (it prints "ready" and waits); the PHP workers
// connect inside the run, a handful of commands among thousands.
//
// Usage: make bench-peers   (builds both sides; Maven's repository in /var/tmp/redis-lock-php/maven)
//        BENCH_ROUNDS=5 BENCH_CYCLES=2000 BENCH_PHP="php -n -d extension=..." \
//        php ... bench/peers.php [WORKERSxHOLD_US:SECTIONS ...]     default 8x1000:1600 32x1000:1600
// Prints a Markdown table and writes bench/results/peers.md.
require __DIR__ . '/../php-tests/_helper.inc';
require __DIR__ . '/lib.php';

const LABELS = [
    'native' => 'redis_lock `Lock`', 'semaphore' => 'redis_lock `Semaphore` (1 permit)', 'article' => 'article class (polls, phpredis)',
    'rlock' => 'Redisson `RLock`', 'rfair' => 'Redisson `RFairLock`', 'rsem' => 'Redisson `RSemaphore` (1 permit)',
    'rlock-procs' => 'Redisson `RLock`, a JVM per contender',
];
const JAVA = ['rlock', 'rfair', 'rsem', 'rlock-procs'];
// The uncontended cycle's bench/cycle.php case for each PHP lock.
const CYCLE_CASE = ['native' => 'native', 'semaphore' => 'native-sem', 'article' => 'article'];

$cp = __DIR__ . '/peers/redisson/target/classpath.txt';
if (!is_file($cp)) { fwrite(STDERR, "peers: $cp is missing: make bench-peers builds bench/peers/redisson\n"); exit(2); }
$cp = __DIR__ . '/peers/redisson/target/classes:' . trim(file_get_contents($cp));
$impls = getenv('BENCH_LOCKS') ? explode(',', getenv('BENCH_LOCKS')) : array_keys(LABELS);   // e.g. native,rlock
if (!class_exists('Redis')) {
    fwrite(STDERR, "peers: no phpredis for this PHP: the article's class is left out\n");
    $impls = array_values(array_diff($impls, ['article']));
}
$rounds = (int) (getenv('BENCH_ROUNDS') ?: 3);
$cycles = (int) (getenv('BENCH_CYCLES') ?: 2000);
$php = getenv('BENCH_PHP') ?: PHP_BINARY;
$scenarios = array_slice($argv, 1) ?: ['8x1000:1600', '32x1000:1600'];
$t0 = microtime(true);

$lockSrv = rl_start_redis();
$dataSrv = rl_start_redis();
$rows = [];     // [scenario][impl] => list of per-round figures
$census = [];   // [scenario][impl] => figures of the MONITOR run
try {
    for ($round = 0; $round < $rounds; $round++) {
        $order = array_merge(array_slice($impls, $round % count($impls)), array_slice($impls, 0, $round % count($impls)));
        foreach ($scenarios as $spec) {
            [$workers, $holdUs, $sections] = parse_spec($spec);
            foreach ($order as $impl) {
                try {
                    $r = contended($impl, $workers, $holdUs, intdiv($sections, $workers), $lockSrv, $dataSrv, $cp);
                } catch (RuntimeException $e) {
                    // A JVM that fails to start on the busy machine costs its round, not the run.
                    fprintf(STDERR, "round %d/%d %s %s failed, left out: %s\n", $round + 1, $rounds, $spec, $impl, $e->getMessage());
                    continue;
                }
                $rows[$spec][$impl][$round] = $r;
                fprintf(STDERR, "round %d/%d %-6s %-9s %6.0f sections/s, %5.1f µs Redis CPU/section, wait p99 %7.1f ms\n",
                    $round + 1, $rounds, $spec, $impl, $r['tput'], $r['cpu'], $r['p99']);
            }
        }
        foreach (array_diff($order, ['rlock-procs']) as $impl) {
            $r = uncontended($impl, $cycles, $lockSrv, $cp, $php);
            $rows['cycle'][$impl][$round] = $r;
            fprintf(STDERR, "round %d/%d cycle  %-9s %6.1f µs wall, %5.1f µs Redis CPU/cycle\n", $round + 1, $rounds, $impl, $r['wall'], $r['cpu']);
        }
    }
    // The census: one short run of each under MONITOR, for what clients sent and what scripts ran.
    foreach ($scenarios as $spec) {
        [$workers, $holdUs] = parse_spec($spec);
        foreach ($impls as $impl) {
            try {
                $census[$spec][$impl] = contended($impl, $workers, $holdUs, max(10, intdiv(320, $workers)), $lockSrv, $dataSrv, $cp, true)['census'];
            } catch (RuntimeException $e) {
                fprintf(STDERR, "census %s %s failed, left out: %s\n", $spec, $impl, $e->getMessage());
            }
        }
    }
    foreach (array_diff($impls, ['rlock-procs']) as $impl) { $census['cycle'][$impl] = uncontended($impl, 500, $lockSrv, $cp, $php, true)['census']; }
} finally {
    rl_stop_redis($lockSrv);
    rl_stop_redis($dataSrv);
}

$version = trim((string) shell_exec('redis-server --version'));
preg_match('/v=(\S+)/', $version, $m);
preg_match('#<redisson.version>([^<]+)<#', (string) file_get_contents(__DIR__ . '/peers/redisson/pom.xml'), $rv);
$md = sprintf("Measured %s by `%smake bench-peers` (%d rounds, order turned each round; %d cycles uncontended) in %.0f s, on Redis %s, Redisson %s, Java %s, PHP %s.\n\n",
    gmdate('Y-m-d H:i \U\T\C'), getenv('BENCH_ROUNDS') ? "BENCH_ROUNDS=$rounds " : '', $rounds, $cycles, microtime(true) - $t0, $m[1] ?? '?', $rv[1] ?? '?',
    trim((string) shell_exec("java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.version = //p'")), PHP_VERSION);
$md .= report($rows, $census, $scenarios);
echo $md;
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/peers.md', $md);
fwrite(STDERR, "wrote bench/results/peers.md\n");

function parse_spec(string $spec): array
{
    if (!preg_match('/^(\d+)x(\d+)(?::(\d+))?$/', $spec, $m)) {
        fwrite(STDERR, "bad scenario $spec: want WORKERSxHOLD_US[:SECTIONS]\n");
        exit(2);
    }
    return [(int) $m[1], (int) $m[2], (int) (($m[3] ?? '') ?: 1600)];
}

/** One contended run of one lock: its figures, or with $census, the MONITOR counts per section. */
function contended(string $impl, int $workers, int $holdUs, int $each, array $lockSrv, array $dataSrv, string $cp, bool $census = false): array
{
    // A JVM per contender hands over slowly (see docs/performance.md): its runs are
    // kept to about 320 sections, or the 32-contender one would take minutes a round.
    if ($impl === 'rlock-procs') { $each = min($each, max(10, intdiv(320, $workers))); }
    $sections = $workers * $each;
    $key = 'bench:' . bin2hex(random_bytes(4)) . ':lock';
    if ($impl === 'rlock-procs') {
        $r = java_procs($workers, ['contend', 'rlock', (string) $lockSrv['port'], (string) $dataSrv['port'], '1', (string) $holdUs, (string) $each, $key, 'small'],
            $lockSrv, $dataSrv, $cp, $census);
    } elseif (in_array($impl, JAVA, true)) {
        $r = java_run(['contend', $impl, (string) $lockSrv['port'], (string) $dataSrv['port'], (string) $workers, (string) $holdUs, (string) $each, $key], $lockSrv, $cp, $census);
    } else {
        $mon = $census ? census_start($lockSrv['port']) : null;
        $r = contend_once($impl, $workers, $holdUs, 0, $each, $lockSrv, $dataSrv);
        $r['census'] = $mon ? census_stop($mon) : null;
        $r['scripts'] = array_sum(array_map(fn($c) => $r['detail'][$c][0] ?? 0, ['eval', 'evalsha', 'eval_ro', 'evalsha_ro']));
        $r['commands'] = $r['server'];
    }
    if ($r['sections'] !== $sections) { throw new RuntimeException("$impl: {$r['sections']} sections, $sections asked"); }
    return [
        'tput' => $sections / $r['seconds'], 'cpu' => 1e6 * $r['cpu'] / $sections,
        'commands' => $r['commands'] / $sections, 'scripts' => $r['scripts'] / $sections,
        'p50' => pct($r['waits'], 50), 'p99' => pct($r['waits'], 99), 'max' => max($r['waits']),
        'lost' => $r['lost'], 'gave_up' => $r['gave_up'],
        'census' => $r['census'] ? array_map(fn($n) => $n / $sections, $r['census']) : null,
    ];
}

/** The uncontended acquire+release, CYCLES times, one client: wall µs per cycle (client side) and the server's figures. */
function uncontended(string $impl, int $cycles, array $lockSrv, string $cp, string $php, bool $census = false): array
{
    if (in_array($impl, JAVA, true)) {
        $r = java_run(['cycle', $impl, (string) $lockSrv['port'], (string) $cycles], $lockSrv, $cp, $census);
    } else {
        rl_cmd($lockSrv['dsn'], 'SCRIPT', 'FLUSH');
        rl_cmd($lockSrv['dsn'], 'CONFIG', 'RESETSTAT');
        $cpu0 = server_cpu(rl_cmd($lockSrv['dsn'], 'INFO', 'cpu'));
        $mon = $census ? census_start($lockSrv['port']) : null;
        // No warm-up: the server's counters run from the process's start, so its
        // connection's few commands are counted, over all the cycles.
        $out = shell_exec('REDIS_LOCK_DSN=' . escapeshellarg($lockSrv['dsn']) . " $php " . escapeshellarg(__DIR__ . '/cycle.php') . ' '
            . CYCLE_CASE[$impl] . " $cycles 0");
        $c = json_decode((string) $out, true);
        if (!is_array($c)) { throw new RuntimeException("bench/cycle.php " . CYCLE_CASE[$impl] . " failed: $out"); }
        $r = server_figures($lockSrv, $cpu0) + ['wall_us' => $c['wall'], 'census' => $mon ? census_stop($mon) : null];
    }
    return [
        'wall' => $r['wall_us'], 'cpu' => 1e6 * $r['cpu'] / $cycles, 'commands' => $r['commands'] / $cycles, 'scripts' => $r['scripts'] / $cycles,
        'census' => $r['census'] ? array_map(fn($n) => $n / $cycles, $r['census']) : null,
    ];
}

/** The lock server's CPU seconds since $cpu0, and its commands and scripts since CONFIG RESETSTAT. */
function server_figures(array $lockSrv, float $cpu0): array
{
    $stats = rl_cmd($lockSrv['dsn'], 'INFO', 'commandstats');
    return ['cpu' => server_cpu(rl_cmd($lockSrv['dsn'], 'INFO', 'cpu')) - $cpu0,
            'commands' => command_count($stats), 'scripts' => script_count($stats)];
}

/**
 * One run of bench/peers/redisson: the JVM starts, connects and warms up, says
 * "ready"; only then are the server's counters reset, and the run starts.
 */
function java_run(array $args, array $lockSrv, string $cp, bool $census): array
{
    $cmd = array_merge([getenv('JAVA') ?: 'java', '-cp', $cp, 'redislock.bench.RedissonPeers'], $args);
    $p = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => STDERR], $pipes);
    if (!is_resource($p)) { throw new RuntimeException('java did not start'); }
    try {
        if (jvm_line($pipes[1]) !== 'ready') { throw new RuntimeException("redisson $args[1]: the JVM did not get ready"); }
        rl_cmd($lockSrv['dsn'], 'SCRIPT', 'FLUSH');      // it pays its script loads, as the PHP locks do
        rl_cmd($lockSrv['dsn'], 'CONFIG', 'RESETSTAT');
        $cpu0 = server_cpu(rl_cmd($lockSrv['dsn'], 'INFO', 'cpu'));
        $mon = $census ? census_start($lockSrv['port']) : null;
        fwrite($pipes[0], "go\n");
        fflush($pipes[0]);
        $r = json_decode((string) jvm_line($pipes[1]), true);
        if (!is_array($r)) { throw new RuntimeException("redisson $args[1]: no result"); }
        $r += server_figures($lockSrv, $cpu0);
        $r['census'] = $mon ? census_stop($mon) : null;
        fwrite($pipes[0], "bye\n");
        return $r;
    } finally {
        jvm_close($p, $pipes);
    }
}

/**
 * $n JVMs of one thread each, as PHP runs its workers: started and warmed up
 * together, then the counters reset, then all told to go. The run lasts until the
 * last one's result; lost updates are read from the shared counter.
 */
function java_procs(int $n, array $args, array $lockSrv, array $dataSrv, string $cp, bool $census): array
{
    // C1 only and a small heap: 32 JVMs start on 2 cores without compiling for seconds.
    $cmd = array_merge([getenv('JAVA') ?: 'java', '-XX:TieredStopAtLevel=1', '-Xmx64m', '-cp', $cp, 'redislock.bench.RedissonPeers'], $args);
    $procs = [];
    try {
        for ($i = 0; $i < $n; $i++) {
            $p = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => STDERR], $pipes);
            if (!is_resource($p)) { throw new RuntimeException('java did not start'); }
            $procs[] = [$p, $pipes];
        }
        foreach ($procs as [$p, $pipes]) {
            if (jvm_line($pipes[1]) !== 'ready') { throw new RuntimeException("redisson $args[1]: a JVM did not get ready"); }
        }
        rl_cmd($lockSrv['dsn'], 'SCRIPT', 'FLUSH');
        rl_cmd($lockSrv['dsn'], 'CONFIG', 'RESETSTAT');
        $cpu0 = server_cpu(rl_cmd($lockSrv['dsn'], 'INFO', 'cpu'));
        $mon = $census ? census_start($lockSrv['port']) : null;
        $t0 = microtime(true);
        foreach ($procs as [$p, $pipes]) { fwrite($pipes[0], "go\n"); fflush($pipes[0]); }
        $r = ['sections' => 0, 'waits' => [], 'gave_up' => 0];
        foreach ($procs as [$p, $pipes]) {
            $d = json_decode((string) jvm_line($pipes[1]), true);
            if (!is_array($d)) { throw new RuntimeException("redisson $args[1]: a JVM gave no result"); }
            $r['sections'] += $d['sections'];
            $r['gave_up'] += $d['gave_up'];
            $r['waits'] = array_merge($r['waits'], $d['waits']);
        }
        $r['seconds'] = microtime(true) - $t0;
        $r += server_figures($lockSrv, $cpu0);
        $r['census'] = $mon ? census_stop($mon) : null;
        $r['lost'] = $r['sections'] - $r['gave_up'] - (int) rl_cmd($dataSrv['dsn'], 'GET', $args[7] . ':counter');
        foreach ($procs as [$p, $pipes]) { fwrite($pipes[0], "bye\n"); }
        return $r;
    } finally {
        foreach ($procs as [$p, $pipes]) { jvm_close($p, $pipes); }
    }
}

/**
 * The JVM's next line of ours: "ready" or a JSON result. HotSpot writes its own
 * warnings to stdout too (under load, 32 JVMs starting on 2 cores), so any other
 * line is passed on to stderr. False when the JVM has exited.
 */
function jvm_line($out): string|false
{
    while (($line = fgets($out)) !== false) {
        $line = trim($line);
        if ($line === 'ready' || str_starts_with($line, '{')) { return $line; }
        fwrite(STDERR, "jvm: $line\n");
    }
    return false;
}

/** Ends a JVM still running (a failed run), then reaps it. */
function jvm_close($p, array $pipes): void
{
    foreach ($pipes as $pipe) { @fclose($pipe); }
    for ($i = 0; $i < 100 && proc_get_status($p)['running']; $i++) { usleep(50000); }
    if (proc_get_status($p)['running']) { proc_terminate($p, 9); }
    proc_close($p);
}

/** MONITOR on the lock server, into a file, until census_stop(). */
function census_start(int $port): array
{
    $file = tempnam(sys_get_temp_dir(), 'redis-lock-census');
    $p = proc_open([rl_bin('cli'), '-p', (string) $port, 'monitor'], [0 => ['pipe', 'r'], 1 => ['file', $file, 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
    $until = microtime(true) + 5;
    while (!str_starts_with((string) file_get_contents($file), 'OK') && microtime(true) < $until) { usleep(10000); }
    return [$p, $file, $pipes];
}

/**
 * What MONITOR saw: sent (every command a client sent, each a round trip), scripts
 * (the EVAL and EVALSHA among them), in_scripts (commands run by scripts, "[0 lua]");
 * the bench's own INFO, CONFIG and SCRIPT FLUSH left out.
 */
function census_stop(array $mon): array
{
    [$p, $file, $pipes] = $mon;
    usleep(200000);                                  // the last lines reach the file
    proc_terminate($p);
    foreach ($pipes as $pipe) { fclose($pipe); }
    proc_close($p);
    $n = ['sent' => 0, 'scripts' => 0, 'in_scripts' => 0];
    $fh = fopen($file, 'r');
    while (($line = fgets($fh)) !== false) {
        if (!preg_match('/^\d+\.\d+ \[\d+ (\S+)\] "([^"]+)"(?: "([^"]*)")?/', $line, $m)) { continue; }
        $cmd = strtolower($m[2]);
        if ($m[1] === 'lua') { $n['in_scripts']++; continue; }
        if ($cmd === 'info' || $cmd === 'config' || ($cmd === 'script' && strtolower($m[3] ?? '') === 'flush')) { continue; }
        $n['sent']++;
        if (in_array($cmd, ['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall'], true)) { $n['scripts']++; }
    }
    fclose($fh);
    unlink($file);
    return $n;
}

function median(array $xs): float
{
    sort($xs);
    $n = count($xs);
    return $n % 2 ? $xs[intdiv($n, 2)] : ($xs[$n / 2 - 1] + $xs[$n / 2]) / 2;
}

/** The medians over the rounds of a figure, and of its ratio to Lock's in the same round. */
function med(array $runs, string $k): float { return median(array_column($runs, $k)); }
function ratio(array $runs, array $base, string $k): float
{
    $both = array_intersect_key($runs, $base);      // the rounds in which both ran
    return median(array_map(fn($i) => $runs[$i][$k] / $base[$i][$k], array_keys($both)));
}

function report(array $rows, array $census, array $scenarios): string
{
    $out = "| load | lock | sections/s | vs `Lock` | Redis CPU µs/section | vs `Lock` | commands/section (scripts) | sent/section | in scripts/section | wait p50 | wait p99 | wait max | lost |\n";
    $out .= "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    foreach ($scenarios as $spec) {
        [$workers, $holdUs] = parse_spec($spec);
        $base = $rows[$spec]['native'];
        foreach (array_intersect_key(LABELS, $rows[$spec]) as $impl => $_) {
            $runs = $rows[$spec][$impl];
            $c = $census[$spec][$impl] ?? ['sent' => NAN, 'in_scripts' => NAN];
            $lost = array_sum(array_column($runs, 'lost'));
            $gave = array_sum(array_column($runs, 'gave_up'));
            $label = LABELS[$impl] . (count($runs) < count($base) ? sprintf(' (%d rounds)', count($runs)) : '');
            $out .= sprintf("| %d × %s ms | %s | %.0f | %.2f× | %.1f | %.2f× | %.2f (%.2f) | %.2f | %.2f | %.1f ms | %.1f ms | %.1f ms | %d%s |\n",
                $workers, $holdUs / 1000, $label, med($runs, 'tput'), ratio($runs, $base, 'tput'), med($runs, 'cpu'), ratio($runs, $base, 'cpu'),
                med($runs, 'commands'), med($runs, 'scripts'), $c['sent'], $c['in_scripts'],
                med($runs, 'p50'), med($runs, 'p99'), med($runs, 'max'), $lost, $gave ? " ($gave gave up)" : '');
        }
    }
    $out .= "\n| uncontended acquire + release | lock | wall µs/cycle (client) | Redis CPU µs/cycle | vs `Lock` | commands/cycle (scripts) | round trips/cycle | in scripts/cycle |\n";
    $out .= "|---|---|---|---|---|---|---|---|\n";
    $base = $rows['cycle']['native'];
    foreach ($rows['cycle'] as $impl => $runs) {
        $c = $census['cycle'][$impl];
        $out .= sprintf("| one client | %s | %.1f | %.1f | %.2f× | %.2f (%.2f) | %.2f | %.2f |\n", LABELS[$impl], med($runs, 'wall'), med($runs, 'cpu'),
            ratio($runs, $base, 'cpu'), med($runs, 'commands'), med($runs, 'scripts'), $c['sent'], $c['in_scripts']);
    }
    return $out;
}
