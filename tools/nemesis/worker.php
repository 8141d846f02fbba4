<?php
// One nemesis worker: a PHP process with the extension loaded, started by run.php
// (never by hand), that takes locks in a loop until the run's end and writes every
// operation as one JSON line to its own history part. Its argument is one JSON
// object (run.php's worker config):
//   id, seed, topology, workload, auto_renew, dsns (its proxies: one, or one per
//   Redlock node), sentinels or cluster (the sentinels, reached directly, or the
//   cluster's seeds, the nodes' proxies), thread (run as a
//   thread of the ZTS harness: `exit` ends only the thread), store (the fenced store's port), keys, lease, wait,
//   read_timeout, wait_replicas, durable and durable_timeout (0.1 s unless given),
//   fencing (false: the locks have 'fencing' => false and no
//   getFencingToken() is ever called; default true), t0 (the run's hrtime origin,
//   ns), end (ms from t0), out (path).
// Times are hrtime() (CLOCK_MONOTONIC, one clock for every process on the host),
// in ms from the run's origin. Each acquisition attempt has a number `n`, carried
// by every event of it (acquire-invoke, written as the call starts, so that the
// nemesis can tell a waiting worker; acquire, at its return; section-begin, store-write, extend, section-end,
// release), so that check.php can put a section together. A hold also writes
// `bound` events: how long it surely lasts by getRemainingLifetime(), sampled at
// its start, every 20 ms of its section (written when the bound moved) and before
// its release (the Bounds class). The process's redis_lock_stats() counters go to
// the history too (`stats` events: absolute values since the process started),
// every 2 s of its loop and at its end, so that a worker that dies still leaves
// what its last record counted (the paths its locks ran: check.php sums them).
declare(strict_types=1);

require_once __DIR__ . '/../lib/resp.php';   // the fenced store's client (Store)

$cfg = json_decode($argv[1] ?? '', true);
if (!is_array($cfg)) {
    fwrite(STDERR, "worker.php is started by run.php with one JSON argument\n");
    exit(2);
}

/** Milliseconds since the run's origin, on the host's monotonic clock. */
function now(): float {
    global $cfg;
    return round((hrtime(true) - $cfg['t0']) / 1e6, 3);
}

$out = fopen($cfg['out'], 'a');

/** Writes one history event; plain-file writes in PHP are not buffered, so a pause or a kill loses nothing written. */
function rec(array $event): void {
    global $cfg, $out;
    $line = json_encode(['w' => $cfg['id'], 'pid' => getmypid()] + $event, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION);
    fwrite($out, $line . "\n");
}

// synchronized() sends its release unawaited while the lease surely lasts; a loss that
// release finds (a server whose clock jumped, a failover) comes later, as an E_WARNING
// naming the lock during another call: the holder told, late (docs/safety.md,
// guarantee 2). It is recorded (`late-loss`), not printed: output is a crash, as is
// any other warning.
set_error_handler(function (int $no, string $msg): bool {
    if (!preg_match('/the [A-Za-z ]+? "([^"]+)" was found lost by the release that ended synchronized\(\)/', $msg, $m)) { return false; }
    rec(['op' => 'late-loss', 't0' => now(), 'key' => $m[1], 'text' => $msg]);
    return true;
}, E_WARNING);

/** An exception as "Class: message", the way the history and the checker name errors. */
function exc(Throwable $e): string {
    return get_class($e) . ': ' . $e->getMessage();
}

/** A short, stable name for a token (the history need not hold the token itself). */
function tok(?string $token): ?string {
    return $token === null ? null : substr(md5($token), 0, 10);
}

/**
 * The fenced store: a Redis that is never faulted, reached directly. Its script
 * accepts a write for a key only if the writer's fence number is at least the
 * last one it accepted for that key, and counts what it accepted and refused.
 */
