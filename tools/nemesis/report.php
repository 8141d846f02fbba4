<?php
// The nemesis checker's report (check.php): the tables of the judged runs, per run, per
// topology × fault mix, the paths that ran, the errors, and the findings with their
// replay commands; written to --md too.
declare(strict_types=1);

/** A path inside this repository as the tables print it: from the repository's root,
 * where the replay lines run, so that no machine's own folders end up in them. */
function from_root(string $text): string {
    static $root = null;
    $root ??= realpath(dirname(__DIR__, 2)) . '/';
    return str_replace($root, '', $text);
}

/** " / resp3 MODE" for a run whose RESP3 mode is not native and not already in its mix; else "". */
function resp3_note(array $head): string {
    $m = $head['resp3'] ?? 'native';
    return $m === 'native' || stripos($head['mix'], 'resp3') !== false ? '' : " / resp3 $m";
}

/** The faults that touched worker $w or the servers between $t0 and $t1 (ms), for a detail line. */
function faults_near(array $r, int $w, float $t0, float $t1): string {
    $hits = [];
    foreach ($r['faults'] as $f) {
        if ($f['t1'] < $t0 || $f['t0'] > $t1) { continue; }
        // A pause of one of the harness's threads stopped them all ('workers').
        if (isset($f['worker']) && $f['worker'] !== $w && !in_array($w, $f['workers'] ?? [], true)) { continue; }
        $hits[] = sprintf('%s%s %.0f–%.0f', $f['kind'], isset($f['worker']) ? " w{$f['worker']}" : '', $f['t0'], $f['t1']);
    }
    return $hits ? implode(', ', $hits) : 'none';
}

function section_line(array $r, array $s): string {
    $promiseEnd = $s['promise'] ? end($s['promise'])[1] : $s['end'];
    return sprintf('w%d#%d %s %s%s: acquire called %.0f, returned %.0f, %s (waited %.0f ms), promise %s, fence %s, release %s%s, store refused %d; faults on it: %s',
        $s['w'], $s['n'], $s['key'], $s['mode'],
        $s['sync'] ? ' sync' : ($s['fair'] ? ' fair' : ($s['caller_token'] ? ' token' . ($s['reused'] ? ' (reused)' : '') : ($s['multi'] ? ' multi' : ''))),
        $s['acq_t0'], $s['acq_t1'], $s['begin'] === null ? sprintf('no section, until %.0f', $s['end']) : sprintf('held %.0f–%.0f ms', $s['begin'], $s['end']),
        $s['acq_t1'] - $s['acq_t0'], $r['bounds'] ? promise_text($s['promise']) : '(no bounds)',
        var_export($s['fence'], true), $s['released'], $s['told'] ? ' (told: ' . implode(', ', $s['told']) . ')' : '', $s['refused'],
        faults_near($r, $s['w'], $s['acq_t0'], is_infinite($promiseEnd) ? max($s['end'], $s['acq_t1']) : max($s['end'], $promiseEnd)));
}

/**
 * Prints the tables of the judged $runs (and writes them to $md with the page's head,
 * when given); the findings of every failed run at most 4 sections each unless
 * $verbose. Returns the exit code: 1 when a run failed.
 */
