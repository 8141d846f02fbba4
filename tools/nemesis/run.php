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
// Faults (--faults, default: all of the topology's):
//   partition  a worker's proxy stops forwarding for 0.2–1.2 s, then heals (its bytes arrive late);
//              on Redlock, to 1–5 of the nodes; on Sentinel and Cluster a NODE's proxy, so
//              every client's (workers, sentinels, replicas; not the cluster bus): on
//              Sentinel the master's of the moment or a given node's, on the Cluster the
//              master of one of the keys (k0, k1, sem), chosen from the seed; the fault
//              record has `nodes` and no `worker`
//   pause      a worker stopped with SIGSTOP for 0.2–1.2 s
//   pause-waiter  the same, of a worker waiting in an acquire when the fault comes (the
//              nemesis reads the workers' histories as they grow; none waiting: skipped)
//   reset      a worker's proxied connections closed; on Sentinel and Cluster every
//              connection of a node's proxy (the node chosen as for partition)
//   stall      Redis (on Redlock: 1–2 nodes, a minority) stopped with SIGSTOP for 0.1–0.7 s (Redlock: 0.2–1.2 s)
//   kill       Redis (on Redlock: one node) SIGKILLed, restarted after 0–0.2 s on the same port and files
//   failover   (sentinel) the current master SIGKILLed: the sentinels promote the replica,
//              which may have missed the last writes; the old master restarts 2–3 s later
//              and the sentinels make it a replica; `stall` there stops the current master
//              for 0.1–1.5 s, past the sentinels' 0.5 s when long: a failover while it lives;
//              on the cluster, the master of one of the keys (k0, k1, sem), chosen from
//              the seed: killed, its replica promoted after the 1 s node timeout, and it
//              restarts 2–3 s later from its own files and rejoins as a replica; `stall`
//              there stops that master for 0.1–1.5 s, past the node timeout when long
//   clock-forward, clock-back  (the -clock topologies) a server's wall clock jumps
//              0.6–3 s forward or back and stays there (Redlock: one node, from the seed;
//              Sentinel: the master of the moment); the fault records the jump and the
//              node's offset after it. A forward jump expires the leases on it early
//   clock-failover  (sentinel-clock) the master killed as in `failover`, the replica
//              promoted being 1–3 s ahead of it: the replica starts that far ahead
//              (the run's first replica, and each old master restarting as a replica),
//              and expires every key that much early once promoted. sentinel-clock's
//              leases are 2 s, so that holds outlive the failover (about 1.5 s)
// Workloads (--workloads, one per worker, dealt from the seed): mutex, fair (`fair`),
// token (caller-chosen tokens), sync (synchronized() with the watchdog), rw (read and
// write holds of the shared lock), sem (a Semaphore of 2 permits on a key of its own),
// and, only when --workloads names it, multi (a MultiLock over both keys, two Cluster
// slots; recorded as one attempt per key, which the checker judges as a Lock's) and
// reuse (one caller-chosen token per worker, w<id>-s<seed>-job, for every section of
// the run on either key: addLock($token), extendLock($token), releaseLock($token)).
// Redlock runs mutex, token and sync (it refuses fair, shared locks and semaphores).
// Every other worker has `auto_renew` (sync always has it). Leases 0.5 s (sentinel-clock: 2 s), waits 1 s,
// read_timeout 0.2 s, fencing on (unless --fencing 0).
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
// --durable N (sentinel, cluster): durable grants, `durable => N` (durable_timeout 0.1 s):
// an acquisition, a hand-over or a renewal counts only once N replicas have it.
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

