<?php
// The nemesis's checker: reads the histories run.php wrote and judges them.
//
// Usage: php -n tools/nemesis/check.php [--md FILE] [--verbose] HISTORY.jsonl...
//
// For each run, and then for each topology × fault mix over all its seeds, it counts:
// - sections (the interval from the return of the acquire to the call of the release,
//   as the worker lived it) of one key that overlapped in real time (hrtime, one
//   clock for the host), except read holds with read holds, and for the semaphore
//   more holders than its permits;
//   - learned: one of the holders was told (a release that returned false or threw,
//     an extend that did, a LockLostException, a fence refused);
//   - silent: every holder's release returned true and nothing threw;
// - stale entries (where fences exist: one server, Sentinel): a section entered with a fence number no higher than one already
//   known to a holder of that key before (the hold was handed to PHP after it was
//   superseded, or the counter went back);
// - the fenced store's writes, accepted and refused;
// - liveness after the last fault: each key taken again (seconds after it), each
//   worker doing something, and exiting;
// - acquire latency (p50, p99, max) under faults, timeouts;
// - errors by exception class and message (addresses and numbers folded).
// It exits 1 when a run has a silent overlap, a stale entry on one server with
// persistence on (without it, or after a failover to a replica, the counter can go
// back, as docs/long-work.md says), a worker crash (non-zero exit, a signal, a fatal
// error, an error outside the LockException family), or a key or worker stuck after
// the faults ended; it prints the seed and the replay command of each failed run.
declare(strict_types=1);

$args = array_slice($argv, 1);
$md = null;
$verbose = false;
$files = [];
for ($i = 0; $i < count($args); $i++) {
    if ($args[$i] === '--md') { $md = $args[++$i] ?? null; continue; }
    if ($args[$i] === '--verbose') { $verbose = true; continue; }
    $files[] = $args[$i];
}
if (!$files) {
    fwrite(STDERR, "usage: check.php [--md FILE] [--verbose] HISTORY.jsonl...\n");
    exit(2);
}

/** The p-th percentile (0–100) of a list of numbers, by nearest rank; null for none. */
function pct(array $xs, float $p): ?float {
    if (!$xs) { return null; }
    sort($xs);
    return $xs[max(0, (int) ceil($p / 100 * count($xs)) - 1)];
}

/** $s cut to $n characters (bytes: the messages are ASCII), with an ellipsis when cut. */
function cut(string $s, int $n): string {
    return strlen($s) <= $n ? $s : substr($s, 0, $n - 1) . '…';
}

/** An exception message with what varies between occurrences folded, so that alike errors count together. */
function fold(string $exc): string {
    $s = preg_replace('#redis://127\.0\.0\.1:\d+#', 'redis://…', $exc);
    $s = preg_replace('/\d+(\.\d+)?/', 'N', $s);
    return cut($s, 240);
}

