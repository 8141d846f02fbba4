<?php
// The nemesis: the project's random-fault tester (issue 37). One run starts the
// servers of a topology, a fenced store, a fault proxy per worker (per node, on
// Redlock; one per node, every client's, on Sentinel and Cluster), and N worker
// processes (worker.php) that take locks in a loop; then, from a seeded schedule,
// it injects a fault every 0.2–0.8 s until 3 s before the end, and leaves the last
// 3 s quiet. Every operation and every fault goes to a
// history file (JSON lines) that check.php judges.
//
// Usage:
//   NEMESIS_EXT=/path/to/libredis_lock.so php -n -d extension=posix tools/nemesis/run.php \
//       --seed 7 --topology single --duration 30 --workers 6 [--faults partition,pause] \
//       [--workloads mutex,sync] [--resp3 | --no-resp3] [--out target/nemesis/single-7.jsonl]
//   php -n tools/nemesis/check.php target/nemesis/*.jsonl
// `make test-nemesis` (a short seeded run that fails on a violation) and `make nemesis`
// (several seeds on every topology, the table in bench/results/nemesis.md) run both.
//
// Topologies (--topology):
//   single            one redis-server, appendonly yes, appendfsync always
//   single-nopersist  one redis-server without persistence (a restart loses every key)
//   redlock           5 redis-servers (the `servers` option), each with AOF always
//   redlock-nopersist the same without persistence
//   sentinel          a master and a replica (AOF always on both), 3 sentinels (down after
//                     0.5 s); the workers find the master through the sentinels (reached
//                     directly); each node has a fault proxy of its own and announces it
//                     (replica-announce-ip/-port; the sentinels monitor the master at its
//                     proxy), so that the workers, the sentinels and the replica all
//                     reach a node through its proxy
//   sentinel2         issue 58's set: a master and two replicas (AOF always on each), 3
//                     sentinels (down after 0.5 s, failover-timeout 2 s), proxied as
//                     sentinel; the extension's default timeouts (read_timeout 0.5 s,
//                     durable_timeout 0.25 s) and the server's default
//                     repl-diskless-sync-delay (5 s; --sync-delay S sets another, kept
//                     by restarts); its default faults pause, stall and kill (the
//                     master SIGKILLed, restarted from its AOF 1–2.5 s later)
//   single-clock, redlock-clock, sentinel-clock
//                     single, redlock and sentinel with every lock server under the clock
//                     shim (tools/test/clockshift/: its wall clock moves by an offset), for
//                     the clock faults, which are their default faults (their others too)
//   cluster           a Redis Cluster of 3 masters and 3 replicas (AOF always, node
//                     timeout 1 s); each node has a fault proxy and announces it
//                     (cluster-announce-ip/-port; the bus, cluster-announce-bus-port, stays
//                     direct), so that the workers (the `cluster` seeds are the proxies),
//                     following CLUSTER SLOTS and MOVED, and the replicas reach a node
//                     through its proxy
// Faults (--faults, default: all of the topology's): each kind is a class of faults.php,
// where its comment says what it does (--help prints them), how it is planned from the
// seed, and how it is injected.
// Workloads (--workloads, one per worker, dealt from the seed): mutex, fair (`fair`),
// token (caller-chosen tokens), sync (synchronized() with the watchdog), rw (read and
// write holds of the shared lock), sem (a Semaphore of 2 permits on a key of its own),
// and, only when --workloads names it, multi (a MultiLock over both keys, two Cluster
// slots; recorded as one attempt per key, which the checker judges as a Lock's) and
// reuse (one caller-chosen token per worker, w<id>-s<seed>-job, for every section of
// the run on either key: addLock($token), extendLock($token), releaseLock($token)).
// Redlock runs mutex, token and sync (it refuses fair, shared locks and semaphores).
// Every other worker has `auto_renew` (sync always has it). Leases 0.5 s (sentinel-clock: 2 s), waits 1 s,
// read_timeout 0.2 s (sentinel2: 0.5 s, the default), fencing on (unless --fencing 0).
// Each hold writes `bound` events: getRemainingLifetime() sampled after the acquire,
// every 20 ms of its section when it moved, and before the release.
// RESP3 (single, single-nopersist, redlock, redlock-nopersist; the default is the
// extension's own connection, which says HELLO 3 when a waiter listens on it):
//   --resp3     the odd workers' dsns ask for RESP3 from the start (?protocol=resp3):
//               HELLO 3 at connect, and waits on that connection
//   --no-resp3  every proxy answers HELLO 3 with an error (`nohello`), as a server without
//               RESP3: waits use a subscriber connection of their own
// --wait-replicas N (sentinel, cluster): every worker's locks have `wait_replicas => N`:
// an acquisition waits (briefly) for N replicas to have it before it is used.
// --wait S: every acquire waits S s (default 1). With --faults failover and a wait
// longer than an election (the Cluster's node timeout is 1 s, an election about 2.5 s),
// every acquire must wait the election out: the checker fails the run on an acquire
// that threw, unless it waited its whole wait and an election was still on then.
// --durable N (sentinel, cluster): durable grants, `durable => N` (durable_timeout 0.1 s;
// sentinel2: 0.25 s, the default): an acquisition, a hand-over or a renewal counts only
// once N replicas have it.
// --watch (issue 58: where a durable wait's time goes): a watcher process (watch.php)
// polls every node's INFO replication and persistence and every sentinel's master
// (directly, not through the proxies) every 50 ms and writes each change (`repl`,
// `named` events); the workers run with REDIS_LOCK_TRACE, the extension's debug trace
// (src/trace.rs): each durable check (the node it reached, what WAIT counted, how
// long) and each master a sentinel named, as `trace` events. where.php reads them.
// Threads (--threads N): the last N workers are PHP threads in one process, the ZTS
// harness (harness/, `script` scenario: NEMESIS_HARNESS) with the module built for
// the ZTS PHP (NEMESIS_ZTS_EXT); `make test-zts` builds both. They share the module's
// per-process state (connections, the watchdog) as a threaded SAPI's requests do.
// Their partitions and resets are still each thread's own (a proxy each); a pause
// stops the whole process, so all its threads at once.
// --fencing 0: the workers' locks have 'fencing' => false and never ask for a number
// (getFencingToken()): holds are taken by the plain SET NX, so that a hold taken
// alone is released and renewed by the server's own compare-and-delete where it has
// one (Valkey 9, Redis 8.4); the store's writes are unfenced. Default 1 (as before:
// every write hold asks for its number, which makes the process fence eagerly).
// --keys N: N lock keys (k0 … kN-1; default 2, k0 and k1), each hold on one of them
// at random (a MultiLock over all of them): fewer holds meet a queue.
// --expect NAME=N[,NAME=N...]: what the run must exercise, at least N times each,
// written into the header; check.php fails the run when a path ran fewer times.
// The names: the redis_lock_stats() counters (cad_releases, cad_renewals, cad_kicks,
// durable_acks, not_durable, handed_over, renewals, lost, ...) summed over the
// workers, and on Redlock quorum_acquisitions and quorum_releases (acquisitions a
// majority took, releases a majority answered: from the history). check.php shows
// what ran in every run, asked or not (tools/nemesis/paths.php).
//
// The extension is NEMESIS_EXT (default: $PWD/target/release/libredis_lock.so); the
// runner itself does not load it. Every server and proxy it starts is stopped when it
// ends, however it ends (SIGINT and SIGTERM included); a stopped process is continued.
declare(strict_types=1);

