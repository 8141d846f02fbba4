<?php
// Where a durable lock's time goes through Sentinel failovers (issue 58): reads
// nemesis histories recorded with --watch (run.php: the nodes' replication states,
// what the sentinels named, the extension's trace of each durable check) and prints,
// per run:
//   - sections, acquires (ok / false / thrown) and the errors, by kind;
//   - the durable checks (the renewal and WAIT of Route::confirm): how many, acked or
//     not, on the request's thread or the watchdog's; each check not acknowledged
//     classed by the state of the node it reached then (from the watcher's last
//     record before it): a master the sentinels had replaced (a majority named
//     another), a master whose replicas were all in a full sync, a master with no
//     replica connected, a master with a replica online that still did not
//     acknowledge; with the time each class cost (the checks' own round trips), and
//     how long after each the node it reached acknowledged a check again;
//   - the acquires: how many durable checks each made (tries), and of those that
//     threw "could not make the lock durable", the tries and how long after the throw
//     any check was next acknowledged;
//   - each master fault (kill, stall): when the sentinels named another master, when
//     that master had a replica online, when the first check after the fault was
//     acknowledged; and each node's way back as a replica (demoted or restarted, to
//     its link up, through a full sync or not).
//
// Usage: php -n tools/nemesis/where.php [--table] HISTORY.jsonl...
//   --table: one markdown row per run instead (sections, violations left to check.php).
declare(strict_types=1);

require_once __DIR__ . '/promises.php';

$args = array_slice($argv, 1);
$table = in_array('--table', $args, true);
$files = array_values(array_filter($args, fn($a) => $a !== '--table'));
if (!$files) {
    fwrite(STDERR, "usage: php -n tools/nemesis/where.php [--table] HISTORY.jsonl...\n");
    exit(2);
}

/** An error message's kind, in a few words. */
function error_kind(string $exc): string {
    return match (true) {
        str_contains($exc, 'could not make the') => 'not durable: 0 replicas acknowledged (WAIT)',
        str_contains($exc, 'its role is slave') => 'failover in progress: the master named is a replica',
        str_contains($exc, 'connection lost') && str_contains($exc, 'reconnecting') => 'connection lost, and no master on reconnecting',
        str_contains($exc, 'sentinel failover') && (str_contains($exc, 'closed') || str_contains($exc, 'refused') || str_contains($exc, 'timed out') || str_contains($exc, 'cut off'))
            => 'failover in progress: the master named cannot be reached',
        str_contains($exc, 'timed out') => 'timed out',
        default => fold($exc),
    };
}

/** ms with no decimals, or a dash. */
function ms(?float $v): string {
    return $v === null ? '–' : number_format($v, 0, '.', '');
}

/** "p50 / p90 / max" of a list of ms. */
function spread(array $xs): string {
    if (!$xs) { return '–'; }
    return ms(pct($xs, 50)) . ' / ' . ms(pct($xs, 90)) . ' / ' . ms(max($xs));
}

/** The port of "127.0.0.1:1234". */
function port_of(string $addr): int {
    $at = strrpos($addr, ":");
    return $at === false ? 0 : (int) substr($addr, $at + 1);
}