/** Judges one history; returns its figures, its failures and the details behind them. */
function judge(string $file): array {
    $lines = file($file, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES);
    $head = json_decode(array_shift($lines) ?? '', true);
    if (!is_array($head) || ($head['type'] ?? '') !== 'run') { throw new RuntimeException("$file: not a nemesis history"); }
    $attempts = [];   // "w#n" => events by op
    $faults = [];
    $exits = [];
    $other = [];
    $lastEvent = [];  // worker => the last time it finished something
    foreach ($lines as $l) {
        $e = json_decode($l, true);
        if (!is_array($e)) { $other[] = ['op' => 'bad-line']; continue; }
        $op = $e['op'] ?? '';
        if ($op === 'fault') { $faults[] = $e; continue; }
        if ($op === 'worker-exit') { $exits[$e['w']] = $e; continue; }
        if (isset($e['n'])) {
            $id = "{$e['w']}#{$e['n']}";
            $attempts[$id][$op][] = $e;
            $attempts[$id]['w'] = $e['w'];
            $attempts[$id]['n'] = $e['n'];
        } else {
            $other[] = $e;
        }
        if (isset($e['w']) && $op !== 'worker-exit') {
            $lastEvent[$e['w']] = max($lastEvent[$e['w']] ?? 0, $e['t1'] ?? $e['t0'] ?? 0);
        }
    }
    $durationMs = $head['duration'] * 1000;
    $quietFrom = $faults ? max(array_map(fn($f) => $f['t1'] ?? 0, $faults)) : 0.0;
    $quietFrom = max($quietFrom, (float) ($head['faults_ended'] ?? 0));

    // Sections, with what their holders learned.
    $sections = [];
    $acqLat = [];
    $acqOutcome = ['ok' => 0, 'fail' => 0, 'exc' => 0];
    $errors = [];
    $store = ['accepted' => 0, 'refused' => 0, 'unfenced' => 0];
    foreach ($attempts as $id => $a) {
        $acq = $a['acquire'][0] ?? null;
        foreach (['acquire', 'release', 'extend', 'fence', 'cleanup'] as $op) {
            foreach ($a[$op] ?? [] as $e) {
                if (($e['res'] ?? '') === 'exc') {
                    $k = fold($e['exc']);
                    $errors[$k][$op] = ($errors[$k][$op] ?? 0) + 1;
                }
            }
        }
        foreach ($a['store-write'] ?? [] as $e) { $store[$e['res']]++; }
        if ($acq === null) { continue; }
        $acqOutcome[$acq['res']]++;
        if ($acq['res'] === 'ok' && $acq['t0'] < $quietFrom) { $acqLat[] = $acq['t1'] - $acq['t0']; }
        if (!isset($a['section-begin'])) { continue; }
        $rel = $a['release'][0] ?? null;
        $learned = [];
        if ($rel === null) { $learned[] = 'no release'; }
        elseif ($rel['res'] === 'exc') { $learned[] = 'release threw ' . strtok($rel['exc'], ':'); }
        elseif ($rel['ret'] === false) { $learned[] = 'release false'; }
        foreach ($a['extend'] ?? [] as $x) {
            if ($x['res'] === 'exc') { $learned[] = 'extend threw ' . strtok($x['exc'], ':'); }
            elseif ($x['ret'] === false) { $learned[] = 'extend false'; }
        }
        $refused = count(array_filter($a['store-write'] ?? [], fn($s) => $s['res'] === 'refused'));
        $end = $a['section-end'][0]['t0'] ?? ($rel['t0'] ?? ($exits[$a['w']]['t0'] ?? $durationMs));
        $sections[] = ['id' => $id, 'w' => $a['w'], 'n' => $a['n'], 'key' => $acq['key'], 'mode' => $acq['mode'],
            'acq_t0' => $acq['t0'], 'begin' => $a['section-begin'][0]['t0'], 'end' => $end, 'fence' => $acq['fence'] ?? null,
            'fence_t' => $acq['fence_t'] ?? $acq['t1'], 'learned' => $learned, 'refused' => $refused,
            'released' => $rel === null ? 'none' : ($rel['res'] === 'exc' ? $rel['exc'] : var_export($rel['ret'], true)),
            'sync' => $acq['sync'] ?? false, 'fair' => $acq['fair'] ?? false, 'caller_token' => $acq['caller_token'] ?? false];
    }

    // Overlaps: lock keys pairwise (read with read is allowed), the semaphore by count.
    $overlaps = [];
    $byKey = [];
    foreach ($sections as $s) { $byKey[$s['key']][] = $s; }
    foreach ($byKey as $key => $list) {
        usort($list, fn($a, $b) => $a['begin'] <=> $b['begin']);
        if ($key === 'sem') {
            $permits = 2;
            $active = [];
            foreach ($list as $s) {
                $active = array_values(array_filter($active, fn($x) => $x['end'] > $s['begin']));
                $active[] = $s;
                if (count($active) > $permits) { $overlaps[] = $active; }
            }
            continue;
        }
        $n = count($list);
        for ($i = 0; $i < $n; $i++) {
            for ($j = $i + 1; $j < $n && $list[$j]['begin'] < $list[$i]['end']; $j++) {
                if ($list[$i]['mode'] === 'read' && $list[$j]['mode'] === 'read') { continue; }
                if ($list[$i]['w'] === $list[$j]['w']) { continue; }
                $overlaps[] = [$list[$i], $list[$j]];
            }
        }
    }
    $learnedOv = $silent = $silentFenced = 0;
    $silentDetails = [];
    foreach ($overlaps as $group) {
        $told = array_filter($group, fn($s) => $s['learned']);
        if ($told) { $learnedOv++; continue; }
        $silent++;
        if (array_filter($group, fn($s) => $s['refused'] > 0)) { $silentFenced++; }
        $silentDetails[] = $group;
    }

    // Stale entries: a fence no higher than one already known for the key.
    $stale = [];
    $fenced = 0;
    foreach ($byKey as $key => $list) {
        $list = array_values(array_filter($list, fn($s) => $s['fence'] !== null));
        $fenced += count($list);
        usort($list, fn($a, $b) => $a['fence_t'] <=> $b['fence_t']);
        $max = null;
        foreach ($list as $s) {
            if ($max !== null && $s['fence'] <= $max['fence']) { $stale[] = [$s, $max]; }
            if ($max === null || $s['fence'] > $max['fence']) { $max = $s; }
        }
    }

    // Liveness after the last fault.
    $recovery = [];
    $keys = array_unique(array_merge($head['keys'], array_keys($byKey)));
    $stuck = [];
    foreach ($keys as $k) {
        $first = null;
        foreach ($attempts as $a) {
            $acq = $a['acquire'][0] ?? null;
            if ($acq && $acq['key'] === $k && $acq['res'] === 'ok' && $acq['t1'] >= $quietFrom) {
                $first = $first === null ? $acq['t1'] : min($first, $acq['t1']);
            }
        }
        $used = (bool) array_filter($attempts, fn($a) => ($a['acquire'][0]['key'] ?? null) === $k);
        if (!$used) { continue; }
        $recovery[$k] = $first === null ? null : ($first - $quietFrom) / 1000;
        if ($first === null) { $stuck[] = "key $k never taken after the last fault"; }
    }

    // Workers: each must finish something after the faults, end by itself, exit 0, and not crash.
    $crashes = [];
    for ($w = 0; $w < $head['workers']; $w++) {
        $x = $exits[$w] ?? null;
        if ($x === null) { $crashes[] = "worker $w: no exit recorded"; continue; }
        if ($x['stuck']) { $stuck[] = "worker $w still running 10 s after the end (killed)"; continue; }
        if ($x['signal'] !== null) { $crashes[] = "worker $w killed by signal {$x['signal']}"; }
        elseif ($x['code'] !== 0) { $crashes[] = "worker $w exited with {$x['code']}"; }
        if (($x['output'] ?? '') !== '') { $crashes[] = "worker $w wrote: " . cut(str_replace("\n", ' | ', $x['output']), 300); }
        if (($lastEvent[$w] ?? 0) < $quietFrom) { $stuck[] = "worker $w finished nothing after the last fault"; }
    }
    foreach ($other as $e) {
        if (($e['op'] ?? '') === 'worker-crash') { $crashes[] = "worker {$e['w']} crashed: {$e['exc']} at {$e['at']}"; }
        if (($e['op'] ?? '') === 'nemesis-error') { $crashes[] = "the nemesis failed a fault: {$e['exc']}"; }
        if (($e['op'] ?? '') === 'bad-line') { $crashes[] = 'a history line is not JSON'; }
    }
    $done = array_column(array_filter($other, fn($e) => ($e['op'] ?? '') === 'worker-done'), 'w');
    foreach (array_keys($exits) as $w) {
        if (!in_array($w, $done, true) && !$exits[$w]['stuck']) { $crashes[] = "worker $w did not finish its loop"; }
    }

    $fails = [];
    if ($silent) { $fails[] = "$silent silent overlap(s)"; }
    if ($stale && ($head['strict_fences'] ?? ($head['persist'] && $head['fenced']))) { $fails[] = count($stale) . ' stale entr' . (count($stale) === 1 ? 'y' : 'ies') . ' with persistence on'; }
    foreach ($crashes as $c) { $fails[] = $c; }
    foreach ($stuck as $s) { $fails[] = $s; }

    $faultCount = [];
    foreach ($faults as $f) { $faultCount[$f['kind']] = ($faultCount[$f['kind']] ?? 0) + 1; }
    return ['file' => $file, 'head' => $head, 'sections' => count($sections), 'fenced' => $fenced,
        'overlaps' => count($overlaps), 'learned' => $learnedOv, 'silent' => $silent, 'silent_fenced' => $silentFenced,
        'silent_details' => $silentDetails, 'stale' => $stale, 'store' => $store, 'recovery' => $recovery,
        'lat' => $acqLat, 'acq' => $acqOutcome, 'errors' => $errors, 'fails' => $fails, 'faults' => $faults,
        'fault_count' => $faultCount, 'quiet_from' => $quietFrom];
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
    return sprintf('w%d#%d %s %s%s: acquire called %.0f, held %.0f–%.0f ms (waited %.0f ms), fence %s, release %s, store refused %d; faults on it: %s',
        $s['w'], $s['n'], $s['key'], $s['mode'], $s['sync'] ? ' sync' : ($s['fair'] ? ' fair' : ($s['caller_token'] ? ' token' : '')),
        $s['acq_t0'], $s['begin'], $s['end'], $s['begin'] - $s['acq_t0'], var_export($s['fence'], true), $s['released'], $s['refused'],
        faults_near($r, $s['w'], $s['acq_t0'], $s['end']));
}