require_once __DIR__ . '/../../php-tests/_helper.inc';
require_once __DIR__ . '/paths.php';
require_once __DIR__ . '/faults.php';

$opt = getopt('', ['seed:', 'topology:', 'duration:', 'workers:', 'threads:', 'faults:', 'workloads:', 'out:', 'quiet', 'help', 'resp3', 'no-resp3', 'wait-replicas:', 'durable:', 'wait:', 'fencing:', 'expect:', 'keys:', 'sync-delay:', 'watch']);
if (isset($opt['help'])) {
    // The comment at the top of this file.
    foreach (array_slice(file(__FILE__, FILE_IGNORE_NEW_LINES), 1) as $l) {
        if (!str_starts_with($l, '//')) { break; }
        echo substr($l, 3), "\n";
    }
    echo "\nThe faults:\n";
    foreach (array_unique(FAULT_KINDS) as $class) {
        $doc = (string) (new ReflectionClass($class))->getDocComment();
        $doc = preg_replace(['~^/\*\*|\*/$~', '~^\s*\* ?~m'], '', $doc);
        echo '  ', implode(', ', array_keys(FAULT_KINDS, $class)), ': ', trim(preg_replace('~\s+~', ' ', $doc)), "\n";
    }
    exit(0);
}
$seed = (int) ($opt['seed'] ?? 1);
$topology = $opt['topology'] ?? 'single';
$duration = (float) ($opt['duration'] ?? 30);
$nworkers = (int) ($opt['workers'] ?? 6);
$nthreads = (int) ($opt['threads'] ?? 0);
$quiet = isset($opt['quiet']);
$ext = getenv('NEMESIS_EXT') ?: getcwd() . '/target/release/libredis_lock.so';
$root = dirname(__DIR__, 2);
$out = $opt['out'] ?? "$root/target/nemesis/$topology-$seed.jsonl";

