<?php
// The runner of tools/model/run.php: one sequence (or a subsequence of it) from a
// clean server with fresh client processes, judged step by step; and the shrinker.
declare(strict_types=1);

const WAIT_MARGIN = 3.0;  // s: a waiter is heard out once its deadline comes this close
const LEASE_AHEAD = 1.5;  // s: a lease that ends this soon is let run out before the next step

function sleep_until(float $t): void {
    $d = $t - now();
    if ($d > 0) { usleep((int) ($d * 1e6)); }
}

/** An argument of an operation, resolved against what the run has seen: [value, how to print it]. */
function resolve(array $a, Model $m): array {
    if (isset($a['lit'])) { return [hex2bin($a['lit']), null]; }
    if (isset($a['num'])) { return [(float) $a['num'], null]; }
    if (isset($a['int'])) { return [(int) $a['int'], null]; }
    if (!isset($a['ref'])) { return [null, null]; }
    [$c, $o] = explode('/', $a['ref']);
    $t = $m->objs[$a['ref']]['tok'] ?? null;
    if ($t === null) { return ['never-taken', "'never-taken' /* c$c's \$$o has no token */"]; }
    $v = match ($a['v']) { 'bang' => $t . '!', 'chop' => strlen($t) > 1 ? substr($t, 0, -1) : $t . $t, default => $t };
    return [$v, show($v) . " /* c$c's \$$o token" . ['same' => '', 'bang' => " . '!'", 'chop' => ' less its last byte'][$a['v']] . ' */'];
}

/** Why an operation is left out in this state, or null: no lease may end while waiters queue (the model cannot say who takes it then). */
function skip_reason(Model $m, array $op, array $spec): ?string {
    $keys = $spec[0] === 'MultiLock' ? $spec[1] : [$spec[1]];
    if ($spec[0] === 'Lock' && in_array($op['m'], ['addLock', 'addReadLock'], true) && $spec[2] >= 1) {
        $k = $spec[1];
        if ($m->keys[$k]['mode'] !== 'free' && $m->firstEnd($k) < now() + $spec[2] + WAIT_MARGIN + LEASE_AHEAD + 1) { return 'a lease on the key ends before the wait would'; }
    }
    if ($spec[0] !== 'Semaphore' && $op['m'] === 'extendLock' && isset($op['a'][1]['num'])) {
        foreach ($keys as $k) {
            foreach ($m->keys[$k]['queue'] as $w) {
                if (now() + $op['a'][1]['num'] < $m->waiting[$w]['deadline'] + WAIT_MARGIN + LEASE_AHEAD + 1) { return 'it could end a lease while waiters queue'; }
            }
        }
    }
    return null;
}

/** The observer's object for a key ('s0': the semaphore). */
function obs_spec(string $k, string $dsn): array {
    $opt = ['dsn' => $dsn, 'connect_timeout' => 5, 'read_timeout' => 5];
    return $k === 's0' ? ['Semaphore', 's0', PERMITS, 0.0, (float) LEASE, $opt] : ['Lock', $k, 0.0, (float) LEASE, $opt];
}

/** A long wait: its answer (the key was free), or 'queued' once the observer sees it queued. */
function wait_or_queue(Client $c, Client $obs, string $k, int $want, string $dsn): array {
    $until = now() + 10;
    while (now() < $until) {
        if (($a = $c->recv(0.005)) !== null) { return answer($a); }
        $i = $obs->call("O$k", obs_spec($k, $dsn), 'inspect');
        if (($i['r']['waiters'] ?? -1) >= $want) { return ['queued' => true]; }
    }
    return ['x' => 'NoAnswer', 'msg' => 'neither answered nor seen queued within 10 s'];
}