$runs = [];
foreach ($files as $f) {
    try { $runs[] = judge($f); } catch (Throwable $e) { fwrite(STDERR, "check: $f: {$e->getMessage()}\n"); exit(2); }
}

// Runs in the order of the topologies (as run.php lists them), then fault mix, then seed.
$order = ['single', 'single-nopersist', 'redlock', 'redlock-nopersist', 'sentinel', 'cluster'];
usort($runs, fn($a, $b) => [array_search($a['head']['topology'], $order, true), $a['head']['mix'], $a['head']['seed']]
    <=> [array_search($b['head']['topology'], $order, true), $b['head']['mix'], $b['head']['seed']]);

$fmt = fn(?float $v, string $f = '%.0f') => $v === null ? '–' : sprintf($f, $v);
$out = [];
$out[] = '### Per run';
$out[] = '';
$out[] = '| topology | faults | seed | faults run | sections | overlaps | learned | **silent** | silent, store refused | stale entries | store accepted / refused / unfenced | keys back after faults (s) | acquire ok / false / exc | acquire p50 / p99 / max (ms) | verdict |';
$out[] = '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';
foreach ($runs as $r) {
    $h = $r['head'];
    $out[] = sprintf('| %s | %s | %d | %d | %d | %d | %d | %s | %d | %s | %d / %d / %d | %s | %d / %d / %d | %s / %s / %s | %s |',
        $h['topology'], $h['mix'], $h['seed'], count($r['faults']), $r['sections'], $r['overlaps'], $r['learned'],
        $r['silent'] ? "**{$r['silent']}**" : '0', $r['silent_fenced'],
        $h['fenced'] ? count($r['stale']) . " of {$r['fenced']}" : 'no fences',
        $r['store']['accepted'], $r['store']['refused'], $r['store']['unfenced'],
        $r['recovery'] ? implode(', ', array_map(fn($k, $v) => "$k " . ($v === null ? 'never' : sprintf('%.2f', $v)), array_keys($r['recovery']), $r['recovery'])) : '–',
        $r['acq']['ok'], $r['acq']['fail'], $r['acq']['exc'],
        $fmt(pct($r['lat'], 50)), $fmt(pct($r['lat'], 99)), $fmt($r['lat'] ? max($r['lat']) : null),
        $r['fails'] ? 'FAIL' : 'ok');
}