const TOPOLOGIES = [
    'single' => ['nodes' => 1, 'persist' => true, 'faults' => ['partition', 'pause', 'reset', 'stall', 'kill', 'pause-waiter'],
        'workloads' => ['mutex', 'fair', 'sync', 'token', 'rw', 'sem']],
    'single-nopersist' => ['nodes' => 1, 'persist' => false, 'faults' => ['partition', 'pause', 'reset', 'stall', 'kill', 'pause-waiter'],
        'workloads' => ['mutex', 'fair', 'sync', 'token', 'rw', 'sem']],
    'redlock' => ['nodes' => 5, 'persist' => true, 'faults' => ['partition', 'pause', 'reset', 'stall', 'kill'],
        'workloads' => ['mutex', 'sync', 'token']],
    'redlock-nopersist' => ['nodes' => 5, 'persist' => false, 'faults' => ['partition', 'pause', 'reset', 'stall', 'kill'],
        'workloads' => ['mutex', 'sync', 'token']],
    'sentinel' => ['nodes' => 2, 'persist' => true, 'sentinel' => true, 'faults' => ['pause', 'pause-waiter', 'stall', 'failover', 'partition', 'reset'],
        'workloads' => ['mutex', 'fair', 'sync', 'token', 'rw', 'sem']],
    // Issue 58's set: two replicas, the sentinels' failover-timeout 2 s, the extension's
    // default timeouts and the server's default wait before a diskless full sync.
    'sentinel2' => ['nodes' => 3, 'persist' => true, 'sentinel' => true, 'replicas' => 2, 'failover_timeout' => 2000,
        'read_timeout' => 0.5, 'durable_timeout' => 0.25, 'sync_delay' => 5, 'quiet' => 3.0,
        'faults' => ['pause', 'stall', 'kill', 'pause-waiter', 'failover', 'partition', 'reset'],
        'default_faults' => ['pause', 'stall', 'kill'], 'workloads' => ['mutex', 'fair', 'sync', 'token', 'rw', 'sem']],
    // Every lock server under the clock shim; by default only the clock faults.
    'single-clock' => ['nodes' => 1, 'persist' => true, 'clock' => true,
        'faults' => ['clock-forward', 'clock-back', 'partition', 'pause', 'reset', 'stall', 'kill', 'pause-waiter'],
        'default_faults' => ['clock-forward', 'clock-back'], 'workloads' => ['mutex', 'fair', 'sync', 'token', 'rw', 'sem']],
    'redlock-clock' => ['nodes' => 5, 'persist' => true, 'clock' => true,
        'faults' => ['clock-forward', 'clock-back', 'partition', 'pause', 'reset', 'stall', 'kill'],
        'default_faults' => ['clock-forward', 'clock-back'], 'workloads' => ['mutex', 'sync', 'token']],
    'sentinel-clock' => ['nodes' => 2, 'persist' => true, 'sentinel' => true, 'clock' => true,
        'faults' => ['clock-failover', 'clock-forward', 'clock-back', 'pause', 'pause-waiter', 'stall', 'failover', 'partition', 'reset'],
        'default_faults' => ['clock-failover'], 'workloads' => ['mutex', 'fair', 'sync', 'token', 'rw', 'sem'],
        // Leases that outlast a failover (about 1.5 s), so that holds live across it.
        'lease' => 2.0],
    'cluster' => ['nodes' => 6, 'persist' => true, 'cluster' => true, 'faults' => ['pause', 'pause-waiter', 'stall', 'failover', 'partition', 'reset'],
        'workloads' => ['mutex', 'fair', 'sync', 'token', 'rw', 'sem']],
];
const LEASE = 0.5;
const WAIT = 1.0;
const READ_TIMEOUT = 0.2;
// The workers' durable_timeout (--durable), where the topology does not say.
const DURABLE_TIMEOUT = 0.1;
// The quiet end of a run, in which every key must be taken again. Durable grants need
// a replica: after a failover while the old master lives, the sentinels make it one
// only about 8 s after it is back (a returned master is left alone for four publish
// periods), so those runs end with 12 s of quiet. sentinel2 keeps 3 s either way: a
// second replica follows the new master within a second or two, and a seed's plain and
// durable runs get the same schedule, so that their sections compare (issue 58).
define('QUIET', (TOPOLOGIES[$topology] ?? [])['quiet'] ?? ((int) ($opt['durable'] ?? 0) > 0 ? 12.0 : 3.0));
// The lock keys: k0 and k1, or --keys N of them (k0 … kN-1): more keys, less
// contention, so that more holds are taken with nobody queued (alone).
define('KEYS', array_map(fn($i) => "k$i", range(0, max(2, (int) ($opt['keys'] ?? 2)) - 1)));

/** $fn(), or null if it throws (for what a fault record only adds). */
function rescue(Closure $fn) {
    try { return $fn(); } catch (Throwable $e) { return null; }
}

function fail(string $msg): never {
    fwrite(STDERR, "nemesis: $msg\n");
    exit(2);
}