/** What the server and every idle object say now (see check_snapshot()). */
function snapshot(Model $m, array $clients, array $blocked, array $made, array $env): array {
    $r0 = now();
    // A semaphore held alone lives in its holders' key, its own absent (docs/semaphores.md):
    // its PTTL is the longer of the two.
    $rep = $env['raw']->pipeline([['PTTL', 'k0'], ['GET', 'k0'], ['PTTL', 'k1'], ['GET', 'k1'], ['PTTL', 's0'], ['PTTL', '{s0}:readers']]);
    $r1 = now();
    $s = ['p0' => $r0, 'r0' => $r0, 'r1' => $r1, 'raw' => ['k0' => ['pttl' => $rep[0], 'get' => $rep[1]], 'k1' => ['pttl' => $rep[2], 'get' => $rep[3]], 's0' => ['pttl' => max($rep[4], $rep[5])]], 'objs' => []];
    $calls = [];
    foreach (array_keys($made) as $oid) {
        [$c, $o] = explode('/', $oid);
        if (isset($blocked[(int) $c])) { continue; }
        foreach (['life' => 'getRemainingLifetime', 'owned' => 'isOwned', 'inspect' => 'inspect'] as $f => $meth) { $calls[(int) $c][] = [$oid, $o, $meth, $f]; }
    }
    foreach ($calls as $c => $list) {
        $clients[$c]->send(['op' => 'batch', 'calls' => array_map(fn($x) => ['o' => $x[1], 'spec' => enc(spec_of($x[1], $env['dsn'])), 'm' => $x[2], 'a' => []], $list)]);
    }
    foreach ($calls as $c => $list) {
        $rs = $clients[$c]->recv(30)['rs'] ?? [];
        foreach ($list as $j => [$oid, , , $f]) { $s['objs'][$oid][$f] = answer($rs[$j] ?? null); }
    }
    // The observer: every key's inspect(), isLocked() and isOwned() of every token in play and of the alphabet.
    $toks = array_column(alphabet(), 0);
    foreach ($m->keys as $K) { if ($K['mode'] === 'write') { $toks[] = $K['h']['tok']; } $toks = [...$toks, ...array_map('strval', array_keys($K['readers']))]; }
    foreach ($m->objs as $o) { $toks[] = $o['tok']; }
    $toks = array_values(array_unique(array_filter($toks, 'is_string')));
    $semToks = array_values(array_unique([...array_map('strval', array_keys($m->sem)), ...array_filter(array_column(array_filter($m->objs, fn($o) => $o['spec'][0] === 'Semaphore'), 'tok'), 'is_string'), 'job']));
    $oc = [];
    foreach (array_keys($m->keys) as $k) {
        $oc[] = [$k, 'inspect', [], 'inspect'];
        $oc[] = [$k, 'isLocked', [], 'locked'];
        foreach ($toks as $t) { $oc[] = [$k, 'isOwned', [$t], bin2hex($t)]; }
    }
    $oc[] = ['s0', 'available', [], 'available'];
    $oc[] = ['s0', 'inspect', [], 'inspect'];
    foreach ($semToks as $t) { $oc[] = ['s0', 'isOwned', [$t], bin2hex($t)]; }
    $clients[0]->send(['op' => 'batch', 'calls' => array_map(fn($x) => ['o' => "O{$x[0]}", 'spec' => enc(obs_spec($x[0], $env['dsn'])), 'm' => $x[1], 'a' => array_map('enc', $x[2])], $oc)]);
    $rs = $clients[0]->recv(30)['rs'] ?? [];
    $s['sem'] = ['owned' => []];
    foreach ($oc as $j => [$k, $meth, , $f]) {
        $a = answer($rs[$j] ?? null);
        if ($k === 's0') { if ($meth === 'isOwned') { $s['sem']['owned'][$f] = $a; } else { $s['sem'][$f] = $a; } }
        elseif ($meth === 'isOwned') { $s['obs'][$k]['owned'][$f] = $a; }
        else { $s['obs'][$k][$f] = $a; }
    }
    $s['p1'] = now();
    return $s;
}

/**
 * Runs seed $plan's operations (all, or those at the indices $only) from a clean
 * state. Returns ['fail' => null | [kind, sig, msg, step, pos], 'lines', 'steps', 'only'].
 */
