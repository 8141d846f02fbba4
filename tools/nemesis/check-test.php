<?php
// The checker's self-test: small synthetic histories, each built to pass or to break
// one rule of check.php, judged by check.php itself (a subprocess, as suite.sh runs it).
// Every rule has a case that must turn red, and a neighbour that must stay green.
//
// Usage: php -n tools/nemesis/check-test.php [--keep] [--verbose]
// Exit 0 only when every case gives its expected verdict (exit code and the finding it
// names). --keep leaves the histories in the temp dir; --verbose prints every output.
declare(strict_types=1);

$keep = in_array('--keep', $argv, true);
$verbose = in_array('--verbose', $argv, true);
$dir = sys_get_temp_dir() . '/nemesis-check-test-' . getmypid();
@mkdir($dir, 0777, true);
const LEASE_MS = 500.0;

/** The run's header: one server with AOF and fences (strict_fences), no faults, bounds sampled. */
function head(array $over = []): array {
    return $over + ['type' => 'run', 'seed' => 1, 'topology' => 'single', 'mix' => 'synthetic', 'faults' => [], 'duration' => 10,
        'quiet' => 3, 'workers' => 2, 'threads' => 0, 'keys' => ['k0', 'k1'], 'lease' => LEASE_MS / 1000, 'wait' => 1.0,
        'read_timeout' => 0.2, 'persist' => true, 'nodes' => 1, 'sentinel' => false, 'fenced' => true, 'cluster' => false,
        'strict_fences' => true, 'ext' => '/synthetic/libredis_lock.so', 'ext_md5' => str_repeat('0', 32), 'php' => PHP_VERSION,
        'redis' => 'Redis server v=synthetic', 'git' => 'test', 'replay' => 'synthetic history (check-test.php)',
        'assign' => [], 'schedule' => [], 'faults_ended' => 0, 'bounds' => true];
}

/**
 * One attempt of worker $w (attempt $n) on $key that got a hold: the acquire returned at
 * $t1, its section ran to $end, then the release was called. Options:
 *   mode     write (default), read, sem
 *   begin    the section's begin (default $t1); null: no section
 *   fence    its fence (default null); fence_t  when it was known (default $t1)
 *   bounds   its samples, [[t0, until|null], ...] (default: one just after the acquire, a
 *            full lease less 10 ms of drift, clipped by the release anyway)
 *   release  true, false, an exception class ("LockLostException"), or null: none
 *   rel_t    when the release was called (default $end)
 *   extend   [[t, true|false|"Class"], ...] at t within the section
 *   fence_exc  a message the fence call threw
 *   plus any acquire field: sync, fair, caller_token, reused, permits, multi
 */
function hold(int $w, int $n, string $key, float $t1, float $end, array $o = []): array {
    $ev = [];
    $base = ['w' => $w, 'pid' => 1000 + $w, 'n' => $n, 'key' => $key];
    $inv = $o['invoke'] ?? $t1 - 1;
    $ev[] = $base + ['op' => 'acquire-invoke', 't0' => $inv];
    $extra = array_intersect_key($o, array_flip(['sync', 'fair', 'caller_token', 'reused', 'permits', 'multi']));
    $ev[] = $base + ['op' => 'acquire', 'mode' => $o['mode'] ?? 'write', 't0' => $inv, 't1' => $t1, 'res' => 'ok', 'tok' => substr(md5("$w#$n"), 0, 10),
        'fence' => $o['fence'] ?? null, 'fence_t' => $o['fence_t'] ?? $t1, 'lease' => LEASE_MS / 1000] + $extra;
    foreach ($o['bounds'] ?? [[$t1 + 0.1, $t1 + 0.1 + LEASE_MS - 10]] as [$s, $u]) {
        $ev[] = $base + ['op' => 'bound', 't0' => $s, 'until' => $u];
    }
    if (isset($o['fence_exc'])) {
        $ev[] = $base + ['op' => 'fence', 't0' => $t1, 't1' => $t1 + 0.1, 'res' => 'exc', 'exc' => 'LockException: ' . $o['fence_exc']];
    }
    $begin = array_key_exists('begin', $o) ? $o['begin'] : $t1;
    if ($begin !== null) {
        $ev[] = $base + ['op' => 'section-begin', 't0' => $begin];
        $ev[] = $base + ['op' => 'store-write', 't0' => $begin, 't1' => $begin + 0.1, 'fence' => $o['fence'] ?? null,
            'res' => isset($o['fence']) ? 'accepted' : 'unfenced', 'last' => -1];
        foreach ($o['extend'] ?? [] as [$t, $ret]) {
            $ev[] = $base + ['op' => 'extend', 't0' => $t, 't1' => $t + 1] + (is_string($ret) ? ['res' => 'exc', 'exc' => "$ret: synthetic"] : ['res' => 'ok', 'ret' => $ret]);
        }
        $ev[] = $base + ['op' => 'section-end', 't0' => $end];
    }
    $rel = array_key_exists('release', $o) ? $o['release'] : true;
    if ($rel !== null) {
        $r = $o['rel_t'] ?? $end;
        $ev[] = $base + ['op' => 'release', 't0' => $r, 't1' => $r + 1] + (is_string($rel) ? ['res' => 'exc', 'exc' => "$rel: synthetic"] : ['res' => 'ok', 'ret' => $rel])
            + (($o['sync'] ?? false) ? ['sync' => true] : []);
    }
    return $ev;
}

