<?php
// The nemesis's checker: reads the histories run.php wrote and judges the lock by what
// it promises (its lease bounds), then by what its holders were told.
//
// Usage: php -n tools/nemesis/check.php [--md FILE] [--verbose] HISTORY.jsonl...
// Its self-test: php -n tools/nemesis/check-test.php (synthetic histories, one per rule).
//
// Times are ms from the run's origin (hrtime: one clock for the host). A hold is an
// attempt (worker w, attempt n; a MultiLock's attempt is one per key, n*10+j) whose
// acquire returned one; a section is a hold that entered (section-begin), its real-time
// interval running from there to its section-end (else its release's call, else its
// worker's exit). For each run, and then for each topology × fault mix over all its
// seeds (the mix names the RESP3 mode; the per-run table has it too), it counts:
// - promises: a `bound` sample {t0, until} says that at t0 the holder's client promised
//   its lease lasts until `until` (null: a lease that never ends). A hold's promise is
//   the union of [t0, min(until, r)] over its samples, r the release's call (its
//   `release` event's t0; for synchronized() the callable's return); with no release,
//   no clip. Intervals meet when they share more than an instant.
// - lease violations (fail the run): two holds of one key from different attempts
//   (a read hold with a read hold excepted) whose promises meet; for the semaphore (key
//   `sem`, `permits` from its acquire, default 2), a promise that starts while `permits`
//   others are in force.
// - promise sanity (fails the run): a sample whose until − t0 exceeds the lease (the
//   acquire's `lease`, else the header's, × 1000) by more than 1 ms, or whose until is
//   null under a lease (the client's bound is wrong); a sample taken before its
//   acquisition returned (t0 < the acquire's t1 − 0.5 ms); and, when the header says
//   `bounds: true`, a section with no sample at all.
// - overlaps: two sections of one key whose real-time intervals meet (read with read
//   excepted, and one worker's own), for the semaphore a section that begins while
//   `permits` others are in theirs. One whose promises exceed the permits (1 for a lock
//   key) is a lease violation; any other is
//   - learned when every holder unprotected at the overlap's start was told its hold
//     was lost. The start is the latest section's begin, or its first sample when that
//     came later (the bound is read just after the acquire returns); unprotected: its
//     promise does not cover that instant. Told: its release returned false; its
//     release or an extend threw LockLostException; an extend returned false; a fence
//     call threw "no fencing token"; for synchronized(), whose release goes unawaited,
//     the warning that release raised later (`late-loss`: told late). A connection
//     error, no release, or a release that returned true is not being told.
//   - silent otherwise (fails the run).
//   A history without `bounds` in its header (an older worker) is judged as before the
//   bounds: learned when any holder's release returned false or threw, or it had none,
//   or an extend returned false or threw; silent when none did. Any samples it holds are
//   still checked (violations, sanity); with none, its violations read "no bounds".
// - stale entries (where fences exist: one server, Sentinel, Cluster): a section entered
//   with a fence number no higher than one already known to a holder of that key before
//   (the hold was handed to PHP after it was superseded, or the counter went back);
// - the fenced store's writes, accepted and refused;
// - liveness after the last fault: each key taken again (seconds after it), each
//   worker doing something, and exiting;
// - acquire latency (p50, p99, max) under faults, timeouts;
// - errors by exception class and message (addresses and numbers folded).
// - the paths that ran (paths.php): the workers' redis_lock_stats() summed over their
//   processes (compare-and-delete releases, renewals and kicks, durable checks
//   acknowledged and refused, hand-overs, renewals, losses) and, on Redlock, the
//   decisions a majority made (acquisitions, releases), in tables of their own;
// - availability: a durable run's sections beside those of the plain run of the same
//   topology, faults and seed, when one is judged with it (issue 58); with
//   share_of_plain expected, over every seed of that topology and mix judged together;
// It exits 1 when a run has a lease violation, a promise that fails the sanity checks,
// a silent overlap, a stale entry on one server with persistence on (without it, or
// after a failover to a replica, the counter can go back, as docs/long-work.md says), a
// worker crash (non-zero exit, a signal, a fatal error, an error outside the
// LockException family), a key or worker stuck after the faults ended, or a path it
// expected (the header's `expect`, run.php --expect) that ran fewer times than that, or
// a durable run that expected a share of its plain runs' sections (share_of_plain) where
// its topology and mix made fewer over the seeds judged; it prints the seed and the replay command of each failed run.
declare(strict_types=1);