if (!isset(TOPOLOGIES[$topology])) { fail("unknown topology $topology (" . implode(', ', array_keys(TOPOLOGIES)) . ')'); }
$topo = TOPOLOGIES[$topology];
if (!is_file($ext)) { fail("no extension at $ext (make build, or set NEMESIS_EXT)"); }
if ($duration < QUIET + 2 || $duration > 600) { fail(sprintf('--duration must be %g to 600 seconds', QUIET + 2)); }
if ($nworkers < 1 || $nworkers > 16) { fail('--workers must be 1 to 16'); }
if ($nthreads < 0 || $nthreads > $nworkers) { fail('--threads must be 0 to --workers'); }
$harness = getenv('NEMESIS_HARNESS') ?: "$root/target/zts-harness/release/redis-lock-zts-harness";
$ztsExt = getenv('NEMESIS_ZTS_EXT') ?: "$root/target/zts/release/libredis_lock.so";
if ($nthreads > 0 && (!is_file($harness) || !is_file($ztsExt))) {
    fail("--threads needs the ZTS harness ($harness) and the module built for the ZTS PHP ($ztsExt): make test-zts builds both, or set NEMESIS_HARNESS and NEMESIS_ZTS_EXT");
}
/** Whether worker $w is a thread of the harness process. */
$isThread = fn(int $w): bool => $w >= $nworkers - $nthreads;
$faultKinds = isset($opt['faults']) ? explode(',', $opt['faults']) : ($topo['default_faults'] ?? $topo['faults']);
foreach ($faultKinds as $k) { if (!in_array($k, $topo['faults'], true)) { fail("unknown fault $k for $topology"); } }
$workloads = isset($opt['workloads']) ? explode(',', $opt['workloads']) : $topo['workloads'];
// multi (a MultiLock over every key) and reuse (one caller-chosen token per worker)
// run on every topology, when asked for: the default deals stay as they were, so
// that a seed replays as before.
foreach ($workloads as $w) { if (!in_array($w, [...$topo['workloads'], 'multi', 'reuse'], true)) { fail("workload $w is not run on $topology"); } }
// RESP3: the extension's own choice (native), RESP3 from the start for the odd
// workers (half), or proxies that refuse HELLO 3 (none).
if (isset($opt['resp3']) && isset($opt['no-resp3'])) { fail('--resp3 and --no-resp3 exclude each other'); }
$resp3 = isset($opt['resp3']) ? 'half' : (isset($opt['no-resp3']) ? 'none' : 'native');
if ($resp3 !== 'native' && (($topo['sentinel'] ?? false) || ($topo['cluster'] ?? false))) {
    fail('--' . (isset($opt['resp3']) ? 'resp3' : 'no-resp3') . " needs the workers' own dsns (single, single-nopersist, redlock, redlock-nopersist): on $topology the sentinels or the cluster name the nodes");
}
$mix = (isset($opt['faults']) || isset($topo['default_faults']) ? implode('+', $faultKinds) : 'all') . (isset($opt['workloads']) ? ' (' . implode(', ', $workloads) . ')' : '');
if ($nthreads > 0) { $mix .= ", $nthreads of $nworkers workers threads"; }
$waitReplicas = (int) ($opt['wait-replicas'] ?? 0);
if ($waitReplicas < 0 || $waitReplicas > 5) { fail('--wait-replicas must be 0 to 5'); }
if ($waitReplicas > 0 && !(($topo['sentinel'] ?? false) || ($topo['cluster'] ?? false))) { fail('--wait-replicas needs replicas: sentinel or cluster'); }
if ($waitReplicas > 0) { $mix .= ", wait_replicas $waitReplicas"; }
$wait = (float) ($opt['wait'] ?? WAIT);
if ($wait < 0.1 || $wait > 30) { fail('--wait must be 0.1 to 30 s'); }
if (isset($opt['wait'])) { $mix .= sprintf(', wait %g s', $wait); }
// Elections alone, waited out: no acquire may throw.
$electionsWaited = $faultKinds === ['failover'] && $wait >= 4.0;
$durable = (int) ($opt['durable'] ?? 0);
if ($durable < 0 || $durable > 5) { fail('--durable must be 0 to 5'); }
if ($durable > 0 && !(($topo['sentinel'] ?? false) || ($topo['cluster'] ?? false))) { fail('--durable needs replicas: sentinel or cluster'); }
if ($durable > 0) { $mix .= ", durable $durable"; }
// Fencing off names itself in the mix, so that such runs make rows of their own.
$fencingOpt = $opt['fencing'] ?? '1';
if (!in_array($fencingOpt, ['0', '1'], true)) { fail('--fencing must be 0 or 1'); }
$fencing = $fencingOpt === '1';
if (!$fencing) { $mix .= ', no fencing'; }
// The replicas' wait before a diskless full sync (repl-diskless-sync-delay): the
// topology's (sentinel: 0 at the start, and a failover's restart), or --sync-delay S.
$syncDelay = isset($opt['sync-delay']) ? (int) $opt['sync-delay'] : ($topo['sync_delay'] ?? null);
if ($syncDelay !== null && ($syncDelay < 0 || $syncDelay > 60)) { fail('--sync-delay must be 0 to 60 s'); }
if (isset($opt['sync-delay']) && !($topo['sentinel'] ?? false)) { fail('--sync-delay needs sentinel or sentinel2'); }
if (isset($opt['sync-delay'])) { $mix .= ", sync delay $syncDelay s"; }
$watch = isset($opt['watch']);
if ($watch && !($topo['sentinel'] ?? false)) { fail('--watch needs sentinel or sentinel2'); }
$readTimeout = $topo['read_timeout'] ?? READ_TIMEOUT;
$durableTimeout = $topo['durable_timeout'] ?? DURABLE_TIMEOUT;
if (isset($opt['keys']) && ((int) $opt['keys'] < 2 || (int) $opt['keys'] > 16)) { fail('--keys must be 2 to 16'); }
if (count(KEYS) !== 2) { $mix .= ', ' . count(KEYS) . ' keys'; }
$expect = paths_parse_expect($opt['expect'] ?? '');
if (is_string($expect)) { fail("--expect: $expect"); }
if ($resp3 === 'half') { $mix .= ', resp3 dsn on half'; }
if ($resp3 === 'none') { $mix .= ', proxy without RESP3'; }

// Everything chosen from the seed is chosen here, before anything runs: the
// workers' workloads and the fault schedule. A replay makes the same choices.
mt_srand($seed);
$deal = $workloads;
shuffle($deal);
$workerCfg = [];
for ($i = 0; $i < $nworkers; $i++) {
    $wl = $deal[$i % count($deal)];
    // Half the workers have the watchdog; synchronized() always has it.
    $workerCfg[$i] = ['workload' => $wl, 'auto_renew' => $wl === 'sync' || $i % 2 === 1];
    if ($resp3 === 'half') { $workerCfg[$i]['resp3_dsn'] = $i % 2 === 1; }
}

/** One fault kind, each as likely. */
function pick(array $kinds): string {
    return $kinds[mt_rand(0, count($kinds) - 1)];
}

/**
 * The node of a partition or reset on Sentinel or Cluster (a node's proxy, every
 * client's): on Sentinel the master of the moment or a given node (whichever role
 * it has by then), on the Cluster the master of one of the keys, found when the
 * fault comes.
 */

/**
 * The fault schedule: a fault every 0.2–0.8 s from 0.5 s to (duration − 3) s, each
 * ended by then. A fault whose target is still under a fault of its own kind is
 * left out (a stopped process cannot be stopped twice; a restarting server cannot
 * be stalled), so that each fault's end is its own.
 */