/** A run's analysis. */
function analyse(string $file): array {
    $h = fopen($file, 'r');
    $head = json_decode((string) fgets($h), true);
    $events = [];
    while (($l = fgets($h)) !== false) {
        if (is_array($e = json_decode($l, true))) { $events[] = $e; }
    }
    fclose($h);
    // The proxies' ports (what the sentinels, the replicas and the trace name) → the node.
    $nodeOf = [];
    foreach ($head['ports'] ?? [] as $i => $p) { $nodeOf[$p['proxy']] = $i; }
    $r = ['head' => $head, 'file' => $file, 'sections' => 0, 'acq' => ['ok' => 0, 'fail' => 0, 'exc' => 0], 'errors' => [],
        'checks' => [], 'acquires' => [], 'faults' => [], 'repl' => [], 'named' => [], 'invoke' => []];
    // The watcher's view, replayed in time order: each node's state and each sentinel's master.
    $node = [];
    $named = [];
    foreach ($events as $e) {
        $op = $e['op'] ?? '';
        switch ($op) {
            case 'repl':
                $node[$e['node']] = $e['state'] + ['since' => $e['t0']];
                $r['repl'][] = $e;
                break;
            case 'named':
                if (isset($e['master'])) { $named[$e['sentinel']] = $e['master']; }
                $r['named'][] = $e;
                break;
            case 'section-begin':
                $r['sections']++;
                break;
            case 'acquire-invoke':
                $r['invoke'][$e['pid'] . ':' . $e['n'] . ':' . $e['key']] = $e['t0'];
                break;
            case 'acquire':
                $r['acq'][$e['res']]++;
                if ($e['res'] === 'exc') { $r['errors']['acquire: ' . error_kind($e['exc'])] = ($r['errors']['acquire: ' . error_kind($e['exc'])] ?? 0) + 1; }
                $r['acquires'][] = $e;
                break;
            case 'release': case 'cleanup': case 'extend':
                if (($e['res'] ?? '') === 'exc') {
                    $k = "$op: " . error_kind($e['exc']);
                    $r['errors'][$k] = ($r['errors'][$k] ?? 0) + 1;
                }
                break;
            case 'fault':
                $r['faults'][] = $e;
                break;
            case 'trace':
                if ($e['ev'] !== 'durable-check') { break; }
                $peer = port_of($e['peer']);
                $n = $nodeOf[$peer] ?? null;
                $acks = $e['acks'][0] ?? null;
                $c = ['t0' => $e['t0'], 'dt' => $e['dt_us'] / 1000, 'pid' => $e['pid'], 'watchdog' => $e['tid'] !== $e['pid'],
                    'node' => $n, 'conn' => $e['conn']];
                if (isset($e['error'])) {
                    $c['out'] = 'error';
                    $c['why'] = $e['error'];
                } elseif (($e['renewed'][0] ?? '') !== 'int(1)') {
                    $c['out'] = 'lost';
                } elseif (is_int($acks) && $acks >= 1) {
                    $c['out'] = 'acked';
                } else {
                    $c['out'] = 'not acked';
                    // The node's state as the watcher last saw it, and whom the sentinels named.
                    $votes = array_count_values(array_values($named));
                    arsort($votes);
                    $top = array_key_first($votes);
                    $st = $n === null ? null : ($node[$n] ?? null);
                    $online = $st === null ? 0 : count(array_filter($st['replicas'] ?? [], fn($x) => $x[1] === 'online'));
                    // Had it asked the sentinels again: whether the master a majority named had a replica online.
                    $topNode = $top === null || $votes[$top] < 2 ? null : ($nodeOf[$top] ?? null);
                    $topSt = $topNode === null ? null : ($node[$topNode] ?? null);
                    $c['named_online'] = $topSt !== null && ($topSt['role'] ?? '') === 'master'
                        && count(array_filter($topSt['replicas'] ?? [], fn($x) => $x[1] === 'online')) > 0;
                    $c['class'] = match (true) {
                        $st === null => 'unknown (not watched yet)',
                        $top !== null && $top !== $peer && $votes[$top] >= 2 => 'a master the sentinels had replaced (a majority named another)',
                        ($st['role'] ?? '') !== 'master' => 'a node that was no master by then',
                        $online > 0 => 'a master with a replica online that did not acknowledge in time',
                        ($st['replicas'] ?? []) !== [] => 'a master whose replicas were all in a full sync',
                        default => 'a master with no replica connected',
                    };
                }
                $r['checks'][] = $c;
                break;
        }
    }
    return $r;
}

/** For each check not acknowledged, how long until a check on the same node was (null: never in the run). */
function next_ack_same_node(array $checks): array {
    $out = [];
    $nextAck = [];  // node => t0 of the next acked check, scanning backwards
    for ($i = count($checks) - 1; $i >= 0; $i--) {
        $c = $checks[$i];
        if ($c['out'] === 'acked') { $nextAck[$c['node']] = $c['t0']; }
        if ($c['out'] === 'not acked') { $out[$i] = isset($nextAck[$c['node']]) ? $nextAck[$c['node']] - $c['t0'] : null; }
    }
    return $out;
}

