<?php
// Contention: W worker processes (pcntl_fork) share one lock; each does its rounds
// of addLock(), a deliberately non-atomic GET/SET increment held for H µs, and
// releaseLock(), then, with +O, O µs of work outside the lock before the next round. Both implementations run in the same invocation, in rounds of one
// run each (article then native, native then article, alternately), so that drift
// on a noisy machine hits both; "vs article" is the median over the rounds of each
// round's throughput ratio.
//
// The lock lives on its own redis-server and the counter on another, so the lock
// server's INFO commandstats hold lock traffic only. "Run by Redis" is all of it,
// commands run inside scripts included (commandstats does not tell those apart
// from the ones clients send). "Redis CPU" is the lock server's INFO cpu (user and
// system) over the run, divided by the sections; "time in commands" the µs its
// commandstats give to what clients sent (scripts with the commands they ran, see
// time_in_commands()). BENCH_DETAIL=1 prints each command's calls and µs per section.
//
// Usage: BENCH_ROUNDS=10 php ... bench/contention.php [WORKERSxHOLD_US[+OUTSIDE_US][:SECTIONS] ...]
//        default: 8x1000:1600 32x1000:1600 8x0:4000 8x0+1000:2000, 10 rounds
// Prints a Markdown table and writes bench/results/contention.{md,svg}.
require __DIR__ . '/../php-tests/_helper.inc';
require __DIR__ . '/lib.php';                   // contend_once(): the workers, shared with bench/peers.php
// Without phpredis (Debian ships none for PHP 8.5 and 8.6) the article's class cannot
// run: only redis_lock does, its counter through RespRedis (tools/lib/resp.php), and the
// results files, which are the comparison, are left as they are.
// The commands that, in this bench, only the implementations' scripts send: their
// time is inside the scripts' (time_in_commands()). redis_lock's first try is a
// client's SET; the article's SETs are all its own.
const IN_SCRIPTS = [
    'article' => ['get', 'del'],
    'native' => ['time', 'exists', 'rpush', 'lpush', 'publish', 'spublish', 'pttl', 'pexpire', 'lpop', 'lindex', 'hdel',
                 'lpos', 'lrem', 'incr', 'get', 'del', 'lrange', 'zremrangebyscore', 'zrange', 'zadd', 'zscore', 'zcard', 'hset', 'persist'],
];
$impls = class_exists('Redis') ? ['article', 'native'] : ['native'];
if (count($impls) === 1) {
    echo "(no phpredis for this PHP, and the article's class is written on it: only redis_lock runs; bench/results/contention.* are left as they are)\n";
}