/** Writes a history (header, then the events of the holds and each worker's start, done and exit) and returns its path. */
function history(string $name, array $holds, array $head = []): string {
    global $dir;
    $events = array_merge(...$holds);
    $workers = max(array_merge([1], array_map(fn($e) => ($e['w'] ?? 0) + 1, $events)));
    $head = head($head + ['workers' => $workers, 'mix' => $name]);
    for ($w = 0; $w < $workers; $w++) {
        $events[] = ['w' => $w, 'pid' => 1000 + $w, 'op' => 'worker-start', 't0' => 0.0, 'workload' => 'mutex', 'auto_renew' => false];
        $events[] = ['w' => $w, 'pid' => 1000 + $w, 'op' => 'worker-done', 't0' => 9000.0, 'ops' => 1];
        $events[] = ['op' => 'worker-exit', 'w' => $w, 'pid' => 1000 + $w, 't0' => 9500.0, 'stuck' => false, 'code' => 0, 'signal' => null, 'thread' => false, 'output' => ''];
    }
    usort($events, fn($a, $b) => $a['t0'] <=> $b['t0']);
    if (($head['bounds'] ?? null) === null) { unset($head['bounds']); }
    $path = "$dir/" . preg_replace('/[^a-z0-9]+/i', '-', $name) . '.jsonl';
    $lines = array_map(fn($e) => json_encode($e, JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION), array_merge([$head], $events));
    file_put_contents($path, implode("\n", $lines) . "\n");
    return $path;
}

/** The first data row, by column, of the table in $lines whose header starts with $prefix ([] if none). */
function table_row(array $lines, string $prefix): array {
    foreach ($lines as $i => $l) {
        if (str_starts_with($l, $prefix)) {
            $cols = array_map('trim', explode('|', trim($l, '|')));
            $vals = array_map('trim', explode('|', trim($lines[$i + 2] ?? '', '|')));
            return count($cols) === count($vals) ? array_combine($cols, $vals) : [];
        }
    }
    return [];
}

/** Runs check.php on $path: [exit code, stdout + stderr, the per-run row by column, the per-run paths row by column]. */
function check(string $path, array $flags = []): array {
    $cmd = array_merge([PHP_BINARY, '-n', __DIR__ . '/check.php'], $flags, [$path]);
    $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    $out = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
    $code = proc_close($p);
    $lines = explode("\n", $out);
    return [$code, $out, table_row($lines, '| topology | faults |'), table_row($lines, '| topology / faults | seed | fencing |')];
}

$cases = 0;
$failed = [];
/**
 * A case: the history from $holds (and header fields $head), the exit code $code, the
 * strings the output must hold ($says) and must not ($not), per-run cells ($cells,
 * column => value), and cells of the per-run paths table ($pathCells).
 */