final class Store {
    private ?Resp $conn = null;
    private const SCRIPT = <<<'LUA'
-- The fenced store's write.
-- KEYS[1]: the record of one lock key (a hash: fence, writer, accepted, refused, unfenced)
-- ARGV[1]: the writer's fence number, or "" for a holder without one (Redlock, a read or semaphore hold)
-- ARGV[2]: the writer's name (worker and attempt), kept as the last accepted writer
-- Returns {1 accepted | 0 refused | 2 unfenced, the last accepted fence before this write (-1: none)}
local last = tonumber(redis.call('HGET', KEYS[1], 'fence') or '-1')
if ARGV[1] == '' then
    redis.call('HINCRBY', KEYS[1], 'unfenced', 1)
    return {2, last}
end
local fence = tonumber(ARGV[1])
if fence >= last then
    redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'writer', ARGV[2])
    redis.call('HINCRBY', KEYS[1], 'accepted', 1)
    return {1, last}
end
redis.call('HINCRBY', KEYS[1], 'refused', 1)
return {0, last}
LUA;

    public function __construct(private int $port) {}

    /** [accepted (1/0/2), last fence] for a write by $writer with $fence on $key. */
    public function write(string $key, ?int $fence, string $writer): array {
        $reply = $this->call(['EVAL', self::SCRIPT, '1', "store:$key", $fence === null ? '' : (string) $fence, $writer]);
        if (!is_array($reply)) { throw new RuntimeException('fenced store: ' . var_export($reply, true)); }
        return $reply;
    }

    /** One command on the store's connection (opened at the first); a failure or an error reply thrown, named the store's. */
    private function call(array $args) {
        try {
            $this->conn ??= Resp::at('127.0.0.1', $this->port, 2, 5);
            return $this->conn->call(...$args);
        } catch (RuntimeException $e) {
            throw new RuntimeException('fenced store: ' . $e->getMessage(), 0, $e);
        }
    }
}

$store = new Store((int) $cfg['store']);
// Fencing on (the default, as every history before issue 56): every write hold asks
// for its number, which switches the process to eager fencing (every later
// acquisition takes its number in the same script). Off: the plain SET NX path, and
// the holds that can be taken alone (docs/performance.md) are released and renewed by
// the server's own compare-and-delete where it has one.
$fencing = (bool) ($cfg['fencing'] ?? true);
$opts = ['read_timeout' => (float) $cfg['read_timeout'], 'auto_renew' => (bool) $cfg['auto_renew'], 'fencing' => $fencing];
if (($cfg['wait_replicas'] ?? 0) > 0) { $opts['wait_replicas'] = (int) $cfg['wait_replicas']; }
if (($cfg['durable'] ?? 0) > 0) { $opts += ['durable' => (int) $cfg['durable'], 'durable_timeout' => (float) ($cfg['durable_timeout'] ?? 0.1)]; }
if ($cfg['cluster'] ?? []) {
    $opts['cluster'] = $cfg['cluster'];
} elseif ($cfg['sentinels']) {
    $opts += ['sentinels' => $cfg['sentinels'], 'service' => 'mymaster'];
} elseif (count($cfg['dsns']) > 1) {
    $opts['servers'] = $cfg['dsns'];
} else {
    $opts['dsn'] = $cfg['dsns'][0];
}
$lease = (float) $cfg['lease'];
$wait = (float) $cfg['wait'];
$workload = $cfg['workload'];
// The worker's own choices (keys, holds) come from the seed, so that a replay makes them again.
mt_srand((int) $cfg['seed'] * 1000 + (int) $cfg['id']);

/**
 * How long to hold, in seconds: mostly short (5–200 ms, so that the queue moves and
 * hand-overs are many), within the lease without the watchdog; with it, one hold in
 * five runs past the lease (1–2 leases), which only renewals keep.
 */
function hold_time(): float {
    global $cfg, $lease;
    if ($cfg['auto_renew'] && mt_rand(0, 4) === 0) { return mt_rand((int) (1000 * $lease), (int) (2000 * $lease)) / 1000; }
    return mt_rand(5, 200) / 1000;
}

/**
 * The bound samples of one hold: `bound` events {n, key, t0, until}, t0 being now()
 * read just before getRemainingLifetime() and until t0 + what it returned, in ms
 * (null for a lease that never ends). The first sample is always written, a later
 * one only when until moved by more than 1 ms from the last one written (a renewal
 * of the watchdog, an extendLock(), the hold found lost), except that once a written
 * sample said 0 (nothing held, or the bound passed), more zeros are not written: their
 * until is only their own t0, a promise of nothing. The call is the process's own
 * reckoning: no round trip. A MultiLock's samples are written once per key, with
 * each key's attempt number.
 */