/** The first acked check (any node, any process) at or after $t; null if none. */
function first_ack_after(array $checks, float $t): ?float {
    foreach ($checks as $c) {
        if ($c['t0'] >= $t && $c['out'] === 'acked') { return $c['t0']; }
    }
    return null;
}

/**
 * Each node's ways back as a replica: from a fault on it (killed: from its kill, with
 * when it answered again, as a master; stopped: from its stop), from its demotion (a
 * master, then a replica), or from its link to its master lost, to its link up as a
 * replica; with when it was a replica again, and whether a full sync was seen (its
 * master listed it waiting for or receiving the RDB, or it said a sync was in
 * progress). A way that ends with the node the master (promoted, or still the master:
 * a majority of the sentinels name it) says so.
 */
function ways_back(array $r): array {
    $hd = $r['head'];
    $portOf = array_column($hd['ports'] ?? [], 'proxy');
    $out = [];
    $open = [];  // node => [since, why, answered at, replica at, full]
    $prev = [];
    $named = [];
    $failing = [];  // sentinel => whether it reports a failover in progress
    $events = array_merge(array_map(fn($e) => ['repl', $e], $r['repl']), array_map(fn($e) => ['named', $e], $r['named']));
    foreach ($r['faults'] as $f) {
        if (in_array($f['kind'], ['kill', 'stall'], true) && isset($f['t0'])) { $events[] = ['fault', $f]; }
    }
    usort($events, fn($a, $b) => $a[1]['t0'] <=> $b[1]['t0']);
    $close = function (int $n, ?float $up, string $end) use (&$open, &$out) {
        [$t0, $why, $answered, $asReplica, $full] = $open[$n];
        $out[] = ['node' => $n, 'why' => $why, 't0' => $t0, 'answered' => $answered, 'replica_at' => $asReplica, 'up' => $up, 'full' => $full, 'end' => $end];
        unset($open[$n]);
    };
    foreach ($events as [$kind, $e]) {
        if ($kind === 'named') {
            if (isset($e['master'])) { $named[$e['sentinel']] = $e['master']; $failing[$e['sentinel']] = ($e['failover'] ?? '') !== ''; }
            // A node back as a master, or promoted, that a majority names now, no failover in progress.
            $votes = array_count_values(array_values($named));
            foreach (array_keys($open) as $n) {
                if (($prev[$n]['role'] ?? '') === 'master' && ($votes[$portOf[$n] ?? -1] ?? 0) >= 2 && !in_array(true, $failing, true)) { $close($n, null, 'the master'); }
            }
            continue;
        }
        if ($kind === 'fault') {
            $n = $e['nodes'][0];
            if (isset($open[$n])) { $close($n, null, 'faulted again'); }
            $open[$n] = [$e['t0'], $e['kind'] === 'kill' ? 'killed' : 'stopped', null, null, false];
            continue;
        }
        $n = $e['node'];
        $s = $e['state'];
        $was = $prev[$n] ?? null;
        $prev[$n] = $s;
        // A master listing a replica in a full sync marks that replica's way.
        foreach ($s['replicas'] ?? [] as [$port, $state]) {
            $m = array_search($port, $portOf, true);
            if ($m !== false && isset($open[$m]) && in_array($state, ['wait_bgsave', 'send_bulk'], true)) { $open[$m][4] = true; }
        }
        if ($was === null || isset($s['down'])) { continue; }
        if (isset($open[$n]) && $open[$n][2] === null && in_array($open[$n][1], ['killed', 'stopped'], true)) { $open[$n][2] = $e['t0']; }
        $role = $s['role'] ?? '';
        if ($role === 'master') {
            $votes = array_count_values(array_values($named));
            if (isset($open[$n]) && ($votes[$portOf[$n] ?? -1] ?? 0) >= 2 && !in_array(true, $failing, true)) { $close($n, null, 'the master'); }
            continue;
        }
        if (!isset($open[$n]) && (($was['role'] ?? '') === 'master' || ($was['link'] ?? '') === 'up' && ($s['link'] ?? '') !== 'up')) {
            $open[$n] = [$e['t0'], ($was['role'] ?? '') === 'master' ? 'demoted' : 'link lost', null, null, false];
        }
        if (!isset($open[$n])) { continue; }
        $open[$n][3] ??= $e['t0'];
        if ($s['sync'] ?? false) { $open[$n][4] = true; }
        if (($s['link'] ?? '') === 'up') { $close($n, $e['t0'], 'up'); }
    }
    foreach (array_keys($open) as $n) { $close($n, null, 'open'); }
    usort($out, fn($a, $b) => $a['t0'] <=> $b['t0']);
    return $out;
}