function expect(string $name, array $holds, int $code, array $says = [], array $head = [], array $cells = [], array $not = [], array $flags = [], array $pathCells = []): void {
    global $cases, $failed, $verbose;
    $cases++;
    [$got, $out, $row, $paths] = check(history($name, $holds, $head), $flags);
    $why = [];
    foreach ($pathCells as $col => $v) {
        if (($paths[$col] ?? null) !== (string) $v) { $why[] = "paths: $col is " . var_export($paths[$col] ?? null, true) . ", expected '$v'"; }
    }
    if ($got !== $code) { $why[] = "exit $got, expected $code"; }
    foreach ($says as $s) { if (stripos($out, $s) === false) { $why[] = "no \"$s\" in the output"; } }
    foreach ($not as $s) { if (stripos($out, $s) !== false) { $why[] = "\"$s\" in the output"; } }
    foreach ($cells as $col => $v) {
        if (($row[$col] ?? null) !== (string) $v) { $why[] = "$col is " . var_export($row[$col] ?? null, true) . ", expected '$v'"; }
    }
    printf("%-4s %s%s\n", $why ? 'FAIL' : 'ok', $name, $why ? ': ' . implode('; ', $why) : '');
    if ($why) { $failed[] = $name; }
    if ($why || $verbose) { echo preg_replace('/^/m', '     ', rtrim($out)), "\n"; }
}

$V = '**lease violations**';   // the per-run column
$S = '**silent**';

// --- clean runs ------------------------------------------------------------------
expect('clean: two sections one after the other', [
    hold(0, 1, 'k0', 1, 100, ['fence' => 1, 'bounds' => [[1.2, 491], [99.5, 589.5]]]),
    hold(1, 1, 'k0', 102, 200, ['fence' => 2]),
], 0, [], [], ['overlaps' => 0, $V => '0', $S => '0', 'verdict' => 'ok']);
// A promise of exactly the lease, and one 0.9 ms over it (the allowance), with a
// sample 0.4 ms before the acquire's return (rounding), and a reused caller token.
expect('clean: bounds at the edges of the sanity rules', [
    hold(0, 1, 'k0', 1, 100, ['fence' => 1, 'bounds' => [[0.6, 500.6], [50, 550.9]], 'caller_token' => true, 'reused' => true]),
    hold(1, 1, 'k0', 102, 200, ['fence' => 2]),
], 0, ['1 reused tokens'], [], [$V => '0', 'verdict' => 'ok']);

// --- rule 2: lease violations --------------------------------------------------------
expect('violation: the second holder enters inside the first\'s promise (whose release said false)', [
    hold(0, 1, 'k0', 1, 300, ['release' => false]),
    hold(1, 1, 'k0', 150, 250),
], 1, ['lease violation', 'w0#1', 'w1#1', 'release false'], [], [$V => '**1**', 'verdict' => 'FAIL']);
expect('violation: even when the sections do not meet (the release call clips, not the section\'s end)', [
    hold(0, 1, 'k0', 1, 100, ['rel_t' => 180]),
    hold(1, 1, 'k0', 150, 250, ['begin' => 190]),
], 1, ['lease violation'], [], ['overlaps' => 0, $V => '**1**']);
expect('violation: a hold that never entered its section (its fence call threw) still promised', [
    hold(0, 1, 'k0', 1, 200, ['begin' => null, 'fence_exc' => 'synthetic']),
    hold(1, 1, 'k0', 150, 250),
], 1, ['lease violation', 'no section'], [], [$V => '**1**']);
expect('violation: a read hold inside a write hold\'s promise', [
    hold(0, 1, 'k0', 1, 300, ['mode' => 'write']),
    hold(1, 1, 'k0', 150, 250, ['mode' => 'read']),
], 1, ['lease violation'], [], [$V => '**1**']);
expect('fine: a read hold with a read hold', [
    hold(0, 1, 'k0', 1, 300, ['mode' => 'read']),
    hold(1, 1, 'k0', 150, 250, ['mode' => 'read']),
], 0, [], [], ['overlaps' => 0, $V => '0']);
expect('violation: a watchdog renewal moves the promise past the second holder\'s entry', [
    hold(0, 1, 'k0', 1, 1000, ['bounds' => [[1.1, 491], [400, 890], [800, 1290]]]),
    hold(1, 1, 'k0', 600, 700),
], 1, ['lease violation', '1.1–1000.0 ms'], [], [$V => '**1**']);
expect('the same without the renewal sample: not a violation, but a silent overlap (release true)', [
    hold(0, 1, 'k0', 1, 1000, ['bounds' => [[1.1, 491]]]),
    hold(1, 1, 'k0', 600, 700),
], 1, ['silent overlap', 'w0#1 past its promise'], [], [$V => '0', $S => '**1**']);
expect('violation: a hold with no release and a lease that never ends (until null) outlives everyone', [
    hold(0, 1, 'k0', 1, 100, ['bounds' => [[1.1, null]], 'release' => null]),
    hold(1, 1, 'k0', 3000, 3100),
], 1, ['lease violation', '1.1–∞ ms', 'longer than the lease'], [], [$V => '**1**; **1 bad bounds**']);
expect('fine: one worker\'s own sections, back to back, with a reused token', [
    hold(0, 1, 'k0', 1, 100, ['caller_token' => true, 'reused' => true]),
    hold(0, 2, 'k0', 101, 200, ['caller_token' => true, 'reused' => true]),
], 0, [], [], [$V => '0', 'sections' => '2 (2 reused tokens)']);
expect('violation: MultiLock attempts (n*10+j) per key against a Lock holder of k1', [
    hold(0, 10, 'k0', 1, 300, ['multi' => true]),
    hold(0, 11, 'k1', 1, 300, ['multi' => true]),
    hold(1, 1, 'k1', 200, 250),
], 1, ['lease violation on k1', 'w0#11 k1 write multi'], [], [$V => '**1**']);