$scenarios = array_slice($argv, 1) ?: ['8x1000:1600', '32x1000:1600', '8x0:4000', '8x0+1000:2000'];
$lockSrv = rl_start_redis();
$dataSrv = rl_start_redis();
$results = [];
try {
    foreach ($scenarios as $spec) {
        if (!preg_match('/^(\d+)x(\d+)(?:\+(\d+))?(?::(\d+))?$/', $spec, $m)) {
            fwrite(STDERR, "bad scenario $spec: want WORKERSxHOLD_US[+OUTSIDE_US][:SECTIONS]\n");
            exit(2);
        }
        [$workers, $holdUs, $outUs, $sections] = [(int) $m[1], (int) $m[2], (int) ($m[3] ?? 0), (int) (($m[4] ?? '') ?: 1600)];
        $rounds = max(1, intdiv($sections, $workers));
        $acc = [];
        $ratios = [];
        $cpuRatios = [];
        $order = [];
        for ($round = 0; $round < (int) (getenv('BENCH_ROUNDS') ?: 10); $round++) {
            $order = array_merge($order, $round % 2 ? array_reverse($impls) : $impls);
        }
        $tput = [];
        foreach ($order as $i => $impl) {
            $r = contend_once($impl, $workers, $holdUs, $outUs, $rounds, $lockSrv, $dataSrv);
            $tput[$impl] = $r['sections'] / $r['seconds'];
            $cpu[$impl] = $r['cpu'] / $r['sections'];
            if ($i % 2 && isset($tput['article'])) {
                $ratios[] = $tput['native'] / $tput['article'];
                $cpuRatios[] = $cpu['native'] / $cpu['article'];
            }
            $a = &$acc[$impl];
            $a['sections'] = ($a['sections'] ?? 0) + $r['sections'];
            $a['seconds'] = ($a['seconds'] ?? 0) + $r['seconds'];
            $a['lost'] = ($a['lost'] ?? 0) + $r['lost'];
            $a['gave_up'] = ($a['gave_up'] ?? 0) + $r['gave_up'];
            $a['server'] = ($a['server'] ?? 0) + $r['server'];
            $a['cpu'] = ($a['cpu'] ?? 0) + $r['cpu'];
            foreach ($r['detail'] as $cmd => [$calls, $usec]) {
                $a['detail'][$cmd][0] = ($a['detail'][$cmd][0] ?? 0) + $calls;
                $a['detail'][$cmd][1] = ($a['detail'][$cmd][1] ?? 0) + $usec;
            }
            $a['waits'] = array_merge($a['waits'] ?? [], $r['waits']);
            unset($a);
            fprintf(STDERR, "  %-8s %3d x %5d us +%5d us: %6.0f sections/s, wait p99 %7.1f ms\n",
                $impl, $workers, $holdUs, $outUs, $r['sections'] / $r['seconds'], pct($r['waits'], 99));
        }
        sort($ratios);
        sort($cpuRatios);
        $results[$spec] = ['workers' => $workers, 'hold' => $holdUs, 'outside' => $outUs, 'impls' => $acc,
            'ratio' => $ratios ? $ratios[intdiv(count($ratios), 2)] : NAN, 'rounds' => count($ratios),
            'cpu_ratio' => $cpuRatios ? $cpuRatios[intdiv(count($cpuRatios), 2)] : NAN];
    }
} finally {
    rl_stop_redis($lockSrv);
    rl_stop_redis($dataSrv);
}

if (getenv('BENCH_DETAIL')) {
    // Per command: calls and µs per section, and µs per call (a script's include its commands').
    foreach ($results as $spec => $res) {
        foreach ($res['impls'] as $impl => $a) {
            fprintf(STDERR, "%s %s:\n", $spec, $impl);
            ksort($a['detail']);
            foreach ($a['detail'] as $cmd => [$calls, $usec]) {
                fprintf(STDERR, "  %-14s %6.2f calls/section %7.2f µs/section %6.2f µs/call\n", $cmd, $calls / $a['sections'], $usec / $a['sections'], $calls ? $usec / $calls : 0);
            }
        }
    }
}
$md = report($results);
echo $md;
if (count($impls) === 1) { exit(0); }
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/contention.md', $md);
file_put_contents(__DIR__ . '/results/contention.svg', contention_svg($results));
fwrite(STDERR, "wrote bench/results/contention.md and bench/results/contention.svg\n");

function report(array $results): string
{
    $out = "| workers × hold | implementation | sections/s | vs article (median of per-round ratios) | lost updates | commands/section run by Redis | Redis CPU/section (vs article, median of per-round ratios) | time in commands/section | wait p50 | wait p99 | wait max |\n";
    $out .= "|---|---|---|---|---|---|---|---|---|---|---|\n";
    foreach ($results as $res) {
        foreach (array_keys($res['impls']) as $impl) {
            $a = $res['impls'][$impl];
            $tput = $a['sections'] / $a['seconds'];
            $out .= sprintf("| %s | %s | %.0f | %s | %d%s | %.2f | %.1f µs (%s) | %.1f µs | %.1f ms | %.1f ms | %.1f ms |\n",
                scenario($res),
                $impl === 'article' ? 'article class (phpredis)' : 'redis_lock',
                $tput, $impl === 'article' ? '1.00×' : (is_nan($res['ratio']) ? '—' : sprintf('%.2f×', $res['ratio'])), $a['lost'], $a['gave_up'] ? " ({$a['gave_up']} gave up)" : '',
                $a['server'] / $a['sections'],
                1e6 * $a['cpu'] / $a['sections'],
                $impl === 'article' ? '1.00×' : (is_nan($res['cpu_ratio']) ? '—' : sprintf('%.2f×', $res['cpu_ratio'])),
                time_in_commands($a['detail'], IN_SCRIPTS[$impl]) / $a['sections'],
                pct($a['waits'], 50), pct($a['waits'], 99), max($a['waits']));
        }
    }
    return $out;
}