/**
 * How much of the run a durable grant could count, as the watcher saw it: the time a
 * majority of the sentinels named a master that had a replica online (ms), from its
 * first record to the run's end; and the longest stretch without.
 */
function grantable(array $r): array {
    $hd = $r['head'];
    $nodeOf = [];
    foreach ($hd['ports'] ?? [] as $i => $p) { $nodeOf[$p['proxy']] = $i; }
    $events = array_merge(array_map(fn($e) => ['repl', $e], $r['repl']), array_map(fn($e) => ['named', $e], $r['named']));
    usort($events, fn($a, $b) => $a[1]['t0'] <=> $b[1]['t0']);
    $node = [];
    $named = [];
    $yes = 0.0;
    $longest = 0.0;
    $since = null;  // start of the stretch without
    $last = null;
    $ok = false;
    $end = $hd['duration'] * 1000;
    foreach ($events as [$kind, $e]) {
        $t = $e['t0'];
        if ($last !== null && $ok) { $yes += $t - $last; }
        $last = $t;
        if ($kind === 'repl') { $node[$e['node']] = $e['state']; } elseif (isset($e['master'])) { $named[$e['sentinel']] = $e['master']; }
        $votes = array_count_values(array_values($named));
        arsort($votes);
        $top = array_key_first($votes);
        $st = $top !== null && $votes[$top] >= 2 ? ($node[$nodeOf[$top] ?? -1] ?? null) : null;
        $now = $st !== null && ($st['role'] ?? '') === 'master' && count(array_filter($st['replicas'] ?? [], fn($x) => $x[1] === 'online')) > 0;
        if ($ok && !$now) { $since = $t; }
        if (!$ok && $now && $since !== null) { $longest = max($longest, $t - $since); }
        $ok = $now;
    }
    if ($last !== null && $ok) { $yes += $end - $last; }
    if (!$ok && $since !== null) { $longest = max($longest, $end - $since); }
    $first = $events[0][1]['t0'] ?? 0;
    return ['share' => $end > $first ? $yes / ($end - $first) : 0, 'longest' => $longest];
}