// --- the semaphore ---------------------------------------------------------------
$sem = fn(int $w, float $t1, float $end, array $o = []) => hold($w, 1, 'sem', $t1, $end, $o + ['mode' => 'sem', 'permits' => 2]);
expect('violation: the semaphore with three promises at once and 2 permits', [
    $sem(0, 1, 300), $sem(1, 50, 300), $sem(2, 100, 200),
], 1, ['lease violation on sem', '3 holders of 2 permits'], [], [$V => '**1**']);
expect('fine: the semaphore with two promises at once', [
    $sem(0, 1, 300), $sem(1, 50, 300), $sem(2, 310, 400),
], 0, [], [], ['overlaps' => 0, $V => '0']);
expect('violation: permits from the acquire (1 here)', [
    $sem(0, 1, 300, ['permits' => 1]), $sem(1, 50, 300, ['permits' => 1]),
], 1, ['lease violation on sem'], [], [$V => '**1**']);
// Three in their sections at once, the third after the first's promise ran out.
$semOverlap = fn($release) => [
    $sem(0, 1, 700, ['bounds' => [[1.1, 491]], 'release' => $release]), $sem(1, 50, 700, ['bounds' => [[50.1, 540], [500, 990]]]), $sem(2, 600, 650),
];
expect('learned: a semaphore overlap whose unprotected holder\'s release said false', $semOverlap(false), 0, [], [],
    ['overlaps' => 1, 'learned' => 1, $V => '0']);
expect('silent: a semaphore overlap whose unprotected holder\'s release said true', $semOverlap(true), 1, ['silent overlap'], [],
    [$S => '**1**', $V => '0']);

// --- rule 3: overlaps, learned or silent -------------------------------------------
// w0's promise ends at 491; w1 enters at 520 while w0 is still in its section (to 700).
$overlap = fn($release, array $o = []) => [
    hold(0, 1, 'k0', 1, 700, ['bounds' => [[1.1, 491]], 'release' => $release] + $o),
    hold(1, 1, 'k0', 520, 600),
];
expect('learned: the first holder\'s release returned false after its promise ended', $overlap(false), 0, [], [],
    ['overlaps' => 1, 'learned' => 1, $S => '0', $V => '0', 'verdict' => 'ok']);
expect('learned: its release threw LockLostException', $overlap('LockLostException'), 0, [], [], ['learned' => 1, $S => '0']);
expect('learned: a namespaced LockLostException', $overlap('Some\\Ns\\LockLostException'), 0, [], [], ['learned' => 1]);
expect('silent: its release threw LockConnectionException', $overlap('LockConnectionException'), 1, ['silent overlap', 'LockConnectionException'], [],
    [$S => '**1**', 'verdict' => 'FAIL']);
expect('silent: its release returned true', $overlap(true), 1, ['silent overlap'], [], [$S => '**1**']);
expect('silent: no release at all', $overlap(null), 1, ['silent overlap', 'release none'], [], [$S => '**1**']);
expect('learned: an extend returned false', $overlap(true, ['extend' => [[300, false]]]), 0, [], [], ['learned' => 1]);
expect('learned: an extend threw LockLostException', $overlap(true, ['extend' => [[300, 'LockLostException']]]), 0, [], [], ['learned' => 1]);
expect('silent: an extend threw LockConnectionException', $overlap(true, ['extend' => [[300, 'LockConnectionException']]]), 1, ['silent overlap'], [], [$S => '**1**']);
expect('learned: a fence call threw "no fencing token"', $overlap(true, ['fence_exc' => 'redis-lock: no fencing token for the lock "k0": this object no longer holds it']),
    0, [], [], ['learned' => 1]);