final class Bounds {
    private bool $written = false;
    private ?float $last = null;
    private bool $lastZero = false;

    /** @param array<string, int> $ids key => attempt number */
    public function __construct(private Lock|Semaphore|MultiLock $holder, private array $ids) {}

    public function sample(): void {
        $t0 = now();
        $left = $this->holder->getRemainingLifetime();
        $until = is_infinite($left) ? null : round($t0 + $left * 1000, 3);
        if ($this->written && ($until === null || $this->last === null
            ? $until === $this->last : abs($until - $this->last) <= 1.0 || ($left <= 0.0 && $this->lastZero))) {
            return;
        }
        $this->written = true;
        $this->last = $until;
        $this->lastZero = $left <= 0.0;
        foreach ($this->ids as $key => $n) {
            rec(['op' => 'bound', 'n' => $n, 'key' => (string) $key, 't0' => $t0, 'until' => $until]);
        }
    }
}

/**
 * Sleeps $seconds inside a section, in slices of at most 20 ms with a bound sample
 * after each. The slices add up to $seconds of sleep (a pause of the process
 * lengthens the section as one usleep() did).
 */
function nap(float $seconds, ?Bounds $bounds): void {
    $left = (int) ($seconds * 1e6);
    if ($bounds === null) { usleep($left); return; }
    while ($left > 0) {
        $slice = min($left, 20000);
        usleep($slice);
        $left -= $slice;
        $bounds->sample();
    }
}

/**
 * The work inside a section: a fenced write at its start and its end, a hold
 * between them, and, for a plain mutex hold without the watchdog, sometimes an
 * extendLock() half-way that lets the hold run past the first lease.
 */
function section(int $n, string $key, ?int $fence, ?Lock $extendable, ?string $token, ?Bounds $bounds): void {
    global $store, $cfg, $lease;
    $writer = "w{$cfg['id']}#$n";
    rec(['op' => 'section-begin', 'n' => $n, 'key' => $key, 't0' => now()]);
    store_write($n, $key, $fence, $writer);
    $hold = hold_time();
    if ($extendable !== null && mt_rand(0, 3) === 0) {
        nap($hold / 2, $bounds);
        $t0 = now();
        try {
            $ok = $extendable->extendLock($token);
            rec(['op' => 'extend', 'n' => $n, 'key' => $key, 't0' => $t0, 't1' => now(), 'res' => 'ok', 'ret' => $ok]);
        } catch (LockException $e) {
            rec(['op' => 'extend', 'n' => $n, 'key' => $key, 't0' => $t0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e)]);
        }
        // Past the first lease, which the extension (if it held) renewed.
        nap($hold / 2 + mt_rand(0, (int) (500 * $lease)) / 1000, $bounds);
    } else {
        nap($hold, $bounds);
    }
    store_write($n, $key, $fence, $writer);
    rec(['op' => 'section-end', 'n' => $n, 'key' => $key, 't0' => now()]);
}

function store_write(int $n, string $key, ?int $fence, string $writer): void {
    global $store;
    $t0 = now();
    [$accepted, $last] = $store->write($key, $fence, $writer);
    rec(['op' => 'store-write', 'n' => $n, 'key' => $key, 't0' => $t0, 't1' => now(), 'fence' => $fence,
        'res' => [0 => 'refused', 1 => 'accepted', 2 => 'unfenced'][$accepted], 'last' => $last]);
}

/**
 * The fence of a hold just taken, with the time it was known; a LockException here
 * means the hold was already gone when asked (the first, lazy, ask of the process).
 */
function fence_of(Lock $lock, int $n, string $key): array {
    global $fencing;
    if (!$fencing) { return [null, now(), null]; }
    $t0 = now();
    try {
        $f = $lock->getFencingToken();
        return [$f, now(), null];
    } catch (LockException $e) {
        rec(['op' => 'fence', 'n' => $n, 'key' => $key, 't0' => $t0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e)]);
        return [null, now(), exc($e)];
    }
}