$rows = [];
foreach ($files as $file) {
    $r = analyse($file);
    $hd = $r['head'];
    $mode = ($hd['durable'] ?? 0) > 0 ? 'durable ' . $hd['durable'] : 'plain';
    $req = array_values(array_filter($r['checks'], fn($c) => !$c['watchdog']));
    $notAcked = array_keys(array_filter($r['checks'], fn($c) => $c['out'] === 'not acked'));
    $rows[] = [$hd['topology'], $hd['seed'], $mode, $r['sections'], $r['acq'], $r['errors'], $r['checks'], grantable($r)];
    if ($table) { continue; }
    printf("## %s seed %d, %s, %g s (%s)\n\n", $hd['topology'], $hd['seed'], $mode, $hd['duration'], basename($file));
    $load = isset($hd['load']) ? sprintf(', load %s at the start', implode(' ', array_map(fn($x) => sprintf('%.2f', $x), $hd['load']))) : '';
    printf("- sections %d; acquires ok %d, false %d, thrown %d%s\n", $r['sections'], $r['acq']['ok'], $r['acq']['fail'], $r['acq']['exc'], $load);
    arsort($r['errors']);
    foreach ($r['errors'] as $k => $n) { printf("  - %d × %s\n", $n, $k); }
    $g = grantable($r);
    printf("- a durable grant could count (a majority named a master with a replica online) %.0f %% of the run; the longest stretch without: %.1f s\n", 100 * $g['share'], $g['longest'] / 1000);
    if (!$r['checks']) { echo "\n"; continue; }
    $by = fn(array $cs, string $out) => count(array_filter($cs, fn($c) => $c['out'] === $out));
    $wd = array_values(array_filter($r['checks'], fn($c) => $c['watchdog']));
    printf("- durable checks: %d (request %d: acked %d, not acked %d, lost %d, error %d; watchdog %d: acked %d, not acked %d)\n",
        count($r['checks']), count($req), $by($req, 'acked'), $by($req, 'not acked'), $by($req, 'lost'), $by($req, 'error'),
        count($wd), $by($wd, 'acked'), $by($wd, 'not acked'));
    $ackedDt = array_map(fn($c) => $c['dt'], array_filter($r['checks'], fn($c) => $c['out'] === 'acked'));
    $naDt = array_map(fn($c) => $c['dt'], array_filter($r['checks'], fn($c) => $c['out'] === 'not acked'));
    printf("  - round trip, acked: p50 / p90 / max %s ms; not acked: %s ms, %.1f s in all\n", spread($ackedDt), spread($naDt), array_sum($naDt) / 1000);
    $next = next_ack_same_node($r['checks']);
    $classes = [];
    foreach ($notAcked as $i) {
        $c = $r['checks'][$i];
        $classes[$c['class']][] = $i;
    }
    uasort($classes, fn($a, $b) => count($b) <=> count($a));
    if ($classes) { echo "- not acknowledged, by the state of the node reached (checks, share, time; the node's next ack after: p50 / p90 / max ms, never):\n"; }
    foreach ($classes as $cls => $is) {
        $t = array_sum(array_map(fn($i) => $r['checks'][$i]['dt'], $is));
        $after = array_filter(array_map(fn($i) => $next[$i], $is), fn($x) => $x !== null);
        $never = count($is) - count($after);
        $nodes = array_count_values(array_map(fn($i) => (string) $r['checks'][$i]['node'], $is));
        ksort($nodes);
        $namedOnline = count(array_filter($is, fn($i) => $r['checks'][$i]['named_online']));
        printf("  - %s: %d (%.0f %%), %.1f s; next ack %s, never %d; nodes %s; the master named then had a replica online for %d\n", $cls, count($is), 100 * count($is) / count($notAcked), $t / 1000,
            spread(array_values($after)), $never, implode(', ', array_map(fn($n, $k) => "node {$n}: {$k}", array_keys($nodes), $nodes)), $namedOnline);
    }
    // Acquires: durable checks of the request's thread inside each.
    $byPid = [];
    foreach ($req as $c) { $byPid[$c['pid']][] = $c; }
    $tries = ['ok' => [], 'fail' => [], 'exc' => []];
    $gaveUp = [];
    $waitNotAcked = 0.0;
    $waitAll = 0.0;
    foreach ($r['acquires'] as $a) {
        $in = array_values(array_filter($byPid[$a['pid']] ?? [], fn($c) => $c['t0'] >= $a['t0'] && $c['t0'] <= $a['t1']));
        $tries[$a['res']][] = count($in);
        $waitAll += $a['t1'] - $a['t0'];
        $waitNotAcked += array_sum(array_map(fn($c) => $c['out'] === 'not acked' ? $c['dt'] : 0, $in));
        if ($a['res'] === 'exc' && str_contains($a['exc'], 'could not make the')) {
            $ack = first_ack_after($r['checks'], $a['t1']);
            $gaveUp[] = ['tries' => count($in), 'next' => $ack === null ? null : $ack - $a['t1'], 'waited' => $a['t1'] - $a['t0']];
        }
    }
    $dist = function (array $xs): string {
        if (!$xs) { return '–'; }
        $c = array_count_values($xs);
        ksort($c);
        return implode(' ', array_map(fn($k, $v) => "$k:$v", array_keys($c), $c));
    };
    printf("- acquires' time: %.1f s in all, %.1f s of it in checks not acknowledged (%.0f %%)\n", $waitAll / 1000, $waitNotAcked / 1000, $waitAll > 0 ? 100 * $waitNotAcked / $waitAll : 0);
    printf("- tries (durable checks per acquire, tries:acquires): ok %s; false %s; thrown %s\n", $dist($tries['ok']), $dist($tries['fail']), $dist($tries['exc']));
    if ($gaveUp) {
        $nexts = array_filter(array_map(fn($g) => $g['next'], $gaveUp), fn($x) => $x !== null);
        printf("- thrown \"not durable\": %d, after %s ms of wait; tries %s; the next check acked anywhere after the throw: %s ms later (never: %d)\n",
            count($gaveUp), spread(array_map(fn($g) => $g['waited'], $gaveUp)), $dist(array_map(fn($g) => $g['tries'], $gaveUp)),
            spread(array_values($nexts)), count($gaveUp) - count($nexts));
    }
    // Each master fault: the sentinels' new master, its first replica online, the first ack after.
    echo "- master faults (ms after the fault began, until the next one: a sentinel named another master, that master had a replica online, the first check acked after the fault ended):\n";
    $masterFaults = array_values(array_filter($r['faults'], fn($f) => in_array($f['kind'], ['kill', 'stall'], true) && isset($f['t0'])));
    foreach ($masterFaults as $fi => $f) {
        // Up to the next master fault.
        $until = $masterFaults[$fi + 1]['t0'] ?? INF;
        $victim = $f['nodes'][0];
        $vport = $hd['ports'][$victim]['proxy'] ?? null;
        $namedAt = null;
        $newPort = null;
        foreach ($r['named'] as $e) {
            if ($e['t0'] >= $f['t0'] && $e['t0'] < $until && isset($e['master']) && $e['master'] !== $vport) { $namedAt = $e['t0']; $newPort = $e['master']; break; }
        }
        $onlineAt = null;
        if ($newPort !== null) {
            $nn = array_search($newPort, array_column($hd['ports'], 'proxy'), true);
            foreach ($r['repl'] as $e) {
                if ($e['t0'] >= $f['t0'] && $e['t0'] < $until && $e['node'] === $nn && array_filter($e['state']['replicas'] ?? [], fn($x) => $x[1] === 'online')) { $onlineAt = $e['t0']; break; }
            }
        }
        $ack = first_ack_after($r['checks'], $f['t1']);
        if ($ack !== null && $ack >= $until) { $ack = null; }
        printf("  - %s of node %d at %.1f s, %.2f s long: %s, %s, %s\n", $f['kind'], $victim, $f['t0'] / 1000, $f['len'],
            $namedAt === null ? 'no other master named' : 'named ' . ms($namedAt - $f['t0']),
            $onlineAt === null ? 'no replica online' : 'replica online ' . ms($onlineAt - $f['t0']),
            ($hd['durable'] ?? 0) > 0 ? ($ack === null ? 'no ack before the next' : 'acked ' . ms($ack - $f['t0'])) : 'plain');
    }
    echo "- nodes' ways back (ms after it was killed, stopped or demoted, or lost its link: answered again, a replica, its link up):\n";
    foreach (ways_back($r) as $w) {
        $at = fn(?float $t) => $t === null ? '–' : ms($t - $w['t0']);
        printf("  - node %d %s at %.1f s: answered %s, replica %s, %s%s\n", $w['node'], $w['why'], $w['t0'] / 1000, $at($w['answered']), $at($w['replica_at']),
            match ($w['end']) { 'up' => 'link up ' . $at($w['up']), 'the master' => 'the master (named by the sentinels)',
                'faulted again' => 'faulted again first', default => 'not back by the end' },
            $w['full'] ? ', full sync' : '');
    }
    echo "\n";
}
if ($table) {
    echo "| topology | seed | mode | sections | acquires ok / false / thrown | durable checks acked / not acked | grantable | errors by kind |\n|---|---|---|---|---|---|---|---|\n";
    foreach ($rows as [$topo, $seed, $mode, $sections, $acq, $errors, $checks, $g]) {
        arsort($errors);
        $acked = count(array_filter($checks, fn($c) => $c['out'] === 'acked'));
        $na = count(array_filter($checks, fn($c) => $c['out'] === 'not acked'));
        printf("| %s | %d | %s | %d | %d / %d / %d | %s | %.0f %% | %s |\n", $topo, $seed, $mode, $sections, $acq['ok'], $acq['fail'], $acq['exc'],
            $checks ? "$acked / $na" : '–', 100 * $g['share'], implode('; ', array_map(fn($k, $n) => "$n × $k", array_keys($errors), $errors)) ?: '–');
    }
}