expect('silent: a fence call threw something else', $overlap(true, ['fence_exc' => 'connection reset']), 1, ['silent overlap'], [], [$S => '**1**']);
expect('learned: a synchronized() holder enters with its sample just after its begin (the later holder is protected)', [
    hold(0, 1, 'k0', 1, 700, ['bounds' => [[1.1, 491]], 'release' => false]),
    hold(1, 1, 'k0', 520, 600, ['sync' => true, 'bounds' => [[520.05, 1010]]]),
], 0, [], [], ['learned' => 1, $S => '0']);
// The later holder's only sample promises nothing (0 s left: its hold was found lost):
// it too must be told.
$lost = fn($release) => [
    hold(0, 1, 'k0', 1, 700, ['bounds' => [[1.1, 491]], 'release' => false]),
    hold(1, 1, 'k0', 520, 600, ['bounds' => [[520.1, 520.1]], 'release' => $release]),
];
expect('silent: the later holder unprotected too (its sample promised nothing) and not told', $lost(true), 1,
    ['silent overlap', 'w0#1, w1#1 past their promise'], [], [$S => '**1**', $V => '0']);
expect('learned: the same, both told', $lost(false), 0, [], [], ['learned' => 1, $S => '0']);
// synchronized()'s release goes unawaited; a loss it finds comes later as a warning
// (worker.php records it as `late-loss`), which tells that worker's last
// synchronized() hold of the key.
$late = fn(string $key) => [
    hold(0, 1, 'k0', 1, 700, ['sync' => true, 'bounds' => [[1.1, 491]]]),
    hold(1, 1, 'k0', 520, 600),
    [['w' => 0, 'pid' => 1000, 'op' => 'late-loss', 't0' => 760.0, 'key' => $key, 'text' => 'synthetic']],
];
expect('learned: a synchronized() holder told late, by the warning its release raised', $late('k0'), 0, [], [], ['learned' => 1, $S => '0']);
expect('silent: the same warning, of another key, tells it nothing', $late('k1'), 1, ['silent overlap'], [], [$S => '**1**']);

// --- rule 4: the promises' sanity ------------------------------------------------------
expect('bad: a promise longer than the lease', [
    hold(0, 1, 'k0', 1, 100, ['bounds' => [[1.1, 1.1 + LEASE_MS + 1.5]]]),
], 1, ['a promise longer than the lease: the client\'s bound is wrong'], [], [$V => '0; **1 bad bounds**']);
expect('bad: a bound sample before the acquisition returned', [
    hold(0, 1, 'k0', 10, 100, ['bounds' => [[9.0, 400]]]),
], 1, ['before the acquisition returned']);
expect('bad: a section with no bound sample (bounds: true)', [
    hold(0, 1, 'k0', 1, 100),
    hold(1, 1, 'k0', 102, 200, ['bounds' => []]),
], 1, ['a section with no bound sample: w1#1']);

// --- rule 5: histories without bounds -------------------------------------------------
$old = fn(array $holds) => array_map(fn($h) => array_values(array_filter($h, fn($e) => $e['op'] !== 'bound')), $holds);
expect('no bounds: a clean old history', $old([hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200)]), 0, [], ['bounds' => null],
    [$V => 'no bounds', 'verdict' => 'ok']);
expect('no bounds: an overlap with every release true is silent', $old($overlap(true)), 1, ['silent overlap'], ['bounds' => null],
    [$V => 'no bounds', $S => '**1**']);
expect('no bounds: an overlap whose release threw a connection error is learned (as before)', $old($overlap('LockConnectionException')), 0, [],
    ['bounds' => null], [$V => 'no bounds', 'learned' => 1]);