/**
 * The mutex (fair or not, caller-chosen token or not) and the shared lock's write and
 * read holds, by hand. $reused: the caller-chosen token is the worker's one token
 * for the whole run (the `reuse` workload), the same for every section on either key.
 */
function op_lock(int $n, string $key, string $mode, bool $fair, bool $callerToken, ?string $reused = null): void {
    global $opts, $wait, $lease, $cfg;
    $o = $opts + ($fair ? ['fair' => true] : []);
    $lock = new Lock($key, $wait, $lease, $o);
    $given = $reused ?? ($callerToken ? sprintf('w%d-s%d-n%d-%s', $cfg['id'], $cfg['seed'], $n, bin2hex(random_bytes(4))) : null);
    // The reuse workload's acquires say so, whatever their outcome.
    $tag = $reused !== null ? ['caller_token' => true, 'reused' => true] : [];
    $t0 = now();
    rec(['op' => 'acquire-invoke', 'n' => $n, 'key' => $key, 't0' => $t0]);
    try {
        $token = $mode === 'read' ? $lock->addReadLock() : ($given !== null ? $lock->addLock($given) : $lock->addLock());
    } catch (LockException $e) {
        rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => $mode, 't0' => $t0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e), 'lease' => $lease] + $tag);
        // An acquire that failed on the network may have taken the lock after all
        // (Redlock says so): the caller's cleanup clears what landed.
        $c0 = now();
        try {
            $r = $lock->releaseLock($given);
            rec(['op' => 'cleanup', 'n' => $n, 'key' => $key, 't0' => $c0, 't1' => now(), 'res' => 'ok', 'ret' => $r]);
        } catch (LockException $e) {
            rec(['op' => 'cleanup', 'n' => $n, 'key' => $key, 't0' => $c0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e)]);
        }
        return;
    }
    $t1 = now();
    if ($token === false) {
        rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => $mode, 't0' => $t0, 't1' => $t1, 'res' => 'fail', 'lease' => $lease] + $tag);
        return;
    }
    $bounds = new Bounds($lock, [$key => $n]);
    $bounds->sample();
    [$fence, $known, $fenceExc] = $mode === 'read' ? [null, $t1, null] : fence_of($lock, $n, $key);
    rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => $mode, 't0' => $t0, 't1' => $t1, 'res' => 'ok',
        'tok' => tok($token), 'fence' => $fence, 'fence_t' => $known, 'lease' => $lease, 'fair' => $fair, 'caller_token' => $callerToken] + $tag);
    if ($fenceExc === null) {
        section($n, $key, $fence, $mode === 'write' && !$cfg['auto_renew'] ? $lock : null, $given, $bounds);
    }
    $bounds->sample();
    $r0 = now();
    try {
        $ok = $lock->releaseLock($given);
        rec(['op' => 'release', 'n' => $n, 'key' => $key, 't0' => $r0, 't1' => now(), 'res' => 'ok', 'ret' => $ok]);
    } catch (LockException $e) {
        rec(['op' => 'release', 'n' => $n, 'key' => $key, 't0' => $r0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e)]);
    }
}

/** synchronized(): the acquire is the call up to the callable's start, the release from its end to the return. */
function op_synchronized(int $n, string $key): void {
    global $opts, $wait, $lease;
    $lock = new Lock($key, $wait, $lease, $opts);
    $t0 = now();
    rec(['op' => 'acquire-invoke', 'n' => $n, 'key' => $key, 't0' => $t0]);
    $begin = $end = null;
    try {
        $lock->synchronized(function () use ($lock, $n, $key, $t0, $lease, &$begin, &$end) {
            $begin = now();
            $bounds = new Bounds($lock, [$key => $n]);
            $bounds->sample();
            [$fence, $known, $fenceExc] = fence_of($lock, $n, $key);
            rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => 'write', 't0' => $t0, 't1' => $begin, 'res' => 'ok',
                'fence' => $fence, 'fence_t' => $known, 'lease' => $lease, 'sync' => true]);
            if ($fenceExc === null) { section($n, $key, $fence, null, null, $bounds); }
            // The release follows the callable's return.
            $bounds->sample();
            $end = now();
        });
        rec(['op' => 'release', 'n' => $n, 'key' => $key, 't0' => $end, 't1' => now(), 'res' => 'ok', 'ret' => true, 'sync' => true]);
    } catch (LockTimeoutException $e) {
        rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => 'write', 't0' => $t0, 't1' => now(), 'res' => 'fail', 'lease' => $lease, 'sync' => true]);
    } catch (LockException $e) {
        if ($begin === null) {
            rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => 'write', 't0' => $t0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e), 'lease' => $lease, 'sync' => true]);
        } else {
            rec(['op' => 'release', 'n' => $n, 'key' => $key, 't0' => $end ?? now(), 't1' => now(), 'res' => 'exc', 'exc' => exc($e), 'sync' => true]);
        }
    }
}