function run_plan(array $plan, ?array $only, array &$env): array {
    @posix_kill($env['replica']['pid'], SIGCONT);
    $env['raw']->ask('FLUSHALL');
    // The replica has caught up, so that a durable grant early in the sequence is acknowledged in time, as in its replays.
    $env['raw']->ask('WAIT', '1', '5000');
    $m = new Model(KEYS, $env['cad'], $env['legacy']);
    $cmd = [$env['php'], '-n', '-d', 'extension=posix', '-d', 'extension=' . $env['ext'], __DIR__ . '/client.php', ...($env['async'] ? ["--async={$env['tmp']}/async"] : [])];
    $clients = [];
    for ($c = 0; $c <= $plan['clients']; $c++) { $clients[$c] = new Client($cmd, "{$env['tmp']}/c$c.err"); }
    $env['live'] = $clients;
    $blocked = $made = $shown = $waitLine = [];
    $lines = [];
    $steps = 0;
    $indices = array_values($only ?? array_keys($plan['ops']));
    $fail = function (string $kind, string $sig, string $msg, int $pos) use (&$lines, &$steps, $indices): array {
        $lines[] = "!! [$kind] $msg";
        return ['kind' => $kind, 'sig' => $sig, 'msg' => $msg, 'step' => $steps, 'pos' => $pos, 'op' => $indices[$pos]];
    };
    $result = function (?array $f) use (&$lines, &$steps, $only) { return ['fail' => $f, 'lines' => $lines, 'steps' => $steps, 'only' => $only]; };
    try {
        foreach ($indices as $pos => $i) {
            $op = $plan['ops'][$i] ?? null;
            if ($op === null) { continue; }
            // Before the step: waiters whose deadline comes are heard out; leases about to end run out.
            while (true) {
                foreach ($m->waiting as $wid => $w) {
                    if ($w['deadline'] - now() >= WAIT_MARGIN) { continue; }
                    sleep_until($w['deadline'] + MARGIN + 0.05);
                    $wc = (int) explode('/', $wid)[0];
                    $a = answer($clients[$wc]->recv(5));
                    $lines[] = "   ({$waitLine[$wid]}) => " . show_obs($a) . ' at its deadline';
                    unset($blocked[$wc]);
                    if ($e = $m->timedOut($wid, $a, now() - $w['t0'])) { return $result($fail('waiter', 'waiter', $e, $pos)); }
                    continue 2;
                }
                $soon = array_filter($m->holds(), fn($x) => ($x[1]['alts'] ? min(array_column($x[1]['alts'], 0)) : $x[1]['exp'][0]) - now() < LEASE_AHEAD);
                if (!$soon) { break; }
                sleep_until(max(array_map(fn($x) => $x[1]['alts'] ? max(array_column($x[1]['alts'], 1)) : $x[1]['exp'][1], $soon)) + MARGIN + 0.02);
                $m->settle(now());
            }
            $m->settle(now());
            if (isset($op['d'])) {
                if (($op['d'] === 'freeze') === $m->frozen) { continue; }
                posix_kill($env['replica']['pid'], $op['d'] === 'freeze' ? SIGSTOP : SIGCONT);
                $m->frozen = $op['d'] === 'freeze';
                $lines[] = show_op($op, [], $shown, null);
                $steps++;
                continue;
            }
            $c = $op['c'];
            $oid = "$c/{$op['o']}";
            $spec = spec_of($op['o'], $env['dsn']);
            if (isset($blocked[$c]) || skip_reason($m, $op, $spec) !== null) { continue; }
            $args = array_map(fn($a) => resolve($a, $m), $op['a']);
            $vals = array_map(fn($a) => $a[0], $args);
            $m->obj($oid, $spec);
            $made[$oid] = true;
            $long = in_array($op['m'], ['addLock', 'addReadLock'], true) && $spec[0] === 'Lock' && $spec[2] >= 1;
            $queueBefore = $spec[0] === 'Lock' ? count($m->keys[$spec[1]]['queue']) : 0;
            $t0 = now();
            $clients[$c]->send(['op' => 'call', 'o' => $op['o'], 'spec' => enc($spec), 'm' => $op['m'], 'a' => array_map('enc', $vals)]);
            $ob = $long ? wait_or_queue($clients[$c], $clients[0], $spec[1], $queueBefore + 1, $env['dsn']) : answer($clients[$c]->recv(30));
            $t1 = now();
            $ob['elapsed'] = $t1 - $t0;
            $err = $m->apply($oid, $spec, $op['m'], $vals, $ob, $t0, $t1);
            $line = show_op($op, $args, $shown, null);
            $lines[] = "$line => " . show_obs($ob);
            $steps++;
            // The empty string (no token is empty) is a signature of its own, as for isOwned('').
            $sig = "answer:{$op['m']}" . (($vals[0] ?? null) === '' ? "('')" : '');
            if ($err) { return $result($fail('answer', $sig, "c$c's \${$op['o']}->{$op['m']}(): $err", $pos)); }
            if (!empty($ob['queued'])) { $blocked[$c] = $oid; $waitLine[$oid] = $line; }
            if ($m->pending) {
                // Hand-overs: the key as the release left it, then each waiter's answer.
                $m->grantRaw = [];
                foreach ($m->pending as $wid) { $k = $m->waiting[$wid]['key']; $m->grantRaw[$k] ??= $env['raw']->ask('GET', $k); }
                foreach ($m->pending as $wid) {
                    $wc = (int) explode('/', $wid)[0];
                    $a = answer($clients[$wc]->recv(10));
                    $lines[] = "   ({$waitLine[$wid]}) => " . show_obs($a) . ' handed over';
                    unset($blocked[$wc]);
                    if ($e = $m->granted($wid, $a, now())) { return $result($fail('handover', 'handover', $e, $pos)); }
                }
                $m->pending = [];
            }
            $found = array_values(array_filter(check_snapshot($m, snapshot($m, $clients, $blocked, $made, $env)),
                fn($f) => !in_array($f[0], $env['skip'], true) && !in_array($f[2] ?? $f[0], $env['skip'], true)));
            if ($found) { return $result($fail($found[0][0], $found[0][2] ?? $found[0][0], $found[0][1], $pos)); }
        }
        return $result(null);
    } finally {
        foreach ($clients as $cl) { $cl->kill(); }
        $env['live'] = [];
        @posix_kill($env['replica']['pid'], SIGCONT);
    }
}

