<?php
// The checks after each step of tools/model/run.php: what the server holds (raw GET
// and PTTL, read behind the extension's back), what an observer process sees
// (inspect(), isLocked(), isOwned($token) for every token of the alphabet and every
// token in play), and what each idle client's objects say of themselves
// (getRemainingLifetime() against the PTTL read just before it, isOwned(), inspect()).
// Each failure is [check, message, signature?]; the signature (default: the check)
// is what the shrinker keeps failing and what --skip names.
declare(strict_types=1);

/**
 * $s: 'p0', 'p1' (the probes' bracket), 'r0', 'r1' (the raw reads'), 'raw' => [key =>
 * ['get', 'pttl']] ('s0': pttl only), 'obs' => [key => ['inspect', 'locked', 'owned' =>
 * [hex => answer]]] and 'sem' => ['available', 'inspect', 'owned'], 'objs' => [oid =>
 * ['life', 'owned', 'inspect']]. Answers are as the client sent them (['r' => ...]).
 */
function check_snapshot(Model $m, array $s): array {
    $fail = [];
    [$p0, $p1, $r0, $r1] = [$s['p0'], $s['p1'], $s['r0'], $s['r1']];
    $unsure = [];
    foreach ($m->keys as $k => $K) {
        $pttl = $s['raw'][$k]['pttl'];
        if ($e = $m->collapse($k, $pttl, $r0, $r1)) { $fail[] = ['pttl', $e]; }
        $K = $m->keys[$k];
        $recs = $K['mode'] === 'write' ? [$K['h']] : array_values($K['readers']);
        $unsure[$k] = in_array(null, array_map(fn($h) => Model::alive($h, $p0, $p1), $recs), true)
            || array_filter($recs, fn($h) => $h['alts']) || $K['mode'] === 'write' && $K['h']['tok'] === null;
        if ($unsure[$k]) { continue; }
        $get = $s['raw'][$k]['get'];
        $want = match ($K['mode']) { 'write' => $K['h']['tok'], 'read' => '', 'free' => null };
        // The value is exactly the token on every server (api.md); builds before issue 56
        // (--legacy-token-args) stored a generated token held with nobody queued marked,
        // on a server with its own compare-and-delete.
        $marked = $m->legacy && $m->cad && $K['mode'] === 'write' && $K['h']['gen'] && !$K['queue'] && $get === $want . '!';
        if ($get !== $want && !$marked) {
            $fail[] = ['raw', "GET $k is " . show($get) . ', the model says ' . show($want) . " ({$K['mode']}" . ($K['queue'] ? ', ' . count($K['queue']) . ' queued' : ', nobody queued') . ')'];
        }
        $ends = array_map(fn($h) => $h['exp'], $recs);
        if ($K['mode'] === 'free') {
            if ($pttl !== -2) { $fail[] = ['pttl', "PTTL $k is $pttl, the model says the key is free (-2)"]; }
        } else {
            $lo = max(array_column($ends, 0)) - $r1 - 0.02;
            $hi = max(array_column($ends, 1)) - $r0 + 0.02;
            if ($pttl / 1000 < $lo || $pttl / 1000 > $hi) {
                $fail[] = ['pttl', sprintf('PTTL %s is %d ms, the model says %.0f to %.0f ms (%s)', $k, $pttl, $lo * 1000, $hi * 1000, $K['mode'])];
            }
        }
        $o = $s['obs'][$k];
        $live = $K['mode'] === 'read' ? count($K['readers']) : 0;
        $want = ['state' => $K['mode'], 'readers' => $live, 'waiters' => count($K['queue']), 'mine' => false];
        $fail = [...$fail, ...inspect_diff("observer's inspect() of $k", $o['inspect'], $want)];
        if (($o['locked']['r'] ?? null) !== ($K['mode'] !== 'free')) {
            $fail[] = ['isLocked', "isLocked() of $k is " . show_obs($o['locked']) . ", the model says {$K['mode']}"];
        }
        foreach ($o['owned'] as $hex => $ans) {
            $t = hex2bin($hex);
            if (Model::badToken($t)) {
                // No token is empty or over 256 bytes: a ValueError (api.md; false before fb13692, with --legacy-token-args).
                if (!ex_is($ans['x'] ?? '', 'ValueError') && !($m->legacy && ($ans['r'] ?? null) === false)) { $fail[] = ['isOwned', 'isOwned(' . show($t) . ") on $k is " . show_obs($ans) . ', the model says ValueError' . ($m->legacy ? ' or false' : '') . ' (' . describe($K) . ')', $t === '' ? "isOwned('')" : 'isOwned']; }
                continue;
            }
            $v = $m->holdsKey($k, $t, $p0, $p1);
            if ($v !== null && ($ans['r'] ?? null) !== $v) {
                // The empty string (no token is empty) is a signature of its own, so that --skip can look past it.
                $fail[] = ['isOwned', "isOwned(" . show($t) . ") on $k is " . show_obs($ans) . ', the model says ' . var_export($v, true) . ' (' . describe($K) . ')', $t === '' ? "isOwned('')" : 'isOwned'];
            }
        }
    }
    // The semaphore.
    $semUnsure = in_array(null, array_map(fn($h) => Model::alive($h, $p0, $p1), $m->sem), true);
    if (!$semUnsure) {
        $avail = PERMITS - array_sum(array_column($m->sem, 'w'));
        if (($s['sem']['available']['r'] ?? null) !== $avail) { $fail[] = ['semaphore', 'available() is ' . show_obs($s['sem']['available']) . ", the model says $avail"]; }
        $i = $s['sem']['inspect']['r'] ?? null;
        if (!is_array($i) || $i['available'] !== $avail || count($i['holders']) !== count($m->sem) || $i['waiters'] !== 0) {
            $fail[] = ['semaphore', 'inspect() is ' . show_obs($s['sem']['inspect']) . ", the model says available $avail, " . count($m->sem) . ' holders, 0 waiters'];
        }
        foreach ($s['sem']['owned'] as $hex => $ans) {
            $t = hex2bin($hex);
            $v = isset($m->sem[$t]);
            if (($ans['r'] ?? null) !== $v) { $fail[] = ['isOwned', 'Semaphore isOwned(' . show($t) . ') is ' . show_obs($ans) . ', the model says ' . var_export($v, true)]; }
        }
    }
    // Each idle client's objects.
    foreach ($s['objs'] as $oid => $a) {
        $o = $m->objs[$oid];
        $spec = $o['spec'];
        $keys = match ($spec[0]) { 'Lock' => [$spec[1]], 'MultiLock' => $spec[1], 'Semaphore' => ['s0'] };
        $pttl = min(array_map(fn($k) => $s['raw'][$k]['pttl'], $keys));
        $life = $a['life']['r'] ?? null;
        if (!is_float($life)) { $fail[] = ['lifetime', "$oid: getRemainingLifetime() is " . show_obs($a['life'])]; continue; }
        $rec = $m->record($o);
        $h = $o['hold'];
        if ($o['forgot']) {
            // Forgotten by this process (Model::forgetOthers): 0 by this code, not judged.
        } elseif (!$rec && $h && Model::alive(['exp' => $h['exp'], 'alts' => null], $p0, $p1) === false) {
            // Its lease surely ended: so has the bound, which is shorter.
            if ($life != 0.0) { $fail[] = ['lifetime', sprintf('%s: getRemainingLifetime() is %.3f s, but its lease ended %.2f s ago', $oid, $life, $p0 - $h['exp'][1])]; }
        } elseif ($rec) {
            // A hold's bound never outlasts the server's lease (safety.md). (Not judged after another
            // object extended the hold with its token: the docs do not say whose bound that moves.)
            if (!$rec['foreign'] && $life > max(0, $pttl) / 1000 + SLACK) {
                $fail[] = ['lifetime', sprintf('%s: getRemainingLifetime() is %.3f s, but the server\'s PTTL of %s was %d ms just before', $oid, $life, implode(',', $keys), $pttl)];
            }
            $L = $spec[0] === 'Semaphore' ? $spec[4] : $spec[3];
            if ($rec && !$rec['foreign'] && !$o['doubt'] && !$rec['alts'] && $rec['exp'][0] - $p1 > 0.02 * $L + MARGIN && $life <= 0) {
                $fail[] = ['lifetime', "$oid: getRemainingLifetime() is 0 while its hold lasts (the model: " . sprintf('%.2f', $rec['exp'][0] - $p1) . ' s more)'];
            }
        } elseif (!$h && !$o['gone'] && $life != 0.0) {
            $fail[] = ['lifetime', sprintf('%s: getRemainingLifetime() is %.3f s, but the object holds nothing', $oid, $life)];
        }
        // isOwned(): with the docs' token or this code's (see Model::tokensFor).
        $cands = [];
        foreach (both($o['tok'], $o['lost'] ? null : $o['ctok']) as $t) { $cands[] = owned_by($m, $spec, $keys, $t, $p0, $p1); }
        if (!in_array(null, $cands, true) && !in_array($a['owned']['r'] ?? 'x', $cands, true)) {
            $fail[] = ['isOwned', "$oid: isOwned() is " . show_obs($a['owned']) . ', the model says ' . implode(' or ', array_map(fn($v) => var_export($v, true), array_unique($cands)))];
        }
        // inspect(): 'mine' with either token (no lost filter there), and each key's state.
        $i = $a['inspect']['r'] ?? null;
        $mines = array_map(fn($t) => owned_by($m, $spec, $keys, $t, $p0, $p1), both($o['tok'], $o['ctok']));
        if (!is_array($i)) { $fail[] = ['inspect', "$oid: inspect() is " . show_obs($a['inspect'])]; continue; }
        if ($spec[0] === 'Semaphore') { continue; }
        if (!in_array(null, $mines, true) && !in_array($i['mine'] ?? 'x', $mines, true)) {
            $fail[] = ['inspect', "$oid: inspect()['mine'] is " . show($i['mine'] ?? null) . ', the model says ' . implode(' or ', array_map(fn($v) => var_export($v, true), array_unique($mines)))];
        }
        foreach ($keys as $k) {
            if ($unsure[$k]) { continue; }
            $got = $spec[0] === 'MultiLock' ? ($i['keys'][$k] ?? null) : $i;
            $K = $m->keys[$k];
            $want = ['state' => $K['mode'], 'readers' => $K['mode'] === 'read' ? count($K['readers']) : 0, 'waiters' => count($K['queue'])];
            $fail = [...$fail, ...inspect_diff("$oid: inspect() of $k", ['r' => $got], $want)];
        }
    }
    return $fail;
}