require_once __DIR__ . '/paths.php';
require_once __DIR__ . '/promises.php';
require_once __DIR__ . '/report.php';

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

/** A run's fault mix without its durable option: what its plain run's mix reads. */
function plain_mix(string $mix): string {
    return preg_replace('/, durable(?:_aof)? \d+/', '', $mix);
}

/**
 * Availability (issue 58): each durable run (`durable` or `durable_aof` in its header)
 * gets `availability` = [the plain run's sections, its share of them in percent] when
 * a plain run of the same topology, fault mix, seed and length was judged with it.
 * Runs that expect `share_of_plain` (--expect) are held to it over all their seeds
 * judged together (one seed's interleavings vary a lot): each fails when the durable
 * runs of its topology and mix made fewer than that share of their plain runs'
 * sections in all, or when it has no plain run beside it.
 */
function availability(array &$runs): void {
    $durable = fn(array $h) => ($h['durable'] ?? 0) || ($h['durable_aof'] ?? false);
    $sums = [];  // topology / plain mix => [durable sections, plain sections, seeds]
    foreach ($runs as &$r) {
        $h = $r['head'];
        if (!$durable($h)) { continue; }
        $plain = null;
        foreach ($runs as $p) {
            $ph = $p['head'];
            if (!$durable($ph) && $ph['topology'] === $h['topology'] && $ph['seed'] === $h['seed']
                && $ph['mix'] === plain_mix($h['mix']) && ($ph['duration'] ?? 0) === ($h['duration'] ?? 0)) {
                $plain = $p;
            }
        }
        $want = $h['expect']['share_of_plain'] ?? null;
        if ($plain === null) {
            if ($want !== null) { $r['fails'][] = "path share_of_plain: no plain run of {$h['topology']} / " . plain_mix($h['mix']) . " seed {$h['seed']} judged beside it"; }
            continue;
        }
        $r['availability'] = [$plain['sections'], 100 * $r['sections'] / max(1, $plain['sections'])];
        if ($want !== null) {
            $g = "{$h['topology']} / " . plain_mix($h['mix']);
            $sums[$g] ??= [0, 0, []];
            $sums[$g][0] += $r['sections'];
            $sums[$g][1] += $plain['sections'];
            $sums[$g][2][] = $h['seed'];
        }
    }
    unset($r);
    foreach ($runs as &$r) {
        $h = $r['head'];
        $want = $h['expect']['share_of_plain'] ?? null;
        $g = "{$h['topology']} / " . plain_mix($h['mix']);
        if ($want === null || !isset($r['availability'], $sums[$g])) { continue; }
        [$d, $p, $seeds] = $sums[$g];
        $share = 100 * $d / max(1, $p);
        $r['availability'][] = $share;
        if ($share < $want) {
            $r['fails'][] = sprintf('availability: the durable runs of %s (seeds %s) made %d sections, %.0f %% of their plain runs\' %d, below the %d %% expected (share_of_plain)',
                $g, implode(', ', $seeds), $d, $share, $p, $want);
        }
    }
}

