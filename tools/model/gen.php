<?php
// The generator of tools/model/run.php: a seed gives a whole sequence of operations
// before anything runs (so that any subsequence of it can run again: the shrinker's
// candidates), and the printing of a sequence as PHP-like lines.
declare(strict_types=1);

const KEYS = ['k0', 'k1'];
const LEASE = 30;        // s: long enough that timing decides no answer
const SHORT_LEASE = 0.5; // s: the E objects' leases, which the driver lets run out
const WAIT = 10;         // s: the W objects' waits
const SHORT_WAIT = 0.3;  // s: the T object's wait, which runs out within its call
const MID_WAIT = 1.2;    // s: the U objects' waits, which queue and mostly run out (heard at the next step)

/** Each client's objects, by name: [class, key(s), timeOut, lockOut] ([class, key, permits, timeOut, lockOut] for the semaphore), 'durable'. */
const CATALOG = [
    'L0' => ['Lock', 'k0', 0, LEASE], 'L1' => ['Lock', 'k1', 0, LEASE],
    'W0' => ['Lock', 'k0', WAIT, LEASE], 'W1' => ['Lock', 'k1', WAIT, LEASE],
    'T0' => ['Lock', 'k0', SHORT_WAIT, LEASE],
    'U0' => ['Lock', 'k0', MID_WAIT, LEASE], 'U1' => ['Lock', 'k1', MID_WAIT, LEASE],
    'E0' => ['Lock', 'k0', 0, SHORT_LEASE], 'E1' => ['Lock', 'k1', 0, SHORT_LEASE],
    'M' => ['MultiLock', KEYS, 0, LEASE],
    'S' => ['Semaphore', 's0', PERMITS, 0, LEASE],
    'D0' => ['Lock', 'k0', 0, LEASE, 'durable' => true], 'D1' => ['Lock', 'k1', 0, LEASE, 'durable' => true],
];

/**
 * Tokens chosen to hurt, with weights: the same prefix with suffixes, one byte
 * apart, a generated token's shape with and without '!', binary bytes, the longest
 * token and one byte more, nothing.
 */
function alphabet(): array {
    $x = 'c0ffee00c0ffee00c0ffee00c0ffee0f';
    return [
        ['job', 6], ['job!', 6], ['job!!', 3], ['jo', 3], ['jab', 2],
        [$x, 3], [$x . '!', 2], [substr($x, 0, 31) . 'e', 2], ['C0FFEE00C0FFEE00C0FFEE00C0FFEE0F!', 1],
        ["\0", 2], ["\xff\x00", 2], ["\xff\x01", 1],
        [str_repeat('t', 256), 2], [str_repeat('t', 255) . 'u', 1], [str_repeat('t', 257), 1], ['', 1],
    ];
}

function pick(array $weighted): mixed {
    $sum = array_sum(array_column($weighted, 1));
    $r = mt_rand(1, $sum);
    foreach ($weighted as [$v, $w]) { if (($r -= $w) <= 0) { return $v; } }
    return $weighted[0][0];
}

/** The spec an object is made from (client.php's SPEC), with the options of its kind. */
function spec_of(string $name, string $dsn): array {
    $c = CATALOG[$name];
    $opt = ['dsn' => $dsn, 'connect_timeout' => 5, 'read_timeout' => 5];
    if ($c['durable'] ?? false) { $opt += ['durable' => 1, 'durable_timeout' => 0.1]; }
    return $c[0] === 'Semaphore' ? [$c[0], $c[1], $c[2], (float) $c[3], (float) $c[4], $opt] : [$c[0], $c[1], (float) $c[2], (float) $c[3], $opt];
}

/** A token argument: the extension's own (null), one of the alphabet, or another object's, as it is or a byte off. */
function tok_arg(int $clients, bool $allowNull = true): array {
    $r = mt_rand(1, 100);
    if ($allowNull && $r <= 30) { return ['null']; }
    if ($r <= 78) { return ['lit' => bin2hex(pick(alphabet()))]; }
    $o = ['L0', 'L1', 'W0', 'W1', 'M', 'S', 'D0', 'E0'][mt_rand(0, 7)];
    return ['ref' => mt_rand(1, $clients) . "/$o", 'v' => pick([['same', 7], ['bang', 2], ['chop', 1]])];
}