function report(array $runs, bool $verbose, ?string $md): int {
    $fmt = fn(?float $v, string $f = '%.0f') => $v === null ? '–' : sprintf($f, $v);
    $bold = fn(int $n) => $n ? "**$n**" : '0';
    /** The lease-violation cell of a run: the count, or "no bounds", and promises that failed the sanity checks. */
    $violationCell = function (array $r) use ($bold): string {
        $cell = $r['bounds'] ? $bold(count($r['violations'])) : 'no bounds';
        return $cell . ($r['bad_bounds'] ? '; **' . count($r['bad_bounds']) . ' bad bounds**' : '');
    };
    $out = [];
    $out[] = '### Per run';
    $out[] = '';
    $out[] = '| topology | faults | resp3 | seed | faults run | sections | overlaps | learned | **silent** | silent, store refused | **lease violations** | stale entries | store accepted / refused / unfenced | keys back after faults (s) | acquire ok / false / exc | acquire p50 / p99 / max (ms) | verdict |';
    $out[] = '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';
    foreach ($runs as $r) {
        $h = $r['head'];
        $out[] = sprintf('| %s | %s | %s | %d | %d | %s | %d | %d | %s | %d | %s | %s | %d / %d / %d | %s | %d / %d / %d | %s / %s / %s | %s |',
            $h['topology'], $h['mix'], $h['resp3'] ?? '–', $h['seed'], count($r['faults']),
            $r['sections'] . ($r['reused'] ? " ({$r['reused']} reused tokens)" : ''), $r['overlaps'], $r['learned'],
            $bold($r['silent']), $r['silent_fenced'], $violationCell($r),
            $h['fenced'] ? count($r['stale']) . " of {$r['fenced']}" . ($r['late'] ? " ({$r['late']} late)" : '') : 'no fences',
            $r['store']['accepted'], $r['store']['refused'], $r['store']['unfenced'],
            $r['recovery'] ? implode(', ', array_map(fn($k, $v) => "$k " . ($v === null ? 'never' : sprintf('%.2f', $v)), array_keys($r['recovery']), $r['recovery'])) : '–',
            $r['acq']['ok'], $r['acq']['fail'], $r['acq']['exc'],
            $fmt(pct($r['lat'], 50)), $fmt(pct($r['lat'], 99)), $fmt($r['lat'] ? max($r['lat']) : null),
            $r['fails'] ? 'FAIL' : 'ok');
    }

    // Per topology × fault mix, over the seeds (run.php's mix names a RESP3 mode; where it
    // does not, the mode is added).
    $groups = [];
    foreach ($runs as $r) { $groups[$r['head']['topology'] . ' / ' . $r['head']['mix'] . resp3_note($r['head'])][] = $r; }
    $seedsOf = fn(array $rs, callable $p) => array_map(fn($r) => $r['head']['seed'], array_filter($rs, $p));
    $runsCell = fn(array $seeds) => $seeds ? count($seeds) . ' (seeds ' . implode(', ', $seeds) . ')' : '0';
    $out[] = '';
    $out[] = '### Per topology × fault mix';
    $out[] = '';
    $out[] = '| topology / faults | runs | sections | overlaps | learned | **silent** | runs with silent | **lease violations** | runs with violations | stale entries | runs with stale | store refused | slowest key back (s) | acquire p50 / p99 / max (ms) | runs failed |';
    $out[] = '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';
    foreach ($groups as $g => $rs) {
        $sum = fn(string $k) => array_sum(array_map(fn($r) => is_array($r[$k]) ? count($r[$k]) : $r[$k], $rs));
        $lat = array_merge(...array_map(fn($r) => $r['lat'], $rs));
        $rec = array_merge(...array_map(fn($r) => array_values($r['recovery']), $rs));
        $unbounded = count(array_filter($rs, fn($r) => !$r['bounds']));
        $badB = $sum('bad_bounds');
        $vCell = $unbounded === count($rs) ? 'no bounds'
            : $bold($sum('violations')) . ($unbounded ? " ($unbounded runs no bounds)" : '') . ($badB ? "; **$badB bad bounds**" : '');
        $out[] = sprintf('| %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %d | %s | %s / %s / %s | %d |', $g, count($rs), $sum('sections'), $sum('overlaps'),
            $sum('learned'), $bold($sum('silent')), $runsCell($seedsOf($rs, fn($r) => $r['silent'] > 0)),
            $vCell, $runsCell($seedsOf($rs, fn($r) => $r['violations'] || $r['bad_bounds'])),
            $rs[0]['head']['fenced'] ? $sum('stale') . ' of ' . $sum('fenced') . ($sum('late') ? ' (' . $sum('late') . ' late)' : '') : 'no fences',
            $runsCell($seedsOf($rs, fn($r) => count($r['stale']) > 0)),
            array_sum(array_map(fn($r) => $r['store']['refused'], $rs)),
            in_array(null, $rec, true) ? 'never' : $fmt($rec ? max($rec) : null, '%.2f'),
            $fmt(pct($lat, 50)), $fmt(pct($lat, 99)), $fmt($lat ? max($lat) : null),
            count(array_filter($rs, fn($r) => $r['fails'])));
    }

    // The paths that ran (paths.php).
    foreach (paths_tables($runs, $groups) as $l) { $out[] = $l; }

    // Availability: durable runs beside their plain runs (check.php's availability()).
    $paired = array_filter($runs, fn($r) => isset($r['availability']));
    if ($paired) {
        $out[] = '';
        $out[] = '### Availability: durable runs beside the plain run of the same topology, faults and seed';
        $out[] = '';
        $out[] = '| topology / faults | seed | plain: sections | durable: sections | share | expected (over the seeds) | durable: acquire ok / false / exc |';
        $out[] = '|---|---|---|---|---|---|---|';
        foreach ($paired as $r) {
            [$plain, $share] = $r['availability'];
            $all = $r['availability'][2] ?? null;
            $want = $r['head']['expect']['share_of_plain'] ?? null;
            $out[] = sprintf('| %s / %s | %d | %d | %d | %.0f %% | %s | %d / %d / %d |', $r['head']['topology'], $r['head']['mix'], $r['head']['seed'],
                $plain, $r['sections'], $share, $want === null ? '–' : sprintf('≥ %d %% (%.0f %%)', $want, $all), $r['acq']['ok'], $r['acq']['fail'], $r['acq']['exc']);
        }
    }

    // Errors by class, per topology × mix.
    $out[] = '';
    $out[] = '### Errors by class (all runs of a topology × fault mix)';
    $out[] = '';
    $out[] = '| topology / faults | where | count | error |';
    $out[] = '|---|---|---|---|';
    foreach ($groups as $g => $rs) {
        $all = [];
        foreach ($rs as $r) {
            foreach ($r['errors'] as $k => $ops) { foreach ($ops as $op => $c) { $all["$op\0$k"] = ($all["$op\0$k"] ?? 0) + $c; } }
        }
        arsort($all);
        // The 8 most frequent; the rest in one line.
        $rest = array_sum(array_slice($all, 8));
        if ($rest) { $all = array_slice($all, 0, 8, true) + ["…\0" . (count($all) - 8) . ' other kinds'  => $rest]; }
        foreach ($all as $ok => $c) {
            [$op, $k] = explode("\0", $ok, 2);
            $out[] = sprintf('| %s | %s | %d | `%s` |', $g, $op, $c, str_replace('|', '\|', $k));
        }
    }

    // Details: what failed, and how to replay it.
    $details = [];
    $failed = 0;
    $limit = $verbose ? PHP_INT_MAX : 4;
    foreach ($runs as $r) {
        $h = $r['head'];
        $lines = [];
        $shown = $total = 0;
        $item = function (string $head, array $sub) use (&$lines, &$shown, &$total, $limit) {
            $total++;
            if ($shown >= $limit) { return; }
            $shown++;
            $lines[] = $head;
            foreach ($sub as $s) { $lines[] = "  - $s"; }
        };
        $at = fn(float $t) => is_infinite($t) ? '∞' : sprintf('%.1f', $t);
        foreach ($r['violations'] as [$group, $from, $to]) {
            $item(sprintf('- lease violation on %s: %s promised at once (%s–%s ms), %s:', $group[0]['key'],
                count($group) > 2 || $group[0]['sem'] ? count($group) . ' holders of ' . $group[0]['permits'] . ' permits' : 'two holders', $at($from), $at($to),
                count($group) > 2 || $group[0]['sem'] ? 'more than the semaphore allows' : 'the second entered inside the first\'s promise'),
                array_map(fn($s) => section_line($r, $s), $group));
        }
        foreach ($r['bad_bounds'] as [$kind, $text, $id]) {
            $item("- $text" . ($id === null ? '' : ':'), $id === null ? [] : [section_line($r, $r['holds'][$id])]);
        }
        foreach ($r['silent_details'] as [$group, $start, $unprotected]) {
            $item($start === null ? '- silent overlap:' : sprintf('- silent overlap from %.1f ms: %s past %s promise and not told it was lost:', $start,
                implode(', ', array_map(fn($id) => "w$id", $unprotected)), count($unprotected) === 1 ? 'its' : 'their'),
                array_map(fn($s) => section_line($r, $s), $group));
        }
        foreach ($r['stale'] as [$s, $max]) {
            $item(sprintf('- stale entry: fence %d on %s, but fence %d was known at %.0f ms (w%d#%d):', $s['fence'], $s['key'], $max['fence'], $max['fence_t'], $max['w'], $max['n']),
                [section_line($r, $s)]);
        }
        if (!$r['fails'] && !$lines) { continue; }
        $failed += $r['fails'] ? 1 : 0;
        $details[] = sprintf('#### %s %s%s seed %d: %s', $h['topology'], $h['mix'], resp3_note($h), $h['seed'],
            $r['fails'] ? 'FAIL: ' . implode('; ', $r['fails']) : 'ok (with findings)');
        $details[] = '';
        $details[] = 'replay: `' . from_root($h['replay']) . "`; check: `php -n tools/nemesis/check.php --verbose {$r['file']}`";
        $details[] = '';
        foreach ($lines as $l) { $details[] = $l; }
        if ($total > $shown) { $details[] = '- … and ' . ($total - $shown) . ' more (--verbose)'; }
        $details[] = '';
    }
    if ($details) {
        $out[] = '';
        $out[] = '### Findings';
        $out[] = '';
        foreach ($details as $d) { $out[] = $d; }
    }

    $text = implode("\n", $out) . "\n";
    echo $text;
    if ($md !== null) {
        $h = $runs[0]['head'];
        $pre = "# Nemesis: the lock under random faults\n\n"
            . "Written by `make nemesis` (tools/nemesis/run.php, judged by tools/nemesis/check.php) on " . date('Y-m-d') . ".\n"
            . sprintf("Extension %s (md5 %s, tree %s), PHP %s, %s.\n", from_root($h['ext']), substr($h['ext_md5'], 0, 12), $h['git'] ?: '?', $h['php'], preg_replace('/ sha=.*/', '', $h['redis']))
            . sprintf("Each run: %d workers, keys %s (and `sem`), leases %.1f s, waits %.1f s, read_timeout %.1f s; a fault every 0.2–0.8 s until %d s before the end.\n\n",
                $h['workers'], implode(', ', $h['keys']), $h['lease'], $h['wait'], $h['read_timeout'], $h['quiet'])
            . "How to read it (tools/nemesis/README.md has the rules): each holder's client samples the bound it\n"
            . "promises (its lease lasts until then); a section's *promise* is those bounds, cut at its release. A\n"
            . "*lease violation* is two promises of one key in force at once (read with read excepted; for the\n"
            . "semaphore, more than its permits): the lock broke its word. An *overlap* is two holders in their\n"
            . "sections at once; when the promises did not meet, it is *learned* if every holder then past its\n"
            . "promise was told the hold was lost (a release or extend returning false, LockLostException, \"no\n"
            . "fencing token\"), *silent* if one was not (a connection error or a release that returned true is not\n"
            . "being told). A *stale entry* is a hold entered with a fence no higher than one already known. A run\n"
            . "fails on a lease violation, a bound longer than the lease or missing, a silent overlap, a stale entry\n"
            . "on one server with AOF, a crash or a stuck key. Runs without bound samples (\"no bounds\") are judged\n"
            . "on overlaps as before: learned when any holder's release returned false or threw. The *paths* tables\n"
            . "say what ran: the workers' `redis_lock_stats()` summed (compare-and-delete releases, renewals and\n"
            . "kicks, durable checks acknowledged and refused, hand-overs) and Redlock's majority decisions; a run\n"
            . "that expected a path (`--expect`) and ran it fewer times fails.\n\n";
        file_put_contents($md, $pre . $text);
    }
    if ($failed) {
        fwrite(STDERR, "nemesis: $failed of " . count($runs) . " run(s) failed (see Findings above for the seed and replay command)\n");
        return 1;
    }
    return 0;
}