/**
 * A MultiLock over every key (k0 and k1: two Cluster slots, so two groups there). It is
 * recorded as one attempt per key, numbered n*10 + the key's place, so that the checker
 * judges each key's holders as it judges a Lock's: the same keys, queues and fences.
 */
function op_multi(int $n): void {
    global $opts, $wait, $lease, $cfg;
    $keys = $cfg['keys'];
    $ids = [];
    foreach ($keys as $j => $k) { $ids[$k] = $n * 10 + $j; }
    $multi = new MultiLock($keys, $wait, $lease, $opts);
    $t0 = now();
    foreach ($ids as $k => $id) { rec(['op' => 'acquire-invoke', 'n' => $id, 'key' => $k, 't0' => $t0]); }
    $each = function (string $op, array $extra) use ($ids, $lease) {
        foreach ($ids as $k => $id) { rec(['op' => $op, 'n' => $id, 'key' => $k] + $extra); }
    };
    try {
        $token = $multi->addLock();
    } catch (LockException $e) {
        $each('acquire', ['mode' => 'write', 't0' => $t0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e), 'lease' => $lease, 'multi' => true]);
        $c0 = now();
        try {
            $r = $multi->releaseLock();
            $each('cleanup', ['t0' => $c0, 't1' => now(), 'res' => 'ok', 'ret' => $r]);
        } catch (LockException $e) {
            $each('cleanup', ['t0' => $c0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e)]);
        }
        return;
    }
    $t1 = now();
    if ($token === false) {
        $each('acquire', ['mode' => 'write', 't0' => $t0, 't1' => $t1, 'res' => 'fail', 'lease' => $lease, 'multi' => true]);
        return;
    }
    $bounds = new Bounds($multi, $ids);
    $bounds->sample();
    $f0 = now();
    $fences = null;
    $fenceExc = null;
    try {
        $fences = $GLOBALS['fencing'] ? $multi->getFencingToken() : null;
    } catch (LockException $e) {
        $fenceExc = exc($e);
        $each('fence', ['t0' => $f0, 't1' => now(), 'res' => 'exc', 'exc' => $fenceExc]);
    }
    $known = now();
    foreach ($ids as $k => $id) {
        rec(['op' => 'acquire', 'n' => $id, 'key' => $k, 'mode' => 'write', 't0' => $t0, 't1' => $t1, 'res' => 'ok', 'tok' => tok($token),
            'fence' => $fences[$k] ?? null, 'fence_t' => $known, 'lease' => $lease, 'multi' => true]);
    }
    if ($fenceExc === null) {
        $writer = "w{$cfg['id']}#$n";
        $each('section-begin', ['t0' => now()]);
        foreach ($ids as $k => $id) { store_write($id, $k, $fences[$k] ?? null, $writer); }
        nap(hold_time(), $bounds);
        foreach ($ids as $k => $id) { store_write($id, $k, $fences[$k] ?? null, $writer); }
        $each('section-end', ['t0' => now()]);
    }
    $bounds->sample();
    $r0 = now();
    try {
        $ok = $multi->releaseLock();
        $each('release', ['t0' => $r0, 't1' => now(), 'res' => 'ok', 'ret' => $ok]);
    } catch (LockException $e) {
        $each('release', ['t0' => $r0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e)]);
    }
}