function schedule(array $kinds, float $duration, int $nworkers, Plan $plan): array {
    $faults = [];
    $busy = [];  // target => busy until
    $lastEnd = $duration - QUIET;
    for ($t = 0.5 + mt_rand(200, 800) / 1000; $t < $lastEnd - 0.1; $t += mt_rand(200, 800) / 1000) {
        $kind = pick($kinds);
        $w = mt_rand(0, $nworkers - 1);
        $fault = fault($kind);
        [$f, $targets] = $fault->plan($plan, $kind, $w);
        // Each fault ends by duration − 3 s; a restart takes up to about a second, and
        // the sentinels settle a failover (or a long stall) within about two more.
        $reserve = $fault->reserve();
        if ($t + $reserve > $lastEnd || $fault->whole($plan) && $t + $f['len'] + $reserve > $lastEnd) { continue; }
        if ($t + $f['len'] + $reserve > $lastEnd) { $f['len'] = max(0.0, $lastEnd - $reserve - $t); }
        $len = $f['len'];
        $settle = $fault->settle($plan);
        $reserve += $settle;
        $free = true;
        foreach ($targets as $tg) { if (($busy[$tg] ?? 0) > $t) { $free = false; } }
        if (!$free) { continue; }
        foreach ($targets as $tg) { $busy[$tg] = $t + $len + $reserve; }
        $faults[] = ['at' => round($t, 3)] + $f;
    }
    return $faults;
}
$sentinel = $topo['sentinel'] ?? false;
$cluster = $topo['cluster'] ?? false;
$schedule = schedule($faultKinds, $duration, $nworkers, new Plan($topo['nodes'], $sentinel, $cluster, $isThread));

// --- what runs, and its cleanup -------------------------------------------------
$nodes = [];        // the lock servers (rl_start_redis arrays)
$sentinels = [];    // the sentinels (rl_start_redis arrays), on the sentinel topology
$store = null;      // the fenced store
$proxies = [];      // [worker][node] => rl_fault_proxy array
$nodeProxies = [];  // [node] => rl_fault_proxy array: on Sentinel and Cluster, the one every client reaches the node through
$procs = [];        // worker => ['proc' =>, 'pid' =>]
$watcher = null;    // --watch: the watcher process (proc_open)
$stopped = [];      // pid => true: stopped by us, to continue in the cleanup
$cleaned = false;
$cleanup = function () use (&$nodes, &$sentinels, &$store, &$proxies, &$nodeProxies, &$procs, &$stopped, &$cleaned, &$watcher) {
    if ($cleaned) { return; }
    $cleaned = true;
    if (is_resource($watcher)) { proc_terminate($watcher, SIGKILL); proc_close($watcher); }
    foreach (array_keys($stopped) as $pid) { @posix_kill($pid, SIGCONT); }
    foreach ($procs as $p) {
        if (is_resource($p['proc']) && proc_get_status($p['proc'])['running']) { @posix_kill($p['pid'], SIGKILL); }
    }
    foreach ($proxies as $row) { foreach ($row as $px) { rl_stop_proxy($px); } }
    foreach ($nodeProxies as $px) { rl_stop_proxy($px); }
    foreach ($sentinels as $n) { rl_stop_redis($n); }
    foreach ($nodes as $n) { rl_stop_redis($n); }
    if ($store) { rl_stop_redis($store); }
};
register_shutdown_function($cleanup);
pcntl_async_signals(true);
foreach ([SIGINT, SIGTERM, SIGHUP] as $sig) {
    pcntl_signal($sig, function () use ($cleanup) { $cleanup(); exit(130); });
}

// The fenced store first: the lock servers alone run under the clock shim, when the
// topology has it (rl_start_redis() starts them under it, restarts included).
$store = rl_start_redis();
if ($topo['clock'] ?? false) { putenv('REDIS_LOCK_TEST_CLOCKSHIFT=' . rl_clockshift()); }
$persistArgs = $topo['persist'] ? ['--appendonly', 'yes', '--appendfsync', 'always'] : [];
$nodeArgs = [];  // node => the arguments it restarts with, beyond $persistArgs
if ($cluster) {
    // Each node behind a proxy of its own, which it announces (the bus stays direct).
    $set = rl_start_cluster(proxied: true);
    $nodes = $set['nodes'];
    $nodeProxies = $set['proxies'];
    foreach ($nodes as $i => $n) {
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'appendonly', 'yes');
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'appendfsync', 'always');
        // A restart keeps its identity (nodes.conf in its folder), its bus port and its
        // proxy (cluster-announce-*).
        $nodeArgs[$i] = $set['args'][$i];
    }
} elseif ($sentinel) {
    // Each node behind a proxy of its own, which it announces; the sentinels monitor the master there.
    $set = rl_start_sentinel_set(proxied: true, replicas: $topo['replicas'] ?? 1, failoverTimeoutMs: $topo['failover_timeout'] ?? 3000);
    $nodes = [$set['master'], ...$set['replicas']];
    $nodeProxies = $set['proxies'];
    $sentinels = $set['sentinels'];
    foreach ($nodeProxies as $i => $px) {
        // A restart keeps its proxy, and the run's wait before a full sync where it sets one.
        $nodeArgs[$i] = array_merge(rl_proxied_replica_args($px), $syncDelay === null ? [] : ['--repl-diskless-sync-delay', (string) $syncDelay]);
    }
    // The helper starts them without persistence; a restart must find its AOF.
    // Any may become the master and have to sync a restarted node: on sentinel at
    // once, not after the default 5 s wait for more replicas (sentinel2: the server's
    // default, or --sync-delay).
    foreach ($nodes as $n) {
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'appendonly', 'yes');
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'appendfsync', 'always');
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'repl-diskless-sync-delay', (string) ($syncDelay ?? 0));
    }
} else {
    $nodes = rl_start_many($topo['nodes'], $persistArgs);
}
// sentinel-clock: the replica starts as far ahead as the first clock-failover has it.
foreach ($schedule as $f) {
    if ($f['kind'] === 'clock-failover') { rl_clock_set($nodes[1], $f['ahead']); break; }
}
for ($w = 0; $w < $nworkers; $w++) {
    $proxies[$w] = [];
    if ($sentinel || $cluster) { continue; }
    for ($i = 0; $i < $topo['nodes']; $i++) {
        $proxies[$w][$i] = rl_fault_proxy($nodes[$i]['port']);
        // --no-resp3: a server without RESP3, as the workers see it.
        if ($resp3 === 'none') { rl_proxy($proxies[$w][$i], 'nohello'); }
    }
}