// --- what check.php judged before, still judged ------------------------------------------
expect('stale: a fence that went back, one server with AOF', [
    hold(0, 1, 'k0', 1, 100, ['fence' => 5]),
    hold(1, 1, 'k0', 200, 300, ['fence' => 3]),
], 1, ['stale entry: fence 3 on k0, but fence 5'], [], ['stale entries' => '1 of 2']);
expect('a holder paused between its acquisition and its section, past its promise: entering late with its old number is no stale entry', [
    hold(1, 1, 'k0', 200, 400, ['fence' => 3, 'fence_t' => 350, 'begin' => 350, 'bounds' => [[200.1, 300.0]], 'release' => false]),
    hold(0, 1, 'k0', 310, 340, ['fence' => 5]),
], 0, [], [], ['stale entries' => '0 of 2 (1 late)']);
expect('the same holder entering while its promise lasts: a stale entry', [
    hold(1, 1, 'k0', 200, 400, ['fence' => 3, 'fence_t' => 350, 'begin' => 350, 'bounds' => [[200.1, 690.0]], 'release' => false]),
    hold(0, 1, 'k0', 310, 340, ['fence' => 5, 'bounds' => [[690.0, 700.0]]]),
], 1, ['stale entry: fence 3 on k0, but fence 5'], [], ['stale entries' => '1 of 2']);
expect('stale without persistence: reported, not failed', [
    hold(0, 1, 'k0', 1, 100, ['fence' => 5]),
    hold(1, 1, 'k0', 200, 300, ['fence' => 3]),
], 0, ['stale entry', 'ok (with findings)'], ['persist' => false, 'strict_fences' => false, 'topology' => 'single-nopersist']);
$crash = [hold(0, 1, 'k0', 1, 100)];
$crashPath = history('crash: a worker exited with 70', $crash);
$lines = file($crashPath, FILE_IGNORE_NEW_LINES);
foreach ($lines as &$l) { $l = str_replace('"code":0', '"code":70', $l); }
unset($l);
file_put_contents($crashPath, implode("\n", $lines) . "\n");
$cases++;
[$got, $out] = check($crashPath);
$ok = $got === 1 && str_contains($out, 'worker 0 exited with 70');
printf("%-4s %s\n", $ok ? 'ok' : 'FAIL', 'crash: a worker exited with 70');
if (!$ok) { $failed[] = 'crash'; echo preg_replace('/^/m', '     ', rtrim($out)), "\n"; }
expect('stuck: a key never taken after the last fault', [
    hold(0, 1, 'k0', 1, 100),
], 1, ['key k0 never taken after the last fault'], ['faults_ended' => 5000]);
$threw = [['w' => 1, 'pid' => 1001, 'n' => 1, 'key' => 'k1', 'op' => 'acquire-invoke', 't0' => 200.0],
          ['w' => 1, 'pid' => 1001, 'n' => 1, 'key' => 'k1', 'op' => 'acquire', 'mode' => 'write', 't0' => 200.0, 't1' => 1200.0, 'res' => 'exc',
           'exc' => 'LockConnectionException: redis-lock: cluster slot 1 has no master (synthetic)']];
$waitedOut = [['w' => 1, 'pid' => 1001, 'n' => 1, 'key' => 'k1', 'op' => 'acquire-invoke', 't0' => 200.0],
              ['w' => 1, 'pid' => 1001, 'n' => 1, 'key' => 'k1', 'op' => 'acquire', 'mode' => 'write', 't0' => 200.0, 't1' => 5201.0, 'res' => 'exc',
               'exc' => 'LockConnectionException: redis-lock: cluster slot 1 has no master (synthetic); still so after 5 s']];
$election = fn(float $t0, float $t1) => [['op' => 'fault', 'kind' => 'failover', 'idx' => 0, 't0' => $t0, 't1' => $t1, 'nodes' => [0], 'len' => 1.0]];
expect('elections waited out: an acquire that threw while its wait lasted fails the run', [hold(0, 1, 'k0', 1, 100), hold(0, 2, 'k1', 1300, 1400), $threw, $election(300, 900)], 1,
    ['1 acquire(s) threw, with elections only, none of them after its whole wait (5 s) with an election still on'], ['elections_waited' => true, 'wait' => 5.0]);
expect('an election still on when the wait ended: reported, not failed', [hold(0, 1, 'k0', 1, 100), hold(0, 2, 'k1', 1300, 1400), $waitedOut, $election(300, 6000), hold(0, 3, 'k0', 6100, 6200), hold(0, 4, 'k1', 6300, 6400)], 0, [],
    ['elections_waited' => true, 'wait' => 5.0]);