/** A new lease for an extension: the object's own, longer, shorter, one that runs out at once, under 1 ms. */
function lease_arg(bool $shorter = false): array {
    return pick([[['null'], 3], [['num' => 60.0], $shorter ? 1 : 2], [['num' => 10.0], $shorter ? 3 : 2], [['num' => 0.5], $shorter ? 3 : 2], [['num' => 0.0004], 1]]);
}

/** The sequence of seed $seed: ['seed', 'variant', 'clients', 'ops']. */
function gen_plan(int $seed, string $variant): array {
    mt_srand($seed);
    if ($variant === 'auto') { $variant = $seed % 2 ? 'replica' : 'single'; }
    $n = 3;
    $kinds = [['write', 16], ['release', 14], ['read', 8], ['wait', 6], ['waitshort', 2], ['force', 3], ['extend', 8],
        ['owned', 3], ['multi', 6], ['sem', 5], ['short', 3]];
    if ($variant === 'replica') { $kinds = [...$kinds, ['durable', 20], ['freeze', 3], ['thaw', 2]]; }
    $ops = [];
    for ($i = 0, $len = mt_rand(20, 60); $i < $len; $i++) {
        $c = mt_rand(1, $n);
        $op = match (pick($kinds)) {
            'write' => (function () use ($n) {
                $o = pick([['L0', 3], ['L1', 3], ['W0', 1], ['W1', 1]]);
                return ['o' => $o, 'm' => $o[0] === 'L' && mt_rand(1, 4) === 1 ? 'addLock' : 'tryLock', 'a' => [tok_arg($n)]];
            })(),
            'release' => ['o' => pick([['L0', 3], ['L1', 3], ['W0', 2], ['W1', 2], ['E0', 1], ['T0', 1]]),
                'm' => pick([['releaseLock', 8], ['releaseLock1', 1], ['releaseLock2', 1]]), 'a' => mt_rand(0, 1) ? [] : [tok_arg($n, false)]],
            'read' => ['o' => pick([['L0', 2], ['L1', 2], ['W0', 1], ['W1', 1]]), 'm' => 'tryReadLock', 'a' => []],
            'wait' => ['o' => pick([['W0', 4], ['W1', 4], ['U0', 1], ['U1', 1]])] + (mt_rand(1, 10) <= 7 ? ['m' => 'addLock', 'a' => [tok_arg($n)]] : ['m' => 'addReadLock', 'a' => []]),
            'waitshort' => ['o' => 'T0'] + (mt_rand(0, 1) ? ['m' => 'addLock', 'a' => [tok_arg($n)]] : ['m' => 'addReadLock', 'a' => []]),
            'force' => ['o' => mt_rand(0, 1) ? 'L0' : 'L1', 'm' => 'forceReleaseLock', 'a' => []],
            'extend' => ['o' => pick([['L0', 2], ['L1', 2], ['W0', 1], ['W1', 1]]), 'm' => 'extendLock', 'a' => [tok_arg($n), lease_arg()]],
            'owned' => ['o' => pick([['L0', 1], ['L1', 1], ['W0', 1], ['W1', 1]]), 'm' => 'isOwned', 'a' => [tok_arg($n)]],
            'multi' => ['o' => 'M'] + pick([[['m' => 'tryLock', 'a' => [tok_arg($n)]], 4], [['m' => 'releaseLock', 'a' => mt_rand(0, 1) ? [] : [tok_arg($n, false)]], 3],
                [['m' => 'extendLock', 'a' => [tok_arg($n), lease_arg()]], 2], [['m' => 'isOwned', 'a' => [tok_arg($n)]], 1]]),
            'sem' => ['o' => 'S'] + pick([[['m' => 'tryAcquire', 'a' => [['int' => pick([[1, 4], [2, 2], [3, 1], [4, 1], [0, 1]])]]], 5],
                [['m' => 'release', 'a' => mt_rand(0, 1) ? [] : [tok_arg($n, false)]], 3], [['m' => 'extend', 'a' => [tok_arg($n), lease_arg()]], 2]]),
            'short' => ['o' => mt_rand(0, 1) ? 'E0' : 'E1'] + (mt_rand(1, 10) <= 7 ? ['m' => 'tryLock', 'a' => [tok_arg($n)]] : ['m' => 'tryReadLock', 'a' => []]),
            // Mostly one durable object per client, so that its acquisitions, the freezes and its extensions meet.
            'durable' => ['o' => mt_rand(1, 4) === 1 ? 'D1' : 'D0'] + pick([[['m' => 'tryLock', 'a' => [tok_arg($n)]], 4],
                [['m' => 'extendLock', 'a' => [mt_rand(0, 2) ? ['null'] : tok_arg($n), lease_arg(true)]], 4], [['m' => 'releaseLock', 'a' => []], 2]]),
            'freeze' => ['d' => 'freeze'],
            'thaw' => ['d' => 'thaw'],
        };
        $ops[] = isset($op['d']) ? $op : ['c' => $c] + $op;
    }
    return ['seed' => $seed, 'variant' => $variant, 'clients' => $n, 'ops' => $ops];
}