/** Judges one history; returns its figures, its failures and the details behind them. */
function judge(string $file): array {
    $lines = file($file, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES);
    if ($lines === false) { throw new RuntimeException("$file: cannot be read"); }
    $head = json_decode(array_shift($lines) ?? '', true);
    if (!is_array($head) || ($head['type'] ?? '') !== 'run') { throw new RuntimeException("$file: not a nemesis history"); }
    $boundsHead = ($head['bounds'] ?? false) === true;
    $leaseMs = (float) ($head['lease'] ?? 0) * 1000;
    $attempts = [];   // "w#n" => events by op
    $faults = [];
    $exits = [];
    $other = [];
    $lastEvent = [];  // worker => the last time it finished something
    $samples = 0;
    foreach ($lines as $l) {
        $e = json_decode($l, true);
        if (!is_array($e)) { $other[] = ['op' => 'bad-line']; continue; }
        $op = $e['op'] ?? '';
        if ($op === 'fault') { $faults[] = $e; continue; }
        if ($op === 'worker-exit') { $exits[$e['w']] = $e; continue; }
        if ($op === 'bound') { $samples++; }
        if (isset($e['n'])) {
            $id = "{$e['w']}#{$e['n']}";
            $attempts[$id][$op][] = $e;
            $attempts[$id]['w'] = $e['w'];
            $attempts[$id]['n'] = $e['n'];
        } else {
            $other[] = $e;
        }
        if (isset($e['w']) && $op !== 'worker-exit' && $op !== 'stats') {
            $lastEvent[$e['w']] = max($lastEvent[$e['w']] ?? 0, $e['t1'] ?? $e['t0'] ?? 0);
        }
    }
    // Rules 1–4 need samples; a history whose header does not announce them is judged
    // on them only where it has some.
    $bounds = $boundsHead || $samples > 0;
    $durationMs = $head['duration'] * 1000;
    $quietFrom = $faults ? max(array_map(fn($f) => $f['t1'] ?? 0, $faults)) : 0.0;
    $quietFrom = max($quietFrom, (float) ($head['faults_ended'] ?? 0));

    // Holds (every acquire that returned one), with their promises and what their
    // holders were told; the sections are the holds that entered.
    $holds = [];
    $acqLat = [];
    $acqOutcome = ['ok' => 0, 'fail' => 0, 'exc' => 0];
    $electionThrew = 0;
    $errors = [];
    $store = ['accepted' => 0, 'refused' => 0, 'unfenced' => 0];
    $badBounds = [];   // [kind, text, hold or null]
    $reused = 0;
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
        if ($acq === null || $acq['res'] !== 'ok') {
            foreach ($a['bound'] ?? [] as $b) {
                $badBounds[] = ['early', sprintf('a bound sample of w%d#%d %s at %.1f ms, with no acquisition that returned a hold', $a['w'], $a['n'], $b['key'] ?? '?', $b['t0']), null];
            }
            if ($acq === null) { continue; }
        }
        $acqOutcome[$acq['res']]++;
        // With elections only: an acquire that threw, unless it waited its whole wait
        // and an election was still on then (the fault's end: the old master back).
        if ($acq['res'] === 'exc' && ($head['elections_waited'] ?? false)) {
            $deadline = $acq['t0'] + 1000 * (float) $head['wait'];
            $waited = $acq['t1'] >= $deadline - 50;
            $longer = array_filter($faults, fn($f) => $f['kind'] === 'failover' && $f['t0'] < $deadline && ($f['t1'] ?? INF) >= $deadline);
            if (!$waited || !$longer) { $electionThrew++; }
        }
        if ($acq['res'] === 'ok' && $acq['t0'] < $quietFrom) { $acqLat[] = $acq['t1'] - $acq['t0']; }
        if ($acq['res'] !== 'ok') { continue; }
        if ($acq['reused'] ?? false) { $reused++; }
        $rel = $a['release'][0] ?? null;
        // What the worker's own rules of old counted as learning (histories without bounds).
        $learned = [];
        if ($rel === null) { $learned[] = 'no release'; }
        elseif ($rel['res'] === 'exc') { $learned[] = 'release threw ' . exc_class($rel['exc']); }
        elseif (($rel['ret'] ?? null) === false) { $learned[] = 'release false'; }
        foreach ($a['extend'] ?? [] as $x) {
            if ($x['res'] === 'exc') { $learned[] = 'extend threw ' . exc_class($x['exc']); }
            elseif (($x['ret'] ?? null) === false) { $learned[] = 'extend false'; }
        }
        // Being told the hold was lost (rule 3).
        $told = [];
        if ($rel !== null && $rel['res'] === 'ok' && ($rel['ret'] ?? null) === false) { $told[] = 'release false'; }
        if ($rel !== null && $rel['res'] === 'exc' && exc_class($rel['exc']) === 'LockLostException') { $told[] = 'release threw LockLostException'; }
        foreach ($a['extend'] ?? [] as $x) {
            if ($x['res'] === 'exc' && exc_class($x['exc']) === 'LockLostException') { $told[] = 'extend threw LockLostException'; }
            elseif ($x['res'] === 'ok' && ($x['ret'] ?? null) === false) { $told[] = 'extend false'; }
        }
        foreach ($a['fence'] ?? [] as $x) {
            if ($x['res'] === 'exc' && str_contains((string) $x['exc'], 'no fencing token')) { $told[] = 'fence: no fencing token'; }
        }
        // The promise (rule 1): each sample's [t0, until], clipped at the release's call.
        $r = $rel['t0'] ?? null;
        $iv = [];
        // The acquire's own lease (0 or null: one that never ends), else the run's.
        $lease = array_key_exists('lease', $acq) ? (float) $acq['lease'] * 1000 : $leaseMs;
        $firstSample = null;
        foreach ($a['bound'] ?? [] as $b) {
            $until = $b['until'] === null ? INF : (float) $b['until'];
            $iv[] = [(float) $b['t0'], $r === null ? $until : min($until, (float) $r)];
            $firstSample = $firstSample === null ? (float) $b['t0'] : min($firstSample, (float) $b['t0']);
            $who = sprintf('w%d#%d %s', $a['w'], $a['n'], $acq['key']);
            if ($lease > 0 && $until - $b['t0'] > $lease + LONGER_MS) {
                $badBounds[] = ['long', sprintf('a promise longer than the lease: the client\'s bound is wrong: %s sampled at %.1f ms until %s (%s ms, the lease %.0f ms)',
                    $who, $b['t0'], is_infinite($until) ? 'never' : sprintf('%.1f', $until), is_infinite($until) ? '∞' : sprintf('%.1f', $until - $b['t0']), $lease), $id];
            }
            if ($b['t0'] < $acq['t1'] - EARLY_MS) {
                $badBounds[] = ['early', sprintf('a bound sample before the acquisition returned: %s sampled at %.1f ms, the acquire returned at %.1f ms', $who, $b['t0'], $acq['t1']), $id];
            }
        }
        $refused = count(array_filter($a['store-write'] ?? [], fn($s) => $s['res'] === 'refused'));
        $begin = $a['section-begin'][0]['t0'] ?? null;
        $end = $a['section-end'][0]['t0'] ?? ($rel['t0'] ?? ($exits[$a['w']]['t0'] ?? $durationMs));
        $holds[$id] = ['id' => $id, 'w' => $a['w'], 'n' => $a['n'], 'key' => $acq['key'], 'mode' => $acq['mode'],
            'acq_t0' => $acq['t0'], 'acq_t1' => $acq['t1'], 'begin' => $begin, 'end' => $end, 'fence' => $acq['fence'] ?? null,
            'fence_t' => $acq['fence_t'] ?? $acq['t1'], 'learned' => $learned, 'told' => $told, 'refused' => $refused,
            'released' => $rel === null ? 'none' : ($rel['res'] === 'exc' ? $rel['exc'] : var_export($rel['ret'] ?? null, true)),
            'promise' => merge_intervals($iv), 'samples' => count($a['bound'] ?? []), 'first_sample' => $firstSample,
            'permits' => (int) ($acq['permits'] ?? 2), 'sem' => $acq['key'] === 'sem' || $acq['mode'] === 'sem',
            'sync' => $acq['sync'] ?? false, 'fair' => $acq['fair'] ?? false, 'caller_token' => $acq['caller_token'] ?? false,
            'reused' => $acq['reused'] ?? false, 'multi' => $acq['multi'] ?? false];
        if ($boundsHead && $begin !== null && !$a['bound']) {
            $badBounds[] = ['missing', sprintf('a section with no bound sample: w%d#%d %s', $a['w'], $a['n'], $acq['key']), $id];
        }
    }
    // A late loss (worker.php: the E_WARNING of a synchronized() release that found the
    // hold gone, read after synchronized() returned) tells that worker's last
    // synchronized() hold of the key before it.
    foreach ($other as $e) {
        if (($e['op'] ?? '') !== 'late-loss') { continue; }
        $last = null;
        foreach ($holds as $hid => $h) {
            if ($h['w'] === $e['w'] && $h['sync'] && $h['key'] === $e['key'] && $h['acq_t1'] <= $e['t0']
                && ($last === null || $h['acq_t1'] > $holds[$last]['acq_t1'])) { $last = $hid; }
        }
        if ($last !== null) { $holds[$last]['told'][] = sprintf('late: its release found it lost (a warning at %.0f ms)', $e['t0']); }
    }
    $sections = array_values(array_filter($holds, fn($h) => $h['begin'] !== null));
    $holdsByKey = [];
    foreach ($holds as $h) { $holdsByKey[$h['key']][] = $h; }
    $byKey = [];
    foreach ($sections as $s) { $byKey[$s['key']][] = $s; }
    $permitsOf = fn(array $list) => max(array_map(fn($h) => $h['permits'], $list));

    // Lease violations (rule 2): promises of one key that meet.
    $violations = [];   // [holds, from, to]
    if ($bounds) {
        foreach ($holdsByKey as $key => $list) {
            $list = array_values(array_filter($list, fn($h) => $h['promise']));
            if ($list && $list[0]['sem']) {
                foreach (over_permits($list, $permitsOf($list)) as $v) { $violations[] = $v; }
                continue;
            }
            usort($list, fn($a, $b) => $a['promise'][0][0] <=> $b['promise'][0][0]);
            $n = count($list);
            for ($i = 0; $i < $n; $i++) {
                $endI = end($list[$i]['promise'])[1];
                for ($j = $i + 1; $j < $n && $list[$j]['promise'][0][0] < $endI; $j++) {
                    if ($list[$i]['mode'] === 'read' && $list[$j]['mode'] === 'read') { continue; }
                    $meet = promises_meet($list[$i]['promise'], $list[$j]['promise']);
                    if ($meet !== null) { $violations[] = [[$list[$i], $list[$j]], $meet[0], $meet[1]]; }
                }
            }
        }
    }

    // Overlaps: lock keys pairwise (read with read is allowed), the semaphore by count.
    $overlaps = [];
    foreach ($byKey as $key => $list) {
        usort($list, fn($a, $b) => $a['begin'] <=> $b['begin']);
        if ($list[0]['sem']) {
            $permits = $permitsOf($list);
            $active = [];
            foreach ($list as $s) {
                $active = array_values(array_filter($active, fn($x) => $x['end'] > $s['begin']));
                $active[] = $s;
                if (count($active) > $permits) { $overlaps[] = [$active, $permits]; }
            }
            continue;
        }
        $n = count($list);
        for ($i = 0; $i < $n; $i++) {
            for ($j = $i + 1; $j < $n && $list[$j]['begin'] < $list[$i]['end']; $j++) {
                if ($list[$i]['mode'] === 'read' && $list[$j]['mode'] === 'read') { continue; }
                if ($list[$i]['w'] === $list[$j]['w']) { continue; }
                $overlaps[] = [[$list[$i], $list[$j]], 1];
            }
        }
    }
    $learnedOv = $silent = $silentFenced = $violatingOv = 0;
    $silentDetails = [];
    foreach ($overlaps as [$group, $permits]) {
        if (!$bounds) {
            // As before the bounds: learned when any holder heard of trouble.
            if (array_filter($group, fn($s) => $s['learned'])) { $learnedOv++; continue; }
            $silent++;
            if (array_filter($group, fn($s) => $s['refused'] > 0)) { $silentFenced++; }
            $silentDetails[] = [$group, null, []];
            continue;
        }
        if (over_permits($group, $permits)) { $violatingOv++; continue; }
        // The overlap's start: the latest section's begin, or its first sample when later.
        $last = $group[count($group) - 1];
        foreach ($group as $s) { if ($s['begin'] > $last['begin']) { $last = $s; } }
        $at = max($last['begin'], $last['first_sample'] ?? $last['begin']);
        $unprotected = array_values(array_filter($group, fn($s) => !covers($s['promise'], $at)));
        if (!array_filter($unprotected, fn($s) => !$s['told'])) { $learnedOv++; continue; }
        $silent++;
        if (array_filter($group, fn($s) => $s['refused'] > 0)) { $silentFenced++; }
        $silentDetails[] = [$group, $at, array_column($unprotected, 'id')];
    }

    // Stale entries: a fence no higher than one already known for the key. With
    // bounds, only a section that entered while its promise lasted is one: a holder
    // paused between its acquisition and its section (past its promise) enters late
    // with its old number by no fault of the lock, and the fenced store refuses it.
    $stale = [];
    $late = 0;
    $fenced = 0;
    foreach ($byKey as $key => $list) {
        $list = array_values(array_filter($list, fn($s) => $s['fence'] !== null));
        $fenced += count($list);
        usort($list, fn($a, $b) => $a['fence_t'] <=> $b['fence_t']);
        $max = null;
        foreach ($list as $s) {
            if ($max !== null && $s['fence'] <= $max['fence']) {
                // Judged at its begin, or its first sample when that came later (the
                // bound is read just after the acquire returns).
                if ($bounds && !covers($s['promise'], max($s['begin'], $s['first_sample'] ?? $s['begin']))) { $late++; }
                else { $stale[] = [$s, $max]; }
            }
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
    if ($violations) { $fails[] = count($violations) . ' lease violation(s)'; }
    $bad = array_count_values(array_column($badBounds, 0));
    if ($bad['long'] ?? 0) { $fails[] = "{$bad['long']} promise(s) longer than the lease: the client's bound is wrong"; }
    if ($bad['early'] ?? 0) { $fails[] = "{$bad['early']} bound sample(s) before the acquisition returned"; }
    if ($bad['missing'] ?? 0) { $fails[] = "{$bad['missing']} section(s) with no bound sample"; }
    if ($silent) { $fails[] = "$silent silent overlap(s)"; }
    if ($stale && ($head['strict_fences'] ?? ($head['persist'] && $head['fenced']))) { $fails[] = count($stale) . ' stale entr' . (count($stale) === 1 ? 'y' : 'ies') . ' with persistence on'; }
    foreach ($crashes as $c) { $fails[] = $c; }
    foreach ($stuck as $s) { $fails[] = $s; }
    if ($electionThrew > 0) {
        $fails[] = "$electionThrew acquire(s) threw, with elections only, none of them after its whole wait ({$head['wait']} s) with an election still on";
    }
    // The paths that ran, and those the run expected and ran fewer times.
    $paths = paths_count($head, array_values(array_filter($other, fn($e) => ($e['op'] ?? '') === 'stats')), $attempts);
    foreach (paths_fails($head, $paths) as $f) { $fails[] = $f; }

    $faultCount = [];
    foreach ($faults as $f) { $faultCount[$f['kind']] = ($faultCount[$f['kind']] ?? 0) + 1; }
    return ['file' => $file, 'head' => $head, 'sections' => count($sections), 'fenced' => $fenced, 'reused' => $reused,
        'bounds' => $bounds, 'samples' => $samples, 'violations' => $violations, 'bad_bounds' => $badBounds, 'holds' => $holds,
        'overlaps' => count($overlaps), 'violating_overlaps' => $violatingOv, 'learned' => $learnedOv, 'silent' => $silent, 'silent_fenced' => $silentFenced,
        'silent_details' => $silentDetails, 'stale' => $stale, 'late' => $late, 'store' => $store, 'recovery' => $recovery,
        'lat' => $acqLat, 'acq' => $acqOutcome, 'errors' => $errors, 'fails' => $fails, 'faults' => $faults,
        'fault_count' => $faultCount, 'quiet_from' => $quietFrom, 'paths' => $paths];
}

$runs = [];
foreach ($files as $f) {
    try { $runs[] = judge($f); } catch (Throwable $e) { fwrite(STDERR, "check: $f: {$e->getMessage()}\n"); exit(2); }
}
availability($runs);

// Runs in the order of the topologies (as run.php lists them), then fault mix, resp3, then seed.
$order = ['single', 'single-nopersist', 'single-clock', 'redlock', 'redlock-nopersist', 'redlock-clock', 'sentinel', 'sentinel2', 'sentinel-clock', 'cluster'];
$rank = fn(array $r) => [array_search($r['head']['topology'], $order, true), $r['head']['mix'], (string) ($r['head']['resp3'] ?? ''), $r['head']['seed']];
usort($runs, fn($a, $b) => $rank($a) <=> $rank($b));

exit(report($runs, $verbose, $md));