/** The Semaphore: 2 permits on a key of its own, holds of weight 1. */
function op_semaphore(int $n): void {
    global $opts, $wait, $lease;
    $key = 'sem';
    $sem = new Semaphore($key, 2, $wait, $lease, $opts);
    $t0 = now();
    rec(['op' => 'acquire-invoke', 'n' => $n, 'key' => $key, 't0' => $t0]);
    try {
        $token = $sem->acquire();
    } catch (LockException $e) {
        rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => 'sem', 't0' => $t0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e), 'lease' => $lease]);
        return;
    }
    $t1 = now();
    if ($token === false) {
        rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => 'sem', 't0' => $t0, 't1' => $t1, 'res' => 'fail', 'lease' => $lease]);
        return;
    }
    $bounds = new Bounds($sem, [$key => $n]);
    $bounds->sample();
    rec(['op' => 'acquire', 'n' => $n, 'key' => $key, 'mode' => 'sem', 't0' => $t0, 't1' => $t1, 'res' => 'ok', 'tok' => tok($token), 'lease' => $lease, 'permits' => 2]);
    section($n, $key, null, null, null, $bounds);
    $bounds->sample();
    $r0 = now();
    try {
        $ok = $sem->release($token);
        rec(['op' => 'release', 'n' => $n, 'key' => $key, 't0' => $r0, 't1' => now(), 'res' => 'ok', 'ret' => $ok]);
    } catch (LockException $e) {
        rec(['op' => 'release', 'n' => $n, 'key' => $key, 't0' => $r0, 't1' => now(), 'res' => 'exc', 'exc' => exc($e)]);
    }
}

/**
 * The process's redis_lock_stats() (absolute, since it started: threads of the ZTS
 * harness share one process's counters, and check.php takes each process's largest
 * figures), as a `stats` event.
 */
function stats_rec(bool $final): void {
    global $statsAt;
    $statsAt = now();
    if (!function_exists('redis_lock_stats')) { return; }
    rec(['op' => 'stats', 't0' => $statsAt, 'final' => $final, 'counts' => redis_lock_stats()]);
}
/** How often the counters are written, in ms of the worker's loop. */
const STATS_EVERY_MS = 2000.0;

rec(['op' => 'worker-start', 't0' => now(), 'workload' => $workload, 'auto_renew' => (bool) $cfg['auto_renew'], 'fencing' => $fencing]);
$statsAt = now();
$n = 0;
// The reuse workload's one token, for every section of the run on either key.
$reusedToken = sprintf('w%d-s%d-job', $cfg['id'], $cfg['seed']);
try {
    while (now() < $cfg['end']) {
        $n++;
        $key = $cfg['keys'][mt_rand(0, count($cfg['keys']) - 1)];
        switch ($workload) {
            case 'mutex': op_lock($n, $key, 'write', false, false); break;
            case 'fair': op_lock($n, $key, 'write', true, false); break;
            case 'token': op_lock($n, $key, 'write', false, true); break;
            case 'reuse': op_lock($n, $key, 'write', false, true, $reusedToken); break;
            case 'sync': op_synchronized($n, $key); break;
            case 'rw': op_lock($n, $key, mt_rand(0, 2) === 0 ? 'write' : 'read', false, false); break;
            case 'sem': op_semaphore($n); break;
            case 'multi': op_multi($n); break;
            default: throw new ValueError("unknown workload $workload");
        }
        // A little time between holds, so that a worker is not always in the queue.
        usleep(mt_rand(0, 40) * 1000);
        if (now() - $statsAt >= STATS_EVERY_MS) { stats_rec(false); }
    }
} catch (Throwable $e) {
    // Anything but the LockException family is a defect (of the extension or this
    // tool): recorded, and the worker exits non-zero so that the run fails.
    rec(['op' => 'worker-crash', 't0' => now(), 'exc' => exc($e), 'at' => $e->getFile() . ':' . $e->getLine()]);
    stats_rec(true);
    exit(70);
}
stats_rec(true);
rec(['op' => 'worker-done', 't0' => now(), 'ops' => $n]);