/** An object's constructor call, as PHP. */
function show_new(string $name): string {
    $c = CATALOG[$name];
    $args = $c[0] === 'MultiLock' ? [show($c[1]), $c[2], $c[3]] : ($c[0] === 'Semaphore' ? [show($c[1]), $c[2], $c[3], $c[4]] : [show($c[1]), $c[2], $c[3]]);
    if ($c['durable'] ?? false) { $args[] = "['durable' => 1, 'durable_timeout' => 0.1]"; }
    return "new {$c[0]}(" . implode(', ', $args) . ')';
}

/** One operation as a line: "c1: $L0 = new Lock('k0', 0, 30); $L0->tryLock('job!') => 'job!'". */
function show_op(array $op, array $args, array &$made, ?string $result): string {
    if (isset($op['d'])) { return $op['d'] === 'freeze' ? '-- the replica frozen (SIGSTOP)' : '-- the replica thawed (SIGCONT)'; }
    $oid = "{$op['c']}/{$op['o']}";
    $new = isset($made[$oid]) ? '' : "\${$op['o']} = " . show_new($op['o']) . '; ';
    $made[$oid] = true;
    $a = implode(', ', array_map(fn($x) => $x[1] ?? show($x[0]), $args));
    return "c{$op['c']}: $new\${$op['o']}->{$op['m']}($a)" . ($result === null ? '' : " => $result");
}

// --- values as PHP source (the model's messages use them too) ----------------------

function is_gen(mixed $v): bool { return is_string($v) && preg_match('/^[0-9a-f]{32}$/D', $v) === 1; }

/** A value as PHP source. */
function show(mixed $v): string {
    if (is_string($v)) {
        if ($v !== '' && strlen($v) > 40 && count_chars($v, 3) === $v[0]) { return "str_repeat('{$v[0]}', " . strlen($v) . ')'; }
        if (strlen($v) > 40 && count_chars(substr($v, 0, -1), 3) === $v[0]) { return "str_repeat('{$v[0]}', " . (strlen($v) - 1) . ") . '" . substr($v, -1) . "'"; }
        if (preg_match('/^[\x20-\x7e]*$/D', $v)) { return "'" . addcslashes($v, "'\\") . "'"; }
        return '"' . implode('', array_map(fn($c) => sprintf('\x%02x', ord($c)), str_split($v))) . '"';
    }
    if (is_array($v)) { return '[' . implode(', ', array_map(fn($k, $x) => (is_int($k) ? '' : "'$k' => ") . show($x), array_keys($v), $v)) . ']'; }
    if (is_float($v)) { return is_finite($v) ? (string) $v : 'INF'; }
    return var_export($v, true);
}

function show_obs(array $o): string {
    if (isset($o['x'])) { return "{$o['x']}(" . substr($o['msg'] ?? '', 0, 160) . ')'; }
    if (!empty($o['queued'])) { return 'queued (still waiting)'; }
    $late = ($o['elapsed'] ?? 0) >= 0.2 ? sprintf(' (after %.2f s)', $o['elapsed']) : '';
    return (array_key_exists('r', $o) ? show($o['r']) : json_encode($o)) . $late;
}

const FAMILY = ['LockConnectionException' => 'LockException', 'LockTimeoutException' => 'LockException', 'LockLostException' => 'LockException'];
function ex_is(string $cls, string $want): bool {
    for ($c = $cls; $c !== null; $c = FAMILY[$c] ?? null) { if ($c === $want) { return true; } }
    return false;
}

/** One or two tokens, each once (strictly: "10" and "1e1" are two). */
function both(?string $a, ?string $b): array { return $a === $b ? [$a] : [$a, $b]; }