/** The index in $nodes of the master the sentinels name now (the first sentinel that answers), at its proxy. */
$masterNow = function () use (&$nodes, &$sentinels, &$nodeProxies): int {
    foreach ($sentinels as $s) {
        $addr = rl_poll($s['dsn'], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster');
        if (!is_array($addr)) { continue; }
        foreach ($nodes as $i => $n) { if (($nodeProxies[$i]['port'] ?? $n['port']) === (int) $addr[1]) { return $i; } }
    }
    throw new RuntimeException('no sentinel names a master');
};

/** The index in $nodes of the cluster master that serves $key now, asked of a node that answers (CLUSTER SLOTS names its proxy). */
$clusterMasterOf = function (string $key) use (&$nodes, &$stopped, &$nodeProxies): int {
    foreach ($nodes as $n) {
        if (isset($stopped[$n['pid']])) { continue; }
        try {
            $dsn = @rl_cluster_master_of($n['dsn'], $key);  // @: a node killed meanwhile refuses
        } catch (Throwable $e) {
            continue;  // killed, or restarting
        }
        foreach ($nodes as $i => $m) { if (($nodeProxies[$i]['dsn'] ?? $m['dsn']) === $dsn) { return $i; } }
    }
    throw new RuntimeException("no cluster node names the master of $key");
};

@mkdir(dirname($out), 0777, true);
$partsDir = "$out.parts";
@mkdir($partsDir);
foreach (glob("$partsDir/*") as $f) { unlink($f); }

$replay = sprintf('NEMESIS_EXT=%s%s php -n -d extension=posix tools/nemesis/run.php --seed %d --topology %s --duration %s --workers %d%s%s%s%s',
    escapeshellarg($ext), $nthreads ? ' NEMESIS_ZTS_EXT=' . escapeshellarg($ztsExt) . ' NEMESIS_HARNESS=' . escapeshellarg($harness) : '',
    $seed, $topology, $duration, $nworkers, $nthreads ? " --threads $nthreads" : '',
    isset($opt['faults']) ? ' --faults ' . $opt['faults'] : '', isset($opt['workloads']) ? ' --workloads ' . $opt['workloads'] : '',
    ['native' => '', 'half' => ' --resp3', 'none' => ' --no-resp3'][$resp3] . ($waitReplicas ? " --wait-replicas $waitReplicas" : '') . ($durable ? " --durable $durable" : '') . (isset($opt['wait']) ? " --wait $wait" : '')
    . (isset($opt['sync-delay']) ? " --sync-delay $syncDelay" : '') . ($watch ? ' --watch' : '')
    . ($fencing ? '' : ' --fencing 0') . (count(KEYS) !== 2 ? ' --keys ' . count(KEYS) : '') . ($expect ? ' --expect ' . paths_expect_text($expect, ',') : ''));
$header = ['type' => 'run', 'seed' => $seed, 'topology' => $topology, 'mix' => $mix, 'faults' => $faultKinds,
    'duration' => $duration, 'quiet' => QUIET, 'workers' => $nworkers, 'threads' => $nthreads, 'keys' => KEYS, 'lease' => $topo['lease'] ?? LEASE, 'wait' => $wait, 'elections_waited' => $electionsWaited,
    'read_timeout' => $readTimeout, 'persist' => $topo['persist'], 'nodes' => $topo['nodes'], 'sentinel' => $sentinel,
    // Whether holds carry fencing numbers: where the lock issues them, unless --fencing 0.
    'fenced' => $fencing && ($topo['nodes'] === 1 || $sentinel || $cluster), 'cluster' => $cluster, 'fencing' => $fencing,
    // Fences may go back only where the counter can be lost: no persistence, or a
    // failover to a replica that missed it (replication is asynchronous).
    'strict_fences' => $fencing && $topo['nodes'] === 1 && $topo['persist'],
    // What the run must exercise (--expect): path => the least number of times.
    'expect' => (object) $expect,
    'ext' => $ext, 'ext_md5' => md5_file($ext), 'php' => PHP_VERSION,
    'zts_ext' => $nthreads ? $ztsExt : null, 'zts_ext_md5' => $nthreads ? md5_file($ztsExt) : null, 'redis' => trim((string) shell_exec(rl_bin('server') . ' --version')),
    'git' => trim((string) shell_exec('git -C ' . escapeshellarg($root) . ' rev-parse --short HEAD 2>/dev/null')),
    // bound events (getRemainingLifetime() samples) in every hold; how the workers speak RESP3.
    'bounds' => true, 'resp3' => $resp3, 'wait_replicas' => $waitReplicas, 'durable' => $durable,
    'durable_timeout' => $durable ? $durableTimeout : null,
    // Sentinel: the replicas' wait before a diskless full sync (null: the server's
    // default), the sentinels' failover-timeout, and whether the run was watched (--watch).
    'sync_delay' => $sentinel ? $syncDelay ?? 0 : null, 'failover_timeout' => $sentinel ? $topo['failover_timeout'] ?? 3000 : null, 'watch' => $watch,
    // --watch: each node's own port and its proxy's (what the sentinels, the replicas and the trace name).
    'ports' => $watch ? array_map(fn($i) => ['port' => $nodes[$i]['port'], 'proxy' => $nodeProxies[$i]['port']], array_keys($nodes)) : null,
    // The lock servers' wall clocks can move (the clock shim), and by how much each starts off.
    'clock' => $topo['clock'] ?? false, 'clock_offsets' => ($topo['clock'] ?? false) ? array_map('rl_clock_offset', $nodes) : null,
    // On Sentinel and Cluster each node has one proxy, every client's: partitions and resets are a node's.
    'node_proxies' => $sentinel || $cluster,
    'started' => date('c'), 'load' => sys_getloadavg(), 'replay' => $replay, 'assign' => $workerCfg, 'schedule' => $schedule];

$t0 = hrtime(true);
$nowMs = fn(): float => round((hrtime(true) - $t0) / 1e6, 3);
$endMs = $duration * 1000;
if ($watch) {
    // The extension's debug trace, every worker's in one file (a line is one write).
    putenv("REDIS_LOCK_TRACE=$partsDir/trace.jsonl");
    $wcfg = ['t0' => $t0, 'out' => "$partsDir/repl.jsonl",
        'nodes' => array_map(fn($i) => ['port' => $nodes[$i]['port'], 'proxy' => $nodeProxies[$i]['port']], array_keys($nodes)),
        'sentinels' => array_column($sentinels, 'port')];
    $watcher = proc_open([PHP_BINARY, '-n', __DIR__ . '/watch.php', json_encode($wcfg)],
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$partsDir/watch.out", 'w'], 2 => ['file', "$partsDir/watch.out", 'a']], $pipes);
    if (!$watcher) { fail('the watcher did not start'); }
}
$threadArgs = [];
for ($w = 0; $w < $nworkers; $w++) {
    $cfg = ['id' => $w, 'seed' => $seed, 'topology' => $topology, 'workload' => $workerCfg[$w]['workload'],
        // --resp3: the odd workers ask for RESP3 from the start (HELLO 3 at connect).
        'auto_renew' => $workerCfg[$w]['auto_renew'],
        'dsns' => array_map(fn($p) => $p['dsn'] . ($resp3 === 'half' && $w % 2 === 1 ? '?protocol=resp3' : ''), $proxies[$w]),
        'sentinels' => array_map(fn($s) => $s['dsn'], $sentinels),
        'cluster' => $cluster ? array_column($nodeProxies, 'dsn') : [],
        'store' => $store['port'], 'keys' => KEYS, 'lease' => $topo['lease'] ?? LEASE, 'wait' => $wait, 'read_timeout' => $readTimeout, 'wait_replicas' => $waitReplicas, 'durable' => $durable, 'durable_timeout' => $durableTimeout,
        'fencing' => $fencing, 't0' => $t0, 'end' => $endMs, 'out' => "$partsDir/w$w.jsonl", 'thread' => $isThread($w)];
    if ($isThread($w)) { $threadArgs[$w] = json_encode($cfg); continue; }
    $cmd = [PHP_BINARY, '-n', '-d', 'extension=posix', '-d', "extension=$ext", __DIR__ . '/worker.php', json_encode($cfg)];
    $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$partsDir/w$w.stdout", 'w'], 2 => ['file', "$partsDir/w$w.stderr", 'w']], $pipes);
    if (!$proc) { fail("worker $w did not start"); }
    $procs[$w] = ['proc' => $proc, 'pid' => proc_get_status($proc)['pid']];
}
if ($threadArgs) {
    // One process, a PHP thread per worker, in the order of the lines.
    file_put_contents("$partsDir/threads.args", implode("\n", $threadArgs) . "\n");
    $env = getenv() + ['SCRIPT' => __DIR__ . '/worker.php', 'ARGS' => "$partsDir/threads.args", 'REDIS_LOCK_TEST_DSN' => $store['dsn']];
    $proc = proc_open([$harness, $ztsExt, 'script'], [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$partsDir/threads.stdout", 'w'],
        2 => ['file', "$partsDir/threads.stderr", 'w']], $pipes, null, $env);
    if (!$proc) { fail('the ZTS harness did not start'); }
    $shared = ['proc' => $proc, 'pid' => proc_get_status($proc)['pid'], 'threads' => array_keys($threadArgs)];
    foreach (array_keys($threadArgs) as $w) { $procs[$w] = $shared; }
}

// --- the nemesis ----------------------------------------------------------------
/**
 * The workers waiting in an acquire now: those whose last history line is an
 * acquire-invoke. The parts are read from where the last call stopped.
 */
$offsets = [];
$lastOp = [];
$waiting = function () use (&$offsets, &$lastOp, $partsDir, $nworkers): array {
    for ($w = 0; $w < $nworkers; $w++) {
        $h = @fopen("$partsDir/w$w.jsonl", 'r');
        if (!$h) { continue; }
        fseek($h, $offsets[$w] ?? 0);
        while (($l = fgets($h)) !== false) {
            if (!str_ends_with($l, "\n")) { break; }  // a line still being written
            $offsets[$w] = ftell($h);
            if (preg_match('/"op":"([a-z-]+)"/', $l, $m)) { $lastOp[$w] = $m[1]; }
        }
        fclose($h);
    }
    return array_keys(array_filter($lastOp, fn($op) => $op === 'acquire-invoke'));
};
/** Sleeps until $ms after the run's origin. */
$sleepUntil = function (float $ms) use ($nowMs) {
    $left = $ms - $nowMs();
    if ($left > 0) { usleep((int) ($left * 1000)); }
};
// What the faults reach, by reference: a restarted node's entry is replaced for the
// cleanup too, and a process a fault stopped is continued by it.
$run = new Run($nowMs, $masterNow, $clusterMasterOf, $waiting, $persistArgs, $nodeArgs, $schedule, $sentinel, $cluster);
$run->nodes = &$nodes;
$run->proxies = &$proxies;
$run->nodeProxies = &$nodeProxies;
$run->procs = &$procs;
$run->stopped = &$stopped;
$run->faultLog = [];
foreach ($schedule as $idx => $f) {
    fault($f['kind'])->inject(new Injection($run, $f, $idx));
}
$events = $run->events;
$faultLog = &$run->faultLog;
usort($events, fn($a, $b) => [$a[0], $a[1]] <=> [$b[0], $b[1]]);
foreach ($events as [$at, , $fn]) {
    $sleepUntil($at);
    try {
        $fn();
    } catch (Throwable $e) {
        $faultLog[] = ['op' => 'nemesis-error', 't0' => $nowMs(), 'exc' => get_class($e) . ': ' . $e->getMessage()];
    }
}
$lastFault = $nowMs();
$sleepUntil($endMs);

// --- the end: workers stop on their own at the end; a worker still running 10 s after it is stuck.
$exits = [];
$deadline = microtime(true) + 10;
$waited = [];  // pid => [stuck, status]: the harness's threads share one process
foreach ($procs as $w => $p) {
    if (!isset($waited[$p['pid']])) {
        while (($st = proc_get_status($p['proc']))['running'] && microtime(true) < $deadline) { usleep(20000); }
        $stuck = $st['running'];
        if ($stuck) {
            @posix_kill($p['pid'], SIGKILL);
            while (proc_get_status($p['proc'])['running']) { usleep(10000); }
        }
        $waited[$p['pid']] = [$stuck, $st];
        proc_close($p['proc']);
    }
    [$stuck, $st] = $waited[$p['pid']];
    $code = $stuck ? null : $st['exitcode'];
    $signal = !$stuck && $st['signaled'] ? $st['termsig'] : null;
    if (isset($p['threads'])) {
        // The harness's report: "thread I: ended|failed", then what it printed, indented.
        $report = (string) @file_get_contents("$partsDir/threads.stdout");
        $i = array_search($w, $p['threads'], true);
        $mine = preg_match('/^thread ' . $i . ': (ended|failed)\n((?:    .*\n)*)/m', $report, $m);
        $stderr = trim(($mine ? preg_replace('/^    /m', '', $m[2]) : '') . "\n" . (string) @file_get_contents("$partsDir/threads.stderr"));
        // A thread's own end: failed (a fatal error, an uncaught throwable, exit) is 1;
        // no report at all, the process's.
        if (!$stuck && $signal === null) { $code = $mine ? ($m[1] === 'ended' ? 0 : 1) : ($code ?: 1); }
    } else {
        $stderr = trim((string) @file_get_contents("$partsDir/w$w.stderr") . (string) @file_get_contents("$partsDir/w$w.stdout"));
    }
    $exits[] = ['op' => 'worker-exit', 'w' => $w, 'pid' => $p['pid'], 't0' => $nowMs(), 'stuck' => $stuck,
        'code' => $code, 'signal' => $signal, 'thread' => isset($p['threads']), 'output' => substr($stderr, 0, 2000)];
}
$procs = [];
if (is_resource($watcher)) {
    proc_terminate($watcher, SIGKILL);
    proc_close($watcher);
    $watcher = null;
    $said = trim((string) @file_get_contents("$partsDir/watch.out"));
    if ($said !== '') { fwrite(STDERR, "nemesis: the watcher said: " . substr($said, 0, 500) . "\n"); }
}

// What the fenced store counted, beside the workers' own records of its answers.
$storeCounts = [];
foreach (KEYS as $k) { $storeCounts[$k] = rl_cmd($store['dsn'], 'HGETALL', "store:$k"); }
$storeCounts['sem'] = rl_cmd($store['dsn'], 'HGETALL', 'store:sem');

// The history: the header, then every event by its start time.
$lines = [];
foreach (glob("$partsDir/w*.jsonl") as $part) {
    foreach (file($part, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $l) {
        $e = json_decode($l, true);
        if (is_array($e)) { $lines[] = $e; } else { $lines[] = ['op' => 'bad-line', 'text' => substr($l, 0, 300)]; }
    }
}
// --watch: the watcher's records, and the extension's trace (its times are
// CLOCK_MONOTONIC ns, made ms from the run's origin here).
foreach (@file("$partsDir/repl.jsonl", FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $l) {
    if (is_array($e = json_decode($l, true))) { $lines[] = $e; }
}
foreach (@file("$partsDir/trace.jsonl", FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $l) {
    if (!is_array($e = json_decode($l, true))) { continue; }
    $lines[] = ['op' => 'trace', 'ev' => $e['ev'], 't0' => round(($e['t'] - $t0) / 1e6, 3)] + array_diff_key($e, ['ev' => 1, 't' => 1]);
}
foreach ($faultLog as $f) { $lines[] = $f; }
foreach ($exits as $x) { $lines[] = $x; }
$lines[] = ['op' => 'store-counts', 't0' => $nowMs(), 'counts' => $storeCounts];
usort($lines, fn($a, $b) => ($a['t0'] ?? 0) <=> ($b['t0'] ?? 0));
$h = fopen($out, 'w');
fwrite($h, json_encode($header + ['faults_ended' => $lastFault], JSON_UNESCAPED_SLASHES) . "\n");
foreach ($lines as $e) { fwrite($h, json_encode($e, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION) . "\n"); }
fclose($h);
foreach (glob("$partsDir/*") as $f) { unlink($f); }
@rmdir($partsDir);
$cleanup();
if (!$quiet) {
    printf("nemesis: %s seed %d, %d workers, %.0f s, %d faults: %s\n", $topology, $seed, $nworkers, $duration, count($schedule), $out);
}
