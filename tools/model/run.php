<?php
// The model test (tools/model/README.md): seeded random operations from 3 client
// processes against a real server, every answer compared with the reference model
// (model.php) step by step, failures shrunk to a shortest sequence.
//
// Usage:
//   MODEL_EXT=/path/to/libredis_lock.so php -n -d extension=posix tools/model/run.php
//       [--budget SECONDS] [--seed N] [--variant single|replica|auto] [--ops I,J,...]
//       [--keep-going] [--no-shrink] [--skip CHECK,...] [--verbose] [--legacy-token-args] [--async]
// --budget runs sequences from consecutive seeds (from --seed, else a random one)
// until the time is up; --seed alone runs that one sequence; --ops runs only those
// operations of it (a shrunk sequence). The server is $REDIS_LOCK_TEST_SERVER
// (redis or valkey)-server, a master with one replica, on free loopback ports.
// --legacy-token-args: the answers of a build before issue 56 (fb13692): an empty or
// 257-byte token given to release, extend or isOwned may answer as one that holds
// nothing, a chosen token of 32 hex digits and '!' may be refused, and a generated
// token held alone on a server with compare-and-delete may be stored with '!'.
// --async: every wait (addLock, addReadLock, a semaphore's acquire) is driven through
// its async twin's LockWait, as an event loop drives it (client.php), and judged by
// the same model.
declare(strict_types=1);

require_once __DIR__ . '/../../php-tests/_helper.inc';
require_once __DIR__ . '/model.php';
require_once __DIR__ . '/checks.php';
require_once __DIR__ . '/gen.php';
require_once __DIR__ . '/codec.php';

$opt = getopt('', ['budget:', 'seed:', 'variant:', 'ops:', 'keep-going', 'no-shrink', 'skip:', 'verbose', 'legacy-token-args', 'async', 'help']);
if (isset($opt['help'])) {
    foreach (array_slice(file(__FILE__, FILE_IGNORE_NEW_LINES), 1) as $l) { if (!str_starts_with($l, '//')) { break; } echo substr($l, 3), "\n"; }
    exit(0);
}
$root = dirname(__DIR__, 2);
$ext = getenv('MODEL_EXT') ?: "$root/target/release/libredis_lock.so";
if (!is_file($ext)) { fwrite(STDERR, "model: no extension at $ext (make build, or set MODEL_EXT)\n"); exit(2); }
$php = getenv('PHP') ?: PHP_BINARY;
$variant = $opt['variant'] ?? 'auto';
$skip = isset($opt['skip']) ? explode(',', $opt['skip']) : [];
$verbose = isset($opt['verbose']);
$tmp = sys_get_temp_dir() . '/rl-model-' . getmypid();
@mkdir($tmp);

function now(): float { return hrtime(true) / 1e9; }
/** An answer as the model reads it: ['r' => value] or ['x' => class, 'msg' => ...]. */
function answer(?array $a): array {
    if ($a === null) { return ['x' => 'NoAnswer', 'msg' => 'no answer in time']; }
    return isset($a['r']) || array_key_exists('r', $a) ? ['r' => dec($a['r'])] : $a;
}

/** A client process, driven over its pipes (client.php). */
final class Client {
    public $proc;
    public array $pipes = [];
    public int $pid;
    private string $buf = '';

    public function __construct(array $cmd, string $err) {
        $this->proc = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $err, 'a']], $this->pipes);
        if (!$this->proc) { throw new RuntimeException('a client did not start'); }
        stream_set_blocking($this->pipes[1], false);
        $this->pid = proc_get_status($this->proc)['pid'];
    }
    public function send(array $req): void { fwrite($this->pipes[0], json_encode($req) . "\n"); }
    /** The next answer, or null after $timeout seconds. */
    public function recv(float $timeout): ?array {
        $until = now() + $timeout;
        while (($p = strpos($this->buf, "\n")) === false) {
            $left = $until - now();
            if ($left <= 0) { return null; }
            $r = [$this->pipes[1]];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, (int) min(1e6, $left * 1e6)) > 0) {
                $d = fread($this->pipes[1], 1 << 16);
                if ($d === '' && feof($this->pipes[1])) { return ['x' => 'ClientDied', 'msg' => 'the client process ended']; }
                $this->buf .= (string) $d;
            }
        }
        $line = substr($this->buf, 0, $p);
        $this->buf = substr($this->buf, $p + 1);
        return json_decode($line, true);
    }
    public function call(string $o, array $spec, string $m, array $args = [], float $timeout = 30): array {
        $this->send(['op' => 'call', 'o' => $o, 'spec' => enc($spec), 'm' => $m, 'a' => array_map('enc', $args)]);
        return answer($this->recv($timeout));
    }
    public function kill(): void { @posix_kill($this->pid, SIGKILL); foreach ($this->pipes as $p) { @fclose($p); } @proc_close($this->proc); }
}