/** Whether token $t holds every key of an object of $spec (null: a lease ending). */
function owned_by(Model $m, array $spec, array $keys, ?string $t, float $p0, float $p1): ?bool {
    if ($t === null || $t === '') { return false; }
    if ($spec[0] === 'Semaphore') { return isset($m->sem[$t]) ? Model::alive($m->sem[$t], $p0, $p1) : false; }
    $v = true;
    foreach ($keys as $k) {
        $K = $m->keys[$k];
        $h = $spec[0] === 'MultiLock' ? ($K['mode'] === 'write' && $K['h']['tok'] === $t ? Model::alive($K['h'], $p0, $p1) : false) : $m->holdsKey($k, $t, $p0, $p1);
        if ($h === false) { return false; }
        if ($h === null) { $v = null; }
    }
    return $v;
}

function inspect_diff(string $what, array $ans, array $want): array {
    $got = $ans['r'] ?? null;
    if (!is_array($got)) { return [['inspect', "$what is " . show_obs($ans)]]; }
    $bad = [];
    foreach ($want as $f => $v) {
        if (($got[$f] ?? null) !== $v) { $bad[] = "$f " . show($got[$f] ?? null) . ' (the model: ' . show($v) . ')'; }
    }
    return $bad ? [['inspect', "$what: " . implode(', ', $bad)]] : [];
}

function describe(array $K): string {
    return match ($K['mode']) {
        'free' => 'the key is free',
        'write' => 'the key holds ' . show($K['h']['tok']),
        'read' => 'readers ' . implode(', ', array_map('show', array_keys($K['readers']))),
    };
}