expect('the same acquire without that promise: reported, not failed', [hold(0, 1, 'k0', 1, 100), hold(0, 2, 'k1', 1300, 1400), $threw], 0, [], ['elections_waited' => false]);
// --- the paths that ran (paths.php): redis_lock_stats() records, Redlock's quorum, --expect ---
/** A `stats` event: worker $w's process $pid read redis_lock_stats() at $t0 (absolute figures). */
$stats = fn(int $w, int $pid, float $t0, array $counts, bool $final = false) => [['w' => $w, 'pid' => $pid, 'op' => 'stats', 't0' => $t0, 'final' => $final, 'counts' => $counts]];
// w0 wrote twice (the later figures count); w1 died after one record; w2 is a thread of
// w1's process (pid 1001): one set of counters, counted once.
$counted = fn() => [
    hold(0, 1, 'k0', 1, 100, ['fence' => 1]), hold(1, 1, 'k0', 102, 200, ['fence' => 2]), hold(2, 1, 'k1', 1, 100, ['fence' => 1]),
    $stats(0, 1000, 2000, ['cad_releases' => 5, 'cad_renewals' => 2, 'cad_kicks' => 1, 'handed_over' => 3, 'renewals' => 2, 'lost' => 0, 'durable_acks' => 0, 'not_durable' => 0]),
    $stats(0, 1000, 8000, ['cad_releases' => 9, 'cad_renewals' => 4, 'cad_kicks' => 1, 'handed_over' => 4, 'renewals' => 6, 'lost' => 1, 'durable_acks' => 0, 'not_durable' => 0], true),
    $stats(1, 1001, 2000, ['cad_releases' => 7, 'handed_over' => 2]),
    $stats(2, 1001, 1500, ['cad_releases' => 6, 'handed_over' => 2], true),
];
$P = 'compare-and-delete releases / renewals / kicks';
expect('paths: counters summed over the processes, each by its largest figures (threads share one process\'s)', $counted(), 0, ['Paths that ran'], [], ['verdict' => 'ok'], [], [],
    [$P => '16 / 4 / 1', 'handed over' => '6', 'renewals / lost' => '6 / 1', 'durable acked / refused' => '0 / 0',
     'Redlock quorum acquisitions / releases' => '– / –', 'fencing' => 'on', 'expected' => '–', 'paths' => '–']);
expect('paths: what the run expected, it ran (at least as often)', $counted(), 0, [], ['expect' => ['cad_releases' => 16, 'handed_over' => 6]], ['verdict' => 'ok'], [], [],
    ['expected' => 'cad_releases ≥ 16, handed_over ≥ 6', 'paths' => 'ok']);
expect('paths: a path run fewer times than expected fails the run, with the replay command', $counted(), 1,
    ['path cad_releases (compare-and-delete releases', 'ran 16 times, fewer than the 100 expected', 'replay: `synthetic history'],
    ['expect' => ['cad_releases' => 100, 'cad_kicks' => 1]], ['verdict' => 'FAIL'], ['path cad_kicks'], [], ['paths' => '**short: cad_releases 16 of 100**']);
expect('paths: an expectation with no counters recorded fails (nothing counted it)', [hold(0, 1, 'k0', 1, 100)], 1,
    ['path handed_over', 'not counted (the workers recorded no redis_lock_stats()'], ['expect' => ['handed_over' => 1]], [], [], [],
    [$P => '– / – / –', 'paths' => '**short: handed_over – of 1**']);
// Redlock: acquisitions a majority took, releases a majority answered (true), from the
// history; synchronized()'s unawaited release is no answer, a MultiLock counts once.
$redlock = ['topology' => 'redlock', 'nodes' => 5, 'fenced' => false, 'strict_fences' => false];
$quorum = [
    hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200, ['release' => false]), hold(0, 2, 'k1', 300, 400, ['sync' => true]),
    hold(1, 20, 'k0', 500, 600, ['multi' => true]), hold(1, 21, 'k1', 500, 600, ['multi' => true]),
];
expect('paths: Redlock\'s quorum decisions counted from the history', $quorum, 0, [], $redlock + ['expect' => ['quorum_acquisitions' => 4, 'quorum_releases' => 2]],
    ['verdict' => 'ok'], [], [], ['Redlock quorum acquisitions / releases' => '4 / 2', 'paths' => 'ok']);
expect('paths: fewer quorum decisions than expected fail the run', $quorum, 1, ['path quorum_acquisitions', 'ran 4 times, fewer than the 5 expected'],
    $redlock + ['expect' => ['quorum_acquisitions' => 5]], [], [], [], ['paths' => '**short: quorum_acquisitions 4 of 5**']);
expect('paths: quorum decisions expected off Redlock are not counted: the run fails', [hold(0, 1, 'k0', 1, 100)], 1,
    ['path quorum_releases', 'not counted (this is no Redlock run)'], ['expect' => ['quorum_releases' => 1]]);