// Per topology × fault mix, over the seeds.
$groups = [];
foreach ($runs as $r) { $groups[$r['head']['topology'] . ' / ' . $r['head']['mix']][] = $r; }
$out[] = '';
$out[] = '### Per topology × fault mix';
$out[] = '';
$out[] = '| topology / faults | runs | sections | overlaps | learned | **silent** | runs with silent | stale entries | runs with stale | store refused | slowest key back (s) | acquire p50 / p99 / max (ms) | runs failed |';
$out[] = '|---|---|---|---|---|---|---|---|---|---|---|---|---|';
foreach ($groups as $g => $rs) {
    $sum = fn(string $k) => array_sum(array_map(fn($r) => is_array($r[$k]) ? count($r[$k]) : $r[$k], $rs));
    $lat = array_merge(...array_map(fn($r) => $r['lat'], $rs));
    $rec = array_merge(...array_map(fn($r) => array_values($r['recovery']), $rs));
    $silentRuns = array_map(fn($r) => $r['head']['seed'], array_filter($rs, fn($r) => $r['silent'] > 0));
    $staleRuns = array_map(fn($r) => $r['head']['seed'], array_filter($rs, fn($r) => count($r['stale']) > 0));
    $out[] = sprintf('| %s | %d | %d | %d | %d | %s | %s | %s | %s | %d | %s | %s / %s / %s | %d |', $g, count($rs), $sum('sections'), $sum('overlaps'),
        $sum('learned'), $sum('silent') ? '**' . $sum('silent') . '**' : '0',
        $silentRuns ? count($silentRuns) . ' (seeds ' . implode(', ', $silentRuns) . ')' : '0',
        $rs[0]['head']['fenced'] ? $sum('stale') . ' of ' . $sum('fenced') : 'no fences',
        $staleRuns ? count($staleRuns) . ' (seeds ' . implode(', ', $staleRuns) . ')' : '0',
        array_sum(array_map(fn($r) => $r['store']['refused'], $rs)),
        in_array(null, $rec, true) ? 'never' : $fmt($rec ? max($rec) : null, '%.2f'),
        $fmt(pct($lat, 50)), $fmt(pct($lat, 99)), $fmt($lat ? max($lat) : null),
        count(array_filter($rs, fn($r) => $r['fails'])));
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
foreach ($runs as $r) {
    $h = $r['head'];
    $limit = $verbose ? PHP_INT_MAX : 4;
    $lines = [];
    foreach (array_slice($r['silent_details'], 0, $limit) as $group) {
        $lines[] = '- silent overlap:';
        foreach ($group as $s) { $lines[] = '  - ' . section_line($r, $s); }
    }
    foreach (array_slice($r['stale'], 0, $limit) as [$s, $max]) {
        $lines[] = sprintf('- stale entry: fence %d on %s, but fence %d was known at %.0f ms (w%d#%d):', $s['fence'], $s['key'], $max['fence'], $max['fence_t'], $max['w'], $max['n']);
        $lines[] = '  - ' . section_line($r, $s);
    }
    if (!$r['fails'] && !$lines) { continue; }
    $failed += $r['fails'] ? 1 : 0;
    $details[] = sprintf('#### %s %s seed %d: %s', $h['topology'], $h['mix'], $h['seed'], $r['fails'] ? 'FAIL: ' . implode('; ', $r['fails']) : 'ok (with findings)');
    $details[] = '';
    $details[] = "replay: `{$h['replay']}`; check: `php -n tools/nemesis/check.php --verbose {$r['file']}`";
    $details[] = '';
    foreach ($lines as $l) { $details[] = $l; }
    $more = count($r['silent_details']) + count($r['stale']) - count(array_filter($lines, fn($l) => str_starts_with($l, '- ')));
    if ($more > 0) { $details[] = "- … and $more more (--verbose)"; }
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
        . sprintf("Extension %s (md5 %s, tree %s), PHP %s, %s.\n", $h['ext'], substr($h['ext_md5'], 0, 12), $h['git'] ?: '?', $h['php'], preg_replace('/ sha=.*/', '', $h['redis']))
        . sprintf("Each run: %d workers, keys %s (and `sem`), leases %.1f s, waits %.1f s, read_timeout %.1f s; a fault every 0.2–0.8 s until %d s before the end.\n\n",
            $h['workers'], implode(', ', $h['keys']), $h['lease'], $h['wait'], $h['read_timeout'], $h['quiet'])
        . "How to read it (tools/nemesis/README.md has the rules): an *overlap* is two holders of one key at once\n"
        . "(read holds excepted); *learned* when a holder was told (a release false or an exception), *silent* when\n"
        . "every release returned true. A *stale entry* is a hold entered with a fence no higher than one already\n"
        . "known. A run fails on a silent overlap, a stale entry on one server with AOF, a crash or a stuck key.\n\n";
    file_put_contents($md, $pre . $text);
}
if ($failed) {
    fwrite(STDERR, "nemesis: $failed of " . count($runs) . " run(s) failed (see Findings above for the seed and replay command)\n");
    exit(1);
}
