<?php
// The paths a nemesis run exercised (issue 56, "every row shows the path it ran"):
// what the extension's own counters say its locks did, and on Redlock what the
// history says the quorum decided. Used by run.php (the names --expect accepts) and
// check.php (the counts, the tables, and a run that ran a path it was named for fewer
// times than it expected fails).
//
// - The counters: each worker writes its process's redis_lock_stats() to the history
//   (`stats` events: absolute figures since the process started, every 2 s of its
//   loop and at its end). A process's figures are the largest each counter reached in
//   its records (the threads of the ZTS harness share one process, and so one set of
//   counters); a run's are the sum over its processes. A worker killed between two
//   records loses what it did since the last one: the counts are a floor.
// - The quorum decisions (Redlock only, from the history's operations): acquisitions
//   a majority took (an acquire that returned a hold; a MultiLock's once, not per
//   key), and releases a majority answered (a release that returned true, not
//   synchronized()'s, which goes unawaited).
declare(strict_types=1);

/** The paths a run can be asked for (--expect NAME=N), and how a message names each. */
const PATHS = [
    'cad_releases' => 'compare-and-delete releases: DELIFEQ or DELEX, no script',
    'cad_renewals' => 'compare-and-delete renewals: SET … IFEQ, no script',
    'cad_kicks' => 'compare-and-delete releases that handed the lock over by the kick script',
    'durable_acks' => 'durable checks acknowledged',
    'not_durable' => 'durable checks refused',
    'handed_over' => 'holds handed over to a waiter by a release',
    'renewals' => 'renewals',
    'lost' => 'holds found lost',
    'released' => 'releases',
    'acquired' => 'acquisitions',
    'contended' => 'acquisitions that waited',
    'stale' => 'acquisitions given up as stale',
    'timeouts' => 'waits that timed out',
    'connects' => 'connections opened',
    'quorum_acquisitions' => 'Redlock acquisitions a majority took',
    'quorum_releases' => 'Redlock releases a majority answered',
    'share_of_plain' => 'sections, in percent of those of the plain run of the same topology, faults and seed',
];
/** The paths counted from the history, not from redis_lock_stats(). */
const QUORUM_PATHS = ['quorum_acquisitions', 'quorum_releases'];
/** The paths judged against another run (check.php's `availability`), not one alone. */
const PAIRED_PATHS = ['share_of_plain'];

/** `NAME=N,NAME=N` as [name => N], or the reason it is not one. */
function paths_parse_expect(string $spec): array|string {
    $out = [];
    foreach (array_filter(array_map('trim', explode(',', $spec)), fn($x) => $x !== '') as $item) {
        if (!preg_match('/^([a-z_]+)=(\d+)$/', $item, $m)) { return "\"$item\" is not NAME=N"; }
        if (!isset(PATHS[$m[1]])) { return "no path \"$m[1]\" (" . implode(', ', array_keys(PATHS)) . ')'; }
        $out[$m[1]] = (int) $m[2];
    }
    return $out;
}

/** [name => N] as "name=N" joined by $sep. */
function paths_expect_text(array $expect, string $sep = ', '): string {
    return implode($sep, array_map(fn($k, $v) => "$k=$v", array_keys($expect), $expect));
}

/** Whether a header's run is on Redlock (several independent masters). */
function paths_redlock(array $head): bool {
    return ($head['nodes'] ?? 1) > 1 && !($head['sentinel'] ?? false) && !($head['cluster'] ?? false);
}

/**
 * What ran in one history: ['processes' => how many processes wrote counters,
 * 'counts' => [path => int, or null when nothing counted it (no record of that
 * counter; a quorum path off Redlock)]].
 * @param array $stats the history's `stats` events
 * @param array $attempts check.php's attempts ("w#n" => events by op)
 */
function paths_count(array $head, array $stats, array $attempts): array {
    $byPid = [];
    foreach ($stats as $e) {
        $pid = $e['pid'] ?? "w{$e['w']}";
        foreach ($e['counts'] ?? [] as $k => $v) {
            if (is_int($v) || is_float($v)) { $byPid[$pid][$k] = max($byPid[$pid][$k] ?? 0, $v); }
        }
    }
    $counts = array_fill_keys(array_keys(PATHS), null);
    foreach ($byPid as $figures) {
        foreach ($figures as $k => $v) {
            if (array_key_exists($k, $counts) && !in_array($k, QUORUM_PATHS, true)) { $counts[$k] = ($counts[$k] ?? 0) + (int) $v; }
        }
    }
    if (paths_redlock($head)) {
        $counts['quorum_acquisitions'] = $counts['quorum_releases'] = 0;
        foreach ($attempts as $a) {
            $acq = $a['acquire'][0] ?? null;
            // A MultiLock's attempt is recorded once per key (n*10+j): counted once.
            if ($acq === null || (($acq['multi'] ?? false) && $a['n'] % 10 !== 0)) { continue; }
            if ($acq['res'] === 'ok') { $counts['quorum_acquisitions']++; }
            $rel = $a['release'][0] ?? null;
            if ($rel !== null && $rel['res'] === 'ok' && ($rel['ret'] ?? null) === true && !($rel['sync'] ?? false)) { $counts['quorum_releases']++; }
        }
    }
    return ['processes' => count($byPid), 'counts' => $counts];
}