// --fencing 0: no numbers, unfenced writes; the promises are judged all the same.
$unfenced = ['fencing' => false, 'fenced' => false, 'strict_fences' => false, 'mix' => 'all, no fencing'];
expect('fencing off: a lease violation is still one', [
    hold(0, 1, 'k0', 1, 300, ['release' => false]), hold(1, 1, 'k0', 150, 250),
], 1, ['lease violation', 'w0#1', 'w1#1'], $unfenced, [$V => '**1**', 'stale entries' => 'no fences', 'store accepted / refused / unfenced' => '0 / 0 / 2'], [], [],
    ['fencing' => 'off']);
expect('fencing off: a clean run passes', [hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200)], 0, [], $unfenced,
    [$V => '0', 'stale entries' => 'no fences', 'verdict' => 'ok'], [], [], ['fencing' => 'off']);
// Availability (issue 58): a durable run beside the plain run of the same topology,
// faults and seed, judged with it; share_of_plain (--expect) is a floor in percent.
$plainPath = history('avail plain', [hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200), hold(0, 2, 'k0', 202, 300)], ['mix' => 'avail']);
$durable = ['mix' => 'avail, durable 1', 'durable' => 1, 'expect' => ['share_of_plain' => 50]];
expect('availability: a durable run with half the plain run\'s sections or more passes', [hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200)], 0,
    ['### Availability', '| single / avail, durable 1 | 1 | 3 | 2 | 67 % | ≥ 50 % (67 %) |'], $durable, [], [], [$plainPath]);
expect('availability: fewer than the share expected fails the run', [hold(0, 1, 'k0', 1, 100)], 1,
    ['availability: the durable runs of single / avail (seeds 1) made 1 sections, 33 % of their plain runs\' 3, below the 50 % expected', '| single / avail, durable 1 | 1 | 3 | 1 | 33 % |'], $durable, [], [], [$plainPath]);
// Over the seeds: seed 1 at 33 % and seed 2 at 100 % make 4 of 6, 67 %: both pass.
$plain2 = history('avail plain 2', [hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200), hold(0, 2, 'k0', 202, 300)], ['mix' => 'avail', 'seed' => 2]);
$durable2 = history('avail durable 2', [hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200), hold(0, 2, 'k0', 202, 300)], ['seed' => 2] + $durable);
expect('availability: judged over the seeds together (33 % and 100 %: 67 %)', [hold(0, 1, 'k0', 1, 100)], 0,
    ['| single / avail, durable 1 | 1 | 3 | 1 | 33 % | ≥ 50 % (67 %) |', '| single / avail, durable 1 | 2 | 3 | 3 | 100 % | ≥ 50 % (67 %) |'], $durable, [], ['availability: the durable runs', 'no plain run'], [$plainPath, $plain2, $durable2]);
expect('availability: a durable run expecting a share with no plain run beside it fails', [hold(0, 1, 'k0', 1, 100)], 1,
    ['path share_of_plain: no plain run of single / avail seed 1'], $durable, ['verdict' => 'FAIL']);
expect('availability: a plain run of another seed is no pair', [hold(0, 1, 'k0', 1, 100)], 1,
    ['no plain run'], ['seed' => 2] + $durable, [], [], [$plainPath]);
expect('--md and resp3: the table carries resp3, the file is written', [
    hold(0, 1, 'k0', 1, 100), hold(1, 1, 'k0', 102, 200),
], 0, ['synthetic md / resp3 half'], ['resp3' => 'half', 'mix' => 'synthetic md'], ['resp3' => 'half'], [], ['--md', "$dir/out.md"]);
$cases++;
$md = (string) @file_get_contents("$dir/out.md");
$ok = str_contains($md, 'How to read it') && str_contains($md, '*lease violation*') && str_contains($md, '### Paths that ran');
printf("%-4s %s\n", $ok ? 'ok' : 'FAIL', '--md: the preamble names the rules');
if (!$ok) { $failed[] = '--md'; }

if (!$keep) {
    foreach (glob("$dir/*") as $f) { unlink($f); }
    rmdir($dir);
} else {
    echo "histories kept in $dir\n";
}
if ($failed) {
    fprintf(STDERR, "check-test: %d of %d cases failed: %s\n", count($failed), $cases, implode('; ', $failed));
    exit(1);
}
echo "check-test: all $cases cases gave their verdicts\n";