/**
 * Delta debugging over the operations: a candidate (a subsequence) is kept when,
 * run from a clean state, it fails the same check at the same operation; each pass
 * drops chunks, halving them down to single operations. Returns [indices, its run,
 * runs made].
 */
function shrink(array $plan, array $res, array &$env): array {
    // The same check failing at the same operation (not another bug of the same kind found elsewhere).
    [$sig, $at] = [$res['fail']['sig'], $res['fail']['op']];
    $cur = array_slice($res['only'] ?? array_keys($plan['ops']), 0, $res['fail']['pos'] + 1);
    $last = $res;
    $runs = 0;
    $until = microtime(true) + 300;
    $fails = function (array $cand) use ($plan, &$env, $sig, $at, &$runs, &$last): ?array {
        $runs++;
        $r = run_plan($plan, $cand, $env);
        if (!$r['fail'] || $r['fail']['sig'] !== $sig || $r['fail']['op'] !== $at) { return null; }
        $last = $r;
        return array_slice($cand, 0, $r['fail']['pos'] + 1);
    };
    $again = $fails($cur) ?? $fails($cur);
    if ($again === null) { $last['lines'][] = '(the failure did not come back on two replays: a flaky failure; the sequence is the original one)'; return [$cur, $last, $runs]; }
    $cur = $again;
    $n = 2;
    while (count($cur) > 1 && microtime(true) < $until) {
        $size = (int) ceil(count($cur) / $n);
        $cut = false;
        for ($from = 0; $from < count($cur); $from += $size) {
            $cand = array_values(array_merge(array_slice($cur, 0, $from), array_slice($cur, $from + $size)));
            if ($cand && ($kept = $fails($cand)) !== null) { $cur = $kept; $cut = true; break; }
        }
        if ($cut) { $n = max(2, $n - 1); continue; }
        if ($size === 1) { break; }
        $n = min(count($cur), $n * 2);
    }
    return [$cur, $last, $runs];
}