// --- servers ----------------------------------------------------------------------
[$master, $replica] = rl_start_pair();
$clientsLive = [];
$cleanup = function () use ($master, $replica, &$clientsLive, $tmp) {
    foreach ($clientsLive as $c) { $c->kill(); }
    @posix_kill($replica['pid'], SIGCONT);
    rl_stop_redis($replica);
    rl_stop_redis($master);
    foreach (glob("$tmp/*") ?: [] as $f) { @unlink($f); }
    @rmdir($tmp);
};
register_shutdown_function($cleanup);
if (function_exists('pcntl_async_signals')) {
    pcntl_async_signals(true);
    foreach ([SIGINT, SIGTERM] as $sig) { pcntl_signal($sig, function () { exit(130); }); }
}
try {
    rl_wait_synced($replica, microtime(true) + 10);
} catch (RuntimeException $e) {
    fwrite(STDERR, "model: the {$e->getMessage()}\n");
    exit(2);
}
// A raw connection to the master, behind the extension's back (replies as Resp::ask() gives them).
$raw = Resp::at('127.0.0.1', $master['port'], 5, 10);
$cad = rl_cad($master['dsn']) !== null;
$server = trim((string) shell_exec(rl_bin('server') . ' --version'));

require __DIR__ . '/runner.php';

// --- main -------------------------------------------------------------------------
$replayCmd = fn(int $seed, ?array $ops) => sprintf('MODEL_EXT=%s REDIS_LOCK_TEST_SERVER=%s php -n -d extension=posix tools/model/run.php --seed %d%s%s%s%s',
    escapeshellarg($ext), getenv('REDIS_LOCK_TEST_SERVER') ?: 'redis', $seed, $variant !== 'auto' ? " --variant $variant" : '',
    (isset($opt['legacy-token-args']) ? ' --legacy-token-args' : '') . (isset($opt['async']) ? ' --async' : ''), $skip ? ' --skip ' . escapeshellarg(implode(',', $skip)) : '', $ops !== null ? ' --ops ' . implode(',', $ops) : '');
$env = ['php' => $php, 'ext' => $ext, 'tmp' => $tmp, 'dsn' => $master['dsn'], 'raw' => $raw, 'cad' => $cad, 'replica' => $replica, 'skip' => $skip,
    'legacy' => isset($opt['legacy-token-args']), 'async' => isset($opt['async']), 'live' => &$clientsLive];

/** Reports a failed sequence: the failure, then its shrunk form. Returns its signature. */
$report = function (array $plan, array $res) use (&$env, $replayCmd, $opt): string {
    $f = $res['fail'];
    echo "\nFAILED: seed {$plan['seed']} ({$plan['variant']}), step {$f['step']}: [{$f['kind']}] {$f['msg']}\n";
    echo "  replay: " . $replayCmd($plan['seed'], $res['only']) . "\n";
    if (isset($opt['no-shrink'])) { foreach ($res['lines'] as $l) { echo "    $l\n"; } return $f['sig']; }
    $t = microtime(true);
    [$ops, $last, $runs] = shrink($plan, $res, $env);
    printf("  shrunk from %d to %d operations in %d runs (%.0f s); it fails the same check (%s) at the same operation (#%d):\n", count($res['only'] ?? $plan['ops']), count($ops), $runs, microtime(true) - $t, $f['sig'], $f['op']);
    foreach ($last['lines'] as $l) { echo "    $l\n"; }
    echo "  replay: " . $replayCmd($plan['seed'], $ops) . "\n";
    return $f['sig'];
};

if (isset($opt['seed']) && !isset($opt['budget'])) {
    $plan = gen_plan((int) $opt['seed'], $variant);
    $only = isset($opt['ops']) ? array_map('intval', explode(',', $opt['ops'])) : null;
    $res = run_plan($plan, $only, $env);
    echo "model: seed {$plan['seed']} ({$plan['variant']}, $server, $ext)\n";
    if (!$res['fail'] || $verbose) { foreach ($res['lines'] as $l) { echo "    $l\n"; } }
    if ($res['fail']) { isset($opt['ops']) ? printf("FAILED: [%s] %s\n", $res['fail']['kind'], $res['fail']['msg']) : $report($plan, $res); exit(1); }
    echo "passed\n";
    exit(0);
}

$budget = (float) ($opt['budget'] ?? 60);
$seed = (int) ($opt['seed'] ?? random_int(1, 999999));
$first = $seed;
$t0 = microtime(true);
$seqs = $steps = 0;
$failed = [];
echo "model: sequences from seed $seed for {$budget} s ($server, $ext)\n";
while (microtime(true) - $t0 < $budget) {
    $plan = gen_plan($seed, $variant);
    $res = run_plan($plan, null, $env);
    $seqs++;
    $steps += $res['steps'];
    if ($verbose) { printf("  seed %d (%s): %d ops, %s\n", $seed, $plan['variant'], $res['steps'], $res['fail'] ? 'FAILED' : 'ok'); }
    if ($res['fail'] && !in_array($res['fail']['sig'], $failed, true)) {
        $failed[] = $report($plan, $res);
        if (!isset($opt['keep-going'])) { break; }
    }
    $seed++;
}
printf("\nmodel: %d sequences (seeds %d to %d), %d operations in %.0f s: %s\n", $seqs, $first, $seed - ($failed && !isset($opt['keep-going']) ? 0 : 1), $steps,
    microtime(true) - $t0, $failed ? count($failed) . ' kind(s) of failure: ' . implode(', ', $failed) : 'no failure');
if (isset($opt['async'])) {
    // The path this run names must have run: waits driven through LockWait, some of them pending.
    $lines = @file("$tmp/async", FILE_IGNORE_NEW_LINES) ?: [];
    $pending = count(array_filter($lines, fn($l) => $l === 'pending'));
    printf("model: %d waits driven through LockWait, %d of them pending when started\n", count($lines), $pending);
    if ($pending === 0) { echo "model: FAILED: --async ran no pending wait\n"; exit(1); }
}
exit($failed ? 1 : 0);