$opt = getopt('', ['seed:', 'topology:', 'duration:', 'workers:', 'threads:', 'faults:', 'workloads:', 'out:', 'quiet', 'help', 'resp3', 'no-resp3', 'wait-replicas:', 'durable:', 'wait:', 'fencing:', 'expect:', 'keys:']);
if (isset($opt['help'])) {
    // The comment at the top of this file.
    foreach (array_slice(file(__FILE__, FILE_IGNORE_NEW_LINES), 1) as $l) {
        if (!str_starts_with($l, '//')) { break; }
        echo substr($l, 3), "\n";
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
// The quiet end of a run, in which every key must be taken again. Durable grants need
// a replica: after a failover while the old master lives, the sentinels make it one
// only about 8 s after it is back (a returned master is left alone for four publish
// periods), so those runs end with 12 s of quiet.
define('QUIET', (int) ($opt['durable'] ?? 0) > 0 ? 12.0 : 3.0);
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
function node_target(bool $sentinel, int $nodes): array {
    if ($sentinel) {
        if (mt_rand(0, 1) === 0) { return ['target' => 'master', 'nodes' => ['master']]; }
        $n = mt_rand(0, $nodes - 1);
        return ['target' => 'node', 'node' => $n, 'nodes' => [$n]];
    }
    $key = ['k0', 'k1', 'sem'][mt_rand(0, 2)];
    return ['target' => 'key', 'key' => $key, 'nodes' => ["master of $key"]];
}

/**
 * The fault schedule: a fault every 0.2–0.8 s from 0.5 s to (duration − 3) s, each
 * ended by then. A fault whose target is still under a fault of its own kind is
 * left out (a stopped process cannot be stopped twice; a restarting server cannot
 * be stalled), so that each fault's end is its own.
 */
function schedule(array $kinds, float $duration, int $nworkers, int $nodes, bool $sentinel, bool $cluster, Closure $isThread): array {
    $faults = [];
    $busy = [];  // target => busy until
    $lastEnd = $duration - QUIET;
    for ($t = 0.5 + mt_rand(200, 800) / 1000; $t < $lastEnd - 0.1; $t += mt_rand(200, 800) / 1000) {
        $kind = pick($kinds);
        $w = mt_rand(0, $nworkers - 1);
        switch ($kind) {
            case 'partition':
                $len = mt_rand(200, 1200) / 1000;
                if ($sentinel || $cluster) {
                    // A node's proxy. On Sentinel one node fault at a time (a partition of
                    // the master past the sentinels' 0.5 s can become a failover, as a long
                    // stall can); on the Cluster the bus stays direct: no failover comes of it.
                    $targets = [$sentinel ? 'master' : 'node-proxy'];
                    $f = ['kind' => 'partition'] + node_target($sentinel, $nodes) + ['len' => $len];
                    break;
                }
                // On Redlock, cut the worker off from 1 to all 5 nodes.
                $cut = range(0, $nodes - 1);
                shuffle($cut);
                $cut = array_slice($cut, 0, $nodes === 1 ? 1 : mt_rand(1, $nodes));
                sort($cut);
                $targets = array_map(fn($n) => "proxy:$w:$n", $cut);
                $f = ['kind' => 'partition', 'worker' => $w, 'nodes' => $cut, 'len' => $len];
                break;
            case 'pause':
                $len = mt_rand(200, 1200) / 1000;
                // A thread's pause stops its whole process: one target for all of them.
                $targets = [$isThread($w) ? 'worker:threads' : "worker:$w"];
                $f = ['kind' => 'pause', 'worker' => $w, 'len' => $len];
                break;
            case 'pause-waiter':
                // The worker is chosen when the fault comes: one that waits then.
                $len = mt_rand(200, 1200) / 1000;
                $targets = [];
                $f = ['kind' => 'pause-waiter', 'len' => $len];
                break;
            case 'reset':
                $len = 0.0;
                $targets = [];
                $f = ['kind' => 'reset', 'worker' => $w, 'len' => 0.0];
                // On Sentinel and Cluster, a node's proxy: every client's connections to it.
                if ($sentinel || $cluster) { $f = ['kind' => 'reset'] + node_target($sentinel, $nodes) + ['len' => 0.0]; }
                break;
            case 'stall':
                if ($cluster) {
                    // The master of a key's slot when the fault comes; one cluster fault at a time.
                    $len = mt_rand(100, 1500) / 1000;
                    $key = ['k0', 'k1', 'sem'][mt_rand(0, 2)];
                    $targets = ['cluster'];
                    $f = ['kind' => 'stall', 'key' => $key, 'nodes' => ["master of $key"], 'len' => $len];
                    break;
                }
                if ($sentinel) {
                    // Whichever node is the master when the fault comes.
                    $len = mt_rand(100, 1500) / 1000;
                    $targets = ['master'];
                    $f = ['kind' => 'stall', 'nodes' => ['master'], 'len' => $len];
                    break;
                }
                $len = $nodes === 1 ? mt_rand(100, 700) / 1000 : mt_rand(200, 1200) / 1000;
                $which = range(0, $nodes - 1);
                shuffle($which);
                // A minority: 1 node of 1, 1–2 of 5.
                $which = array_slice($which, 0, $nodes === 1 ? 1 : mt_rand(1, intdiv($nodes - 1, 2)));
                sort($which);
                $targets = array_map(fn($n) => "node:$n", $which);
                $f = ['kind' => 'stall', 'nodes' => $which, 'len' => $len];
                break;
            case 'kill':
                $node = mt_rand(0, $nodes - 1);
                $len = mt_rand(0, 200) / 1000;  // down before the restart begins
                $targets = ["node:$node"];
                $f = ['kind' => 'kill', 'nodes' => [$node], 'len' => $len];
                break;
            case 'clock-forward':
            case 'clock-back':
                // One node's clock (Redlock: one of five; Sentinel: the master's), from the seed.
                $node = $sentinel ? 'master' : mt_rand(0, $nodes - 1);
                $by = mt_rand(600, 3000) / 1000 * ($kind === 'clock-back' ? -1 : 1);
                $len = 0.0;
                $targets = [];
                $f = ['kind' => $kind, 'nodes' => [$node], 'jump' => $by, 'len' => 0.0];
                break;
            case 'clock-failover':
            case 'failover':
                $len = mt_rand(2000, 3000) / 1000;  // down before the old master restarts (the sentinels fail over after 0.5 s, the cluster after 1 s)
                if ($cluster) {
                    $key = ['k0', 'k1', 'sem'][mt_rand(0, 2)];
                    $targets = ['cluster'];
                    $f = ['kind' => 'failover', 'key' => $key, 'nodes' => ["master of $key"], 'len' => $len];
                    break;
                }
                $targets = ['master'];
                $f = ['kind' => $kind, 'nodes' => ['master'], 'len' => $len];
                // How far ahead of the master's the replica's clock is when it is promoted:
                // set when that replica started (a jump just before would look to the
                // sentinels like a replica cut off from its master that long).
                if ($kind === 'clock-failover') { $f['ahead'] = mt_rand(1000, 3000) / 1000; }
                break;
        }
        // Each fault ends by duration − 3 s; a restart takes up to about a second, and
        // the sentinels settle a failover (or a long stall) within about two more.
        $base = $kind === 'clock-failover' ? 'failover' : $kind;
        $reserve = ['kill' => 1.0, 'failover' => 1.0][$base] ?? 0.0;
        $settle = ($sentinel || $cluster) && in_array($base, ['failover', 'stall'], true) || $sentinel && $kind === 'partition' ? 2.0 : 0.0;
        if ($base === 'failover' && $t + $len + $reserve > $lastEnd) { continue; }
        if ($t + $len + $reserve > $lastEnd) { $len = max(0.0, $lastEnd - $reserve - $t); $f['len'] = $len; }
        if ($kind === 'kill' && $t + $reserve > $lastEnd) { continue; }
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
$schedule = schedule($faultKinds, $duration, $nworkers, $topo['nodes'], $sentinel, $cluster, $isThread);

// --- what runs, and its cleanup -------------------------------------------------
$nodes = [];        // the lock servers (rl_start_redis arrays)
$sentinels = [];    // the sentinels (rl_start_redis arrays), on the sentinel topology
$store = null;      // the fenced store
$proxies = [];      // [worker][node] => rl_fault_proxy array
$nodeProxies = [];  // [node] => rl_fault_proxy array: on Sentinel and Cluster, the one every client reaches the node through
$procs = [];        // worker => ['proc' =>, 'pid' =>]
$stopped = [];      // pid => true: stopped by us, to continue in the cleanup
$cleaned = false;
$cleanup = function () use (&$nodes, &$sentinels, &$store, &$proxies, &$nodeProxies, &$procs, &$stopped, &$cleaned) {
    if ($cleaned) { return; }
    $cleaned = true;
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
    $set = rl_start_sentinel_set(proxied: true);
    $nodes = [$set['master'], $set['replica']];
    $nodeProxies = $set['proxies'];
    $sentinels = $set['sentinels'];
    foreach ($nodeProxies as $i => $px) { $nodeArgs[$i] = rl_proxied_replica_args($px); }
    // The helper starts them without persistence; a restart must find its AOF.
    // Either may become the master and have to sync a restarted node: at once, not
    // after the default 5 s wait for more replicas.
    foreach ($nodes as $n) {
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'appendonly', 'yes');
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'appendfsync', 'always');
        rl_cmd($n['dsn'], 'CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
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
    . ($fencing ? '' : ' --fencing 0') . (count(KEYS) !== 2 ? ' --keys ' . count(KEYS) : '') . ($expect ? ' --expect ' . paths_expect_text($expect, ',') : ''));
$header = ['type' => 'run', 'seed' => $seed, 'topology' => $topology, 'mix' => $mix, 'faults' => $faultKinds,
    'duration' => $duration, 'quiet' => QUIET, 'workers' => $nworkers, 'threads' => $nthreads, 'keys' => KEYS, 'lease' => $topo['lease'] ?? LEASE, 'wait' => $wait, 'elections_waited' => $electionsWaited,
    'read_timeout' => READ_TIMEOUT, 'persist' => $topo['persist'], 'nodes' => $topo['nodes'], 'sentinel' => $sentinel,
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
    // The lock servers' wall clocks can move (the clock shim), and by how much each starts off.
    'clock' => $topo['clock'] ?? false, 'clock_offsets' => ($topo['clock'] ?? false) ? array_map('rl_clock_offset', $nodes) : null,
    // On Sentinel and Cluster each node has one proxy, every client's: partitions and resets are a node's.
    'node_proxies' => $sentinel || $cluster,
    'started' => date('c'), 'replay' => $replay, 'assign' => $workerCfg, 'schedule' => $schedule];

$t0 = hrtime(true);
$nowMs = fn(): float => round((hrtime(true) - $t0) / 1e6, 3);
$endMs = $duration * 1000;
$threadArgs = [];
for ($w = 0; $w < $nworkers; $w++) {
    $cfg = ['id' => $w, 'seed' => $seed, 'topology' => $topology, 'workload' => $workerCfg[$w]['workload'],
        // --resp3: the odd workers ask for RESP3 from the start (HELLO 3 at connect).
        'auto_renew' => $workerCfg[$w]['auto_renew'],
        'dsns' => array_map(fn($p) => $p['dsn'] . ($resp3 === 'half' && $w % 2 === 1 ? '?protocol=resp3' : ''), $proxies[$w]),
        'sentinels' => array_map(fn($s) => $s['dsn'], $sentinels),
        'cluster' => $cluster ? array_column($nodeProxies, 'dsn') : [],
        'store' => $store['port'], 'keys' => KEYS, 'lease' => $topo['lease'] ?? LEASE, 'wait' => $wait, 'read_timeout' => READ_TIMEOUT, 'wait_replicas' => $waitReplicas, 'durable' => $durable,
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
$events = [];  // [time ms, seq, closure]
$seq = 0;
$faultLog = [];
foreach ($schedule as $idx => $f) {
    $at = $f['at'] * 1000;
    $endAt = $at + $f['len'] * 1000;
    // A variable of its own per fault: the closures hold it by reference.
    unset($begin);
    $begin = null;
    $rec = function (array $extra = []) use (&$faultLog, $idx, $f, &$begin, $nowMs) {
        // What was learned when it ran (the node that was the master, the worker that waited) wins.
        $faultLog[$idx] = array_merge(['op' => 'fault', 'kind' => $f['kind'], 'idx' => $idx, 't0' => $begin, 't1' => $nowMs()],
            array_intersect_key($f, ['worker' => 1, 'nodes' => 1, 'len' => 1]), $extra);
    };
    /** On Sentinel and Cluster, the node whose proxy a partition or reset is: found when the fault comes. */
    $nodeOf = function () use ($f, $masterNow, $clusterMasterOf): int {
        return match ($f['target']) { 'master' => $masterNow(), 'node' => $f['node'], 'key' => $clusterMasterOf($f['key']) };
    };
    /** What the fault record says of that node: its index, and on Sentinel its role then. */
    $nodeRec = function (int $n) use ($f, $sentinel, $masterNow): array {
        $role = $sentinel ? ($f['target'] === 'master' ? 'master' : (rescue($masterNow) === $n ? 'master' : 'replica')) : 'master';
        return ['nodes' => [$n], 'target' => $f['target'], 'role' => $role, 'all_clients' => true] + (isset($f['key']) ? ['key' => $f['key']] : []);
    };
    switch ($f['kind']) {
        case 'partition':
            if (isset($f['target'])) {
                // A node's proxy: every client of the node is cut off (workers, sentinels, replicas).
                $which = null;
                $events[] = [$at, $seq++, function () use (&$which, &$nodeProxies, &$begin, $nowMs, $nodeOf, $nodeRec) {
                    $begin = $nowMs();
                    $n = $nodeOf();
                    $which = $nodeRec($n);
                    rl_proxy($nodeProxies[$n], 'partition');
                }];
                $events[] = [$endAt, $seq++, function () use (&$which, &$nodeProxies, $rec) {
                    if ($which === null) { return; }
                    rl_proxy($nodeProxies[$which['nodes'][0]], 'heal');
                    $rec($which);
                }];
                unset($which);
                break;
            }
            $events[] = [$at, $seq++, function () use ($f, &$proxies, &$begin, $nowMs) {
                $begin = $nowMs();
                foreach ($f['nodes'] as $n) { rl_proxy($proxies[$f['worker']][$n], 'partition'); }
            }];
            $events[] = [$endAt, $seq++, function () use ($f, &$proxies, $rec) {
                foreach ($f['nodes'] as $n) { rl_proxy($proxies[$f['worker']][$n], 'heal'); }
                $rec();
            }];
            break;
        case 'pause':
            $events[] = [$at, $seq++, function () use ($f, &$procs, &$stopped, &$begin, $nowMs) {
                $begin = $nowMs();
                $pid = $procs[$f['worker']]['pid'];
                $stopped[$pid] = true;
                posix_kill($pid, SIGSTOP);
            }];
            $events[] = [$endAt, $seq++, function () use ($f, &$procs, &$stopped, $rec) {
                $pid = $procs[$f['worker']]['pid'];
                posix_kill($pid, SIGCONT);
                unset($stopped[$pid]);
                // A thread's pause was every thread's.
                $rec(isset($procs[$f['worker']]['threads']) ? ['workers' => $procs[$f['worker']]['threads']] : []);
            }];
            break;
        case 'pause-waiter':
            $pid = null;
            $chosen = null;
            $events[] = [$at, $seq++, function () use (&$pid, &$chosen, &$begin, &$procs, &$stopped, $nowMs, $waiting, $f, $idx, &$faultLog) {
                $begin = $nowMs();
                $pids = array_map(fn($p) => $p['pid'], $procs);
                $candidates = array_values(array_filter($waiting(), fn($w) => !isset($stopped[$pids[$w]])));
                if (!$candidates) {
                    $faultLog[$idx] = ['op' => 'fault-skipped', 'kind' => $f['kind'], 'idx' => $idx, 't0' => $begin, 'why' => 'no worker waiting'];
                    return;
                }
                $w = $chosen = $candidates[mt_rand(0, count($candidates) - 1)];
                $pid = $pids[$w];
                $stopped[$pid] = true;
                posix_kill($pid, SIGSTOP);
            }];
            $events[] = [$endAt, $seq++, function () use (&$pid, &$chosen, &$procs, &$stopped, $rec) {
                if ($pid === null) { return; }
                posix_kill($pid, SIGCONT);
                unset($stopped[$pid]);
                $rec(['worker' => $chosen] + (isset($procs[$chosen]['threads']) ? ['workers' => $procs[$chosen]['threads']] : []));
            }];
            unset($pid, $chosen);
            break;
        case 'reset':
            $events[] = [$at, $seq++, function () use ($f, &$proxies, &$nodeProxies, &$begin, $nowMs, $rec, $nodeOf, $nodeRec) {
                $begin = $nowMs();
                if (isset($f['target'])) {
                    // A node's proxy: every connection to the node closed, whoever's.
                    $n = $nodeOf();
                    rl_proxy($nodeProxies[$n], 'reset');
                    $rec($nodeRec($n));
                    return;
                }
                foreach ($proxies[$f['worker']] as $px) { rl_proxy($px, 'reset'); }
                $rec();
            }];
            break;
        case 'stall':
            // On the sentinel topology the target is the master of the moment.
            $which = $f['nodes'];
            $events[] = [$at, $seq++, function () use (&$which, &$nodes, &$stopped, &$begin, $nowMs, $sentinel, $masterNow, $cluster, $clusterMasterOf, $f) {
                $begin = $nowMs();
                if ($sentinel) { $which = [$masterNow()]; }
                if ($cluster) { $which = [$clusterMasterOf($f['key'])]; }
                foreach ($which as $n) { $stopped[$nodes[$n]['pid']] = true; posix_kill($nodes[$n]['pid'], SIGSTOP); }
            }];
            $events[] = [$endAt, $seq++, function () use (&$which, &$nodes, &$stopped, $rec) {
                foreach ($which as $n) { posix_kill($nodes[$n]['pid'], SIGCONT); unset($stopped[$nodes[$n]['pid']]); }
                $rec(['nodes' => $which]);
            }];
            unset($which);
            break;
        case 'clock-forward':
        case 'clock-back':
            // The clock jumps and stays there: the fault ends as it begins.
            $events[] = [$at, $seq++, function () use ($f, &$nodes, &$begin, $nowMs, $masterNow, $rec) {
                $begin = $nowMs();
                $n = $f['nodes'][0] === 'master' ? $masterNow() : $f['nodes'][0];
                $offset = round(rl_clock_offset($nodes[$n]) + $f['jump'], 6);
                rl_clock_set($nodes[$n], $offset);
                $rec(['nodes' => [$n], 'jump' => $f['jump'], 'offset' => $offset]);
            }];
            break;
        case 'clock-failover':
        case 'failover':
            $victim = null;
            $clock = [];  // clock-failover: the offsets of the master killed and of the replica promoted
            // The lead the victim restarts with, as a replica: the next clock-failover's.
            $next = array_values(array_filter(array_slice($schedule, $idx + 1), fn($g) => $g['kind'] === 'clock-failover'))[0]['ahead'] ?? ($f['ahead'] ?? null);
            $events[] = [$at, $seq++, function () use (&$victim, &$clock, &$nodes, &$begin, $nowMs, $masterNow, $cluster, $clusterMasterOf, $f) {
                $begin = $nowMs();
                $victim = $cluster ? $clusterMasterOf($f['key']) : $masterNow();
                if (isset($f['ahead'])) {
                    [$was, $to] = [rl_clock_offset($nodes[$victim]), rl_clock_offset($nodes[1 - $victim])];
                    $clock = ['ahead' => round($to - $was, 6), 'offset_killed' => $was, 'offset_promoted' => $to];
                }
                rl_kill_redis($nodes[$victim]);
            }];
            if ($cluster) {
                $events[] = [$endAt, $seq++, function () use (&$victim, &$nodes, $persistArgs, $nodeArgs, $rec, $nowMs, $f) {
                    $r0 = $nowMs();
                    // From its own files: nodes.conf has it rejoin, and the cluster's newer
                    // epoch makes it a replica of the master promoted meanwhile. The fault
                    // ends once it is a replica in sync.
                    $nodes[$victim] = rl_start_redis(array_merge($nodeArgs[$victim], $persistArgs), $nodes[$victim]['port']);
                    $deadline = microtime(true) + 5;
                    while (microtime(true) < $deadline) {
                        $repl = (string) rl_poll($nodes[$victim]['dsn'], 'INFO', 'replication');
                        if (str_contains($repl, 'role:slave') && str_contains($repl, 'master_link_status:up')) { break; }
                        usleep(20000);
                    }
                    $rec(['nodes' => [$victim], 'key' => $f['key'], 'restart_t0' => $r0,
                        'role_after' => str_contains($repl, 'role:slave') ? 'replica' : 'master']);
                }];
                unset($victim, $clock);
                break;
            }
            $events[] = [$endAt, $seq++, function () use (&$victim, &$clock, &$nodes, &$nodeProxies, $persistArgs, $nodeArgs, $rec, $nowMs, $masterNow, $f, $next) {
                $r0 = $nowMs();
                // It comes back as a replica of the new master, as a managed restart
                // does (left to itself it would come back a master, and the sentinels
                // would convert it only at their next INFO, up to 10 s later: a second
                // failover meanwhile could promote a node that never synced), and the
                // fault ends once it is in sync.
                // It keeps announcing its proxy, and replicates through the master's, as
                // the sentinels would have it. The sentinels may not have promoted the
                // other node yet (an election lost to a partition or a stall): they are
                // given up to 10 s more; if they still name the victim, it comes back a
                // master, as it left (a replica of itself would leave no master at all).
                $master = $masterNow();
                $until = microtime(true) + 10;
                while ($master === $victim && microtime(true) < $until) {
                    usleep(100000);
                    $master = $masterNow();
                }
                $follow = $master === $victim ? [] : ['--replicaof', '127.0.0.1', (string) $nodeProxies[$master]['port']];
                if (isset($f['ahead']) && $master !== $victim) {
                    // A replica again, its clock ahead of the new master's from its start.
                    rl_clock_set($nodes[$victim], round(rl_clock_offset($nodes[$master]) + $next, 6));
                    $clock['restarted_offset'] = rl_clock_offset($nodes[$victim]);
                }
                $nodes[$victim] = rl_start_redis(array_merge($persistArgs, $nodeArgs[$victim], ['--repl-diskless-sync-delay', '0'], $follow),
                    $nodes[$victim]['port']);
                $deadline = microtime(true) + 3;
                while (!str_contains((string) rl_poll($nodes[$victim]['dsn'], 'INFO', 'replication'), 'master_link_status:up') && microtime(true) < $deadline) {
                    usleep(20000);
                }
                $rec(['nodes' => [$victim], 'restart_t0' => $r0, 'master_after' => $master] + $clock);
            }];
            unset($victim, $clock);
            break;
        case 'kill':
            $events[] = [$at, $seq++, function () use ($f, &$nodes, &$begin, $nowMs) {
                $begin = $nowMs();
                rl_kill_redis($nodes[$f['nodes'][0]]);
            }];
            $events[] = [$endAt, $seq++, function () use ($f, &$nodes, $persistArgs, $rec, $nowMs) {
                $n = $f['nodes'][0];
                $r0 = $nowMs();
                $nodes[$n] = rl_start_redis($persistArgs, $nodes[$n]['port']);
                $rec(['restart_t0' => $r0]);
            }];
            break;
    }
}
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
