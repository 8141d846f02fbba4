<?php
// One client process of the model test (tools/model/run.php starts 3 or 4 of them
// and an observer, with proc_open). It reads one JSON line per request on stdin and
// answers each with one JSON line on stdout:
//   {"op":"call","o":NAME,"spec":SPEC,"m":METHOD,"a":[ARGS]}  -> {"r":VALUE} | {"x":CLASS,"msg":TEXT}
//   {"op":"batch","calls":[{"o":..,"spec":..,"m":..,"a":..},...]} -> {"rs":[answer,...]}
//   {"op":"quit"}
// An object is made the first time its NAME is used, from SPEC:
//   ["Lock", key, timeOut, lockOut, options] | ["MultiLock", keys, timeOut, lockOut, options]
//   | ["Semaphore", key, permits, timeOut, lockOut, options]
// and kept until the process ends. Strings travel as {"s": hex} (tokens are binary),
// floats as {"f": number or "INF"}, arrays as {"a": {...}}.
declare(strict_types=1);

// Warnings (a release found lost) go to stderr: stdout carries only the answers.
ini_set('display_errors', 'stderr');

function enc(mixed $v): mixed {
    if (is_string($v)) { return ['s' => bin2hex($v)]; }
    if (is_float($v)) { return ['f' => is_finite($v) ? $v : (is_nan($v) ? 'NAN' : ($v > 0 ? 'INF' : '-INF'))]; }
    if (is_array($v)) { return ['a' => array_map('enc', $v)]; }
    return $v;
}

function dec(mixed $v): mixed {
    if (!is_array($v)) { return $v; }
    if (isset($v['s'])) { return hex2bin($v['s']); }
    if (array_key_exists('f', $v)) { return is_string($v['f']) ? ['INF' => INF, '-INF' => -INF, 'NAN' => NAN][$v['f']] : (float) $v['f']; }
    if (isset($v['a'])) { return array_map('dec', $v['a']); }
    return array_map('dec', $v);
}

$objects = [];

function make(array $spec): object {
    $spec = dec($spec);
    return match ($spec[0]) {
        'Lock' => new Lock($spec[1], $spec[2], $spec[3], $spec[4]),
        'MultiLock' => new MultiLock($spec[1], $spec[2], $spec[3], $spec[4]),
        'Semaphore' => new Semaphore($spec[1], $spec[2], $spec[3], $spec[4], $spec[5]),
    };
}

function call(array $req): array {
    global $objects;
    try {
        $o = $objects[$req['o']] ??= make($req['spec']);
        $r = $o->{$req['m']}(...array_map('dec', $req['a'] ?? []));
        return ['r' => enc($r)];
    } catch (Throwable $e) {
        return ['x' => get_class($e), 'msg' => $e->getMessage()];
    }
}

while (($line = fgets(STDIN)) !== false) {
    $req = json_decode($line, true);
    if (!is_array($req) || ($req['op'] ?? '') === 'quit') { break; }
    $out = match ($req['op']) {
        'call' => call($req),
        'batch' => ['rs' => array_map('call', $req['calls'])],
        default => ['x' => 'Protocol', 'msg' => 'unknown op'],
    };
    fwrite(STDOUT, json_encode($out, JSON_PRESERVE_ZERO_FRACTION) . "\n");
}