/** The paths the run expected and ran fewer times: [name => [ran (null: not counted), least]]. */
function paths_short(array $head, array $paths): array {
    $short = [];
    foreach ($head['expect'] ?? [] as $name => $least) {
        if (in_array($name, PAIRED_PATHS, true)) { continue; }
        $ran = $paths['counts'][$name] ?? null;
        if ($ran === null || $ran < $least) { $short[$name] = [$ran, (int) $least]; }
    }
    return $short;
}

/** The run's failures for paths it expected and ran fewer times: one message each. */
function paths_fails(array $head, array $paths): array {
    $fails = [];
    foreach (paths_short($head, $paths) as $name => [$ran, $least]) {
        $what = PATHS[$name] ?? 'an unknown path';
        if ($ran === null) {
            $why = in_array($name, QUORUM_PATHS, true) ? 'not counted (this is no Redlock run)'
                : ($paths['processes'] === 0 ? 'not counted (the workers recorded no redis_lock_stats(): an older worker?)'
                : 'not counted (this build\'s redis_lock_stats() has no such counter)');
            $fails[] = sprintf('path %s (%s) %s, expected at least %d', $name, $what, $why, $least);
            continue;
        }
        $fails[] = sprintf('path %s (%s) ran %d time%s, fewer than the %d expected (--expect)', $name, $what, $ran, $ran === 1 ? '' : 's', $least);
    }
    return $fails;
}

/** The paths' tables (per run, then per topology × fault mix), as markdown lines. */
function paths_tables(array $runs, array $groups): array {
    $n = fn(?int $v) => $v === null ? '–' : (string) $v;
    $sum = function (array $rs, string $k): ?int {
        $vals = array_filter(array_map(fn($r) => $r['paths']['counts'][$k], $rs), fn($v) => $v !== null);
        return $vals ? array_sum($vals) : null;
    };
    $cells = fn(callable $c) => [
        $c('cad_releases') . ' / ' . $c('cad_renewals') . ' / ' . $c('cad_kicks'),
        $c('durable_acks') . ' / ' . $c('not_durable'),
        $c('handed_over'),
        $c('renewals') . ' / ' . $c('lost'),
        $c('quorum_acquisitions') . ' / ' . $c('quorum_releases'),
    ];
    $cols = '| compare-and-delete releases / renewals / kicks | durable acked / refused | handed over | renewals / lost | Redlock quorum acquisitions / releases |';
    $out = ['', '### Paths that ran (per run)', '',
        '| topology / faults | seed | fencing ' . $cols . ' expected | paths |',
        '|---|---|---|---|---|---|---|---|---|---|'];
    foreach ($runs as $r) {
        $h = $r['head'];
        $short = paths_short($h, $r['paths']);
        $out[] = sprintf('| %s / %s | %d | %s | %s | %s | %s |', $h['topology'], $h['mix'], $h['seed'], ($h['fencing'] ?? true) ? 'on' : 'off',
            implode(' | ', $cells(fn($k) => $n($r['paths']['counts'][$k]))),
            ($h['expect'] ?? []) ? str_replace('=', ' ≥ ', paths_expect_text($h['expect'])) : '–',
            $short ? '**short: ' . implode('; ', array_map(fn($k, $x) => "$k {$n($x[0])} of {$x[1]}", array_keys($short), $short)) . '**'
                : (($h['expect'] ?? []) ? 'ok' : '–'));
    }
    $out[] = '';
    $out[] = '### Paths that ran (per topology × fault mix, summed over its runs)';
    $out[] = '';
    $out[] = '| topology / faults | runs | fencing ' . $cols . ' runs short of what they expected |';
    $out[] = '|---|---|---|---|---|---|---|---|---|';
    foreach ($groups as $g => $rs) {
        $short = array_map(fn($r) => $r['head']['seed'], array_filter($rs, fn($r) => paths_short($r['head'], $r['paths'])));
        $fencing = array_unique(array_map(fn($r) => ($r['head']['fencing'] ?? true) ? 'on' : 'off', $rs));
        $out[] = sprintf('| %s | %d | %s | %s | %s |', $g, count($rs), implode(', ', $fencing),
            implode(' | ', $cells(fn($k) => $n($sum($rs, $k)))),
            $short ? '**' . count($short) . '** (seeds ' . implode(', ', $short) . ')' : '0');
    }
    return $out;
}