/** A scenario's name: "8 × 1 ms", "8 × 0, 1 ms outside"; `$long`: the picture's panel titles. */
function scenario(array $res, bool $long = false): string
{
    $ms = fn(int $us) => $us ? ($us / 1000) . ' ms' : '0';
    $name = $long ? "{$res['workers']} workers × {$ms($res['hold'])} hold" : "{$res['workers']} × {$ms($res['hold'])}";
    return $res['outside'] ? "$name, {$ms($res['outside'])} outside" : $name;
}

/** The distribution of waits, one panel per scenario: share of waits ≤ x, x on a log scale. */
function contention_svg(array $results): string
{
    [$pw, $ph, $ml, $mr, $mt, $mb] = [300, 220, 46, 12, 34, 40];
    $w = count($results) * $pw + 16;                 // room for the last panel's last tick label
    $h = $ph + 52;                                   // the legend has a row of its own, below the axis labels
    $colors = ['article' => '#d95f02', 'native' => '#1b9e77'];
    $names = ['article' => 'article class (phpredis)', 'native' => 'redis_lock'];
    $s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"$w\" height=\"$h\" viewBox=\"0 0 $w $h\" font-family=\"sans-serif\" font-size=\"11\">\n";
    $s .= "<rect width=\"$w\" height=\"$h\" fill=\"white\"/>\n";
    $lo = -2;                                        // 0.01 ms
    $hi = 0;
    foreach ($results as $res) { foreach ($res['impls'] as $a) { $hi = max($hi, (int) ceil(log10(max(max($a['waits']), 0.01)))); } }
    $hi = max($hi, 1);
    $i = 0;
    foreach ($results as $label => $res) {
        $x0 = $i * $pw + $ml; $x1 = ($i + 1) * $pw - $mr; $y0 = $mt; $y1 = $ph - $mb + $mt;
        $sx = fn(float $ms) => $x0 + ($x1 - $x0) * (log10(max($ms, 10 ** $lo)) - $lo) / ($hi - $lo);
        $sy = fn(float $q) => $y1 - ($y1 - $y0) * $q;
        $s .= sprintf("<text x=\"%.1f\" y=\"18\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n", ($x0 + $x1) / 2, scenario($res, true));
        for ($d = $lo; $d <= $hi; $d++) {
            $x = $sx(10 ** $d);
            $s .= sprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", $x, $y0, $x, $y1);
            $s .= sprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", $x, $y1 + 14, rtrim(rtrim(sprintf('%.2f', 10 ** $d), '0'), '.'));
        }
        foreach ([0, 0.25, 0.5, 0.75, 1] as $q) {
            $y = $sy($q);
            $s .= sprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", $x0, $y, $x1, $y);
            $s .= sprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", $x0 - 4, $y + 4, $q == 0 ? '0' : ($q * 100) . '%');
        }
        $s .= sprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">wait for the lock (ms, log scale)</text>\n", ($x0 + $x1) / 2, $y1 + 28);
        foreach (['article', 'native'] as $impl) {
            $ws = $res['impls'][$impl]['waits'];
            sort($ws);
            $n = count($ws);
            $pts = [];
            $step = max(1, intdiv($n, 400));               // at most ~400 points per curve
            for ($k = 0; $k < $n; $k += $step) { $pts[] = sprintf('%.1f,%.1f', $sx($ws[$k]), $sy(($k + 1) / $n)); }
            $pts[] = sprintf('%.1f,%.1f', $sx($ws[$n - 1]), $sy(1));
            $s .= sprintf("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", $colors[$impl], implode(' ', $pts));
        }
        $i++;
    }
    $lx = 10;
    foreach ($names as $impl => $name) {
        $s .= sprintf("<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n", $lx, $h - 12, $colors[$impl], $lx + 18, $h - 7, $name);
        $lx += 200;
    }
    $s .= "<text x=\"" . ($w - 8) . "\" y=\"" . ($h - 7) . "\" text-anchor=\"end\" fill=\"#666\">share of acquisitions that waited at most x</text>\n";
    return $s . "</svg>\n";
}
