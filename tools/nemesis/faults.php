<?php
// The nemesis's fault kinds, each in one place: what it does (its class's comment, which
// run.php --help prints), how the schedule plans one (`plan`, from the seed: the same seed plans the same
// faults), what it keeps from others of its kind (`targets`, `reserve`, `settle`), and
// how the run injects it (`inject`: the events at its start and at its end).
declare(strict_types=1);

/** What planning a fault knows of the run. */
final class Plan
{
    public function __construct(
        public readonly int $nodes,
        public readonly bool $sentinel,
        public readonly bool $cluster,
        public readonly Closure $isThread,
    ) {
    }

    /**
     * A node fault's target on Sentinel (the master of the moment, or a given node) or
     * Cluster (the master of one of the keys when the fault comes), from the seed.
     */
    public function nodeTarget(): array
    {
        if ($this->sentinel) {
            if (mt_rand(0, 1) === 0) { return ['target' => 'master', 'nodes' => ['master']]; }
            $n = mt_rand(0, $this->nodes - 1);
            return ['target' => 'node', 'node' => $n, 'nodes' => [$n]];
        }
        $key = ['k0', 'k1', 'sem'][mt_rand(0, 2)];
        return ['target' => 'key', 'key' => $key, 'nodes' => ["master of $key"]];
    }
}

/**
 * What injecting a fault reaches: the run's servers, proxies and workers (held by
 * reference: a restarted node's entry is replaced for everyone, the cleanup included),
 * what it knows of them, and the events the run plays in time order.
 */
final class Run
{
    public array $events = [];  // [time ms, seq, closure]
    public int $seq = 0;
    public array $nodes;
    public array $proxies;
    public array $nodeProxies;
    public array $procs;
    public array $stopped;
    public array $faultLog;

    public function __construct(
        public readonly Closure $nowMs,
        public readonly Closure $masterNow,
        public readonly Closure $clusterMasterOf,
        public readonly Closure $waiting,
        public readonly array $persistArgs,
        public readonly array $nodeArgs,
        public readonly array $schedule,
        public readonly bool $sentinel,
        public readonly bool $cluster,
    ) {
    }
}

/** One fault of the schedule as the run injects it. */
final class Injection
{
    /** When it began (the run's ms), once it has. */
    public ?float $begin = null;
    public readonly float $at;
    public readonly float $endAt;

    public function __construct(public readonly Run $run, public readonly array $f, public readonly int $idx)
    {
        $this->at = $f['at'] * 1000;
        $this->endAt = $this->at + $f['len'] * 1000;
    }

    /** $fn runs when the fault begins. */
    public function onStart(Closure $fn): void
    {
        $this->run->events[] = [$this->at, $this->run->seq++, function () use ($fn) {
            $this->begin = ($this->run->nowMs)();
            $fn();
        }];
    }

    /** $fn runs when the fault ends. */
    public function onEnd(Closure $fn): void
    {
        $this->run->events[] = [$this->endAt, $this->run->seq++, $fn];
    }

    /** The fault's record in the history; what was learned when it ran wins. */
    public function rec(array $extra = []): void
    {
        $f = $this->f;
        $this->run->faultLog[$this->idx] = array_merge(
            ['op' => 'fault', 'kind' => $f['kind'], 'idx' => $this->idx, 't0' => $this->begin, 't1' => ($this->run->nowMs)()],
            array_intersect_key($f, ['worker' => 1, 'nodes' => 1, 'len' => 1]),
            $extra,
        );
    }

    /** On Sentinel and Cluster, the node whose proxy a partition or reset is: found when the fault comes. */
    public function nodeOf(): int
    {
        $f = $this->f;
        return match ($f['target']) {
            'master' => ($this->run->masterNow)(),
            'node' => $f['node'],
            'key' => ($this->run->clusterMasterOf)($f['key']),
        };
    }

    /** What the fault record says of that node: its index, and on Sentinel its role then. */
    public function nodeRec(int $n): array
    {
        $f = $this->f;
        $role = $this->run->sentinel
            ? ($f['target'] === 'master' ? 'master' : (rescue($this->run->masterNow) === $n ? 'master' : 'replica'))
            : 'master';
        return ['nodes' => [$n], 'target' => $f['target'], 'role' => $role, 'all_clients' => true] + (isset($f['key']) ? ['key' => $f['key']] : []);
    }

    /** Stops process $pid (SIGSTOP), noted so that the cleanup continues it. */
    public function stop(int $pid): void
    {
        $this->run->stopped[$pid] = true;
        posix_kill($pid, SIGSTOP);
    }

    /** Continues process $pid. */
    public function resume(int $pid): void
    {
        posix_kill($pid, SIGCONT);
        unset($this->run->stopped[$pid]);
    }
}

abstract class Fault
{
    /** Seconds kept free after the fault for its recovery (a restart: about a second). */
    public function reserve(): float { return 0.0; }

    /** Seconds more before another fault on its targets (the sentinels or the cluster settling). */
    public function settle(Plan $p): float { return 0.0; }

    /** Whether it is left out rather than shortened when it would end past the quiet end. */
    public function whole(Plan $p): bool { return false; }

    /**
     * One fault of kind $kind planned for worker $w (chosen for every kind, used by
     * some): [its record, without `at`; the targets it keeps busy until it ends].
     */
    abstract public function plan(Plan $p, string $kind, int $w): array;

    /** Adds the fault's events to the run. */
    abstract public function inject(Injection $i): void;
}

/**
 * A worker's proxy stops forwarding for 0.2–1.2 s, then heals (its bytes arrive late);
 * on Redlock, to 1–5 of the nodes; on Sentinel and Cluster a NODE's proxy, so every
 * client's (workers, sentinels, replicas; not the cluster bus): on Sentinel the
 * master's of the moment or a given node's, on the Cluster the master of one of the
 * keys (k0, k1, sem), chosen from the seed; the fault record has `nodes` and no `worker`.
 */
final class Partition extends Fault
{
    public function settle(Plan $p): float { return $p->sentinel ? 2.0 : 0.0; }

    public function plan(Plan $p, string $kind, int $w): array
    {
        $len = mt_rand(200, 1200) / 1000;
        if ($p->sentinel || $p->cluster) {
            // A node's proxy. On Sentinel one node fault at a time (a partition of the
            // master past the sentinels' 0.5 s can become a failover, as a long stall
            // can); on the Cluster the bus stays direct: no failover comes of it.
            return [['kind' => 'partition'] + $p->nodeTarget() + ['len' => $len], [$p->sentinel ? 'master' : 'node-proxy']];
        }
        // On Redlock, cut the worker off from 1 to all 5 nodes.
        $cut = range(0, $p->nodes - 1);
        shuffle($cut);
        $cut = array_slice($cut, 0, $p->nodes === 1 ? 1 : mt_rand(1, $p->nodes));
        sort($cut);
        return [['kind' => 'partition', 'worker' => $w, 'nodes' => $cut, 'len' => $len], array_map(fn($n) => "proxy:$w:$n", $cut)];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        $f = $i->f;
        if (isset($f['target'])) {
            // A node's proxy: every client of the node is cut off (workers, sentinels, replicas).
            $which = null;
            $i->onStart(function () use (&$which, $i, $run) {
                $n = $i->nodeOf();
                $which = $i->nodeRec($n);
                rl_proxy($run->nodeProxies[$n], 'partition');
            });
            $i->onEnd(function () use (&$which, $i, $run) {
                if ($which === null) { return; }
                rl_proxy($run->nodeProxies[$which['nodes'][0]], 'heal');
                $i->rec($which);
            });
            return;
        }
        $i->onStart(function () use ($f, $run) {
            foreach ($f['nodes'] as $n) { rl_proxy($run->proxies[$f['worker']][$n], 'partition'); }
        });
        $i->onEnd(function () use ($f, $run, $i) {
            foreach ($f['nodes'] as $n) { rl_proxy($run->proxies[$f['worker']][$n], 'heal'); }
            $i->rec();
        });
    }
}

/** A worker stopped with SIGSTOP for 0.2–1.2 s (a thread: its whole process). */
final class Pause extends Fault
{
    public function plan(Plan $p, string $kind, int $w): array
    {
        $len = mt_rand(200, 1200) / 1000;
        // A thread's pause stops its whole process: one target for all of them.
        return [['kind' => 'pause', 'worker' => $w, 'len' => $len], [($p->isThread)($w) ? 'worker:threads' : "worker:$w"]];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        $w = $i->f['worker'];
        $i->onStart(fn() => $i->stop($run->procs[$w]['pid']));
        $i->onEnd(function () use ($i, $run, $w) {
            $i->resume($run->procs[$w]['pid']);
            // A thread's pause was every thread's.
            $i->rec(isset($run->procs[$w]['threads']) ? ['workers' => $run->procs[$w]['threads']] : []);
        });
    }
}

/**
 * A pause of a worker waiting in an acquire when the fault comes (the nemesis reads the
 * workers' histories as they grow; none waiting: skipped).
 */
final class PauseWaiter extends Fault
{
    public function plan(Plan $p, string $kind, int $w): array
    {
        // The worker is chosen when the fault comes: one that waits then.
        return [['kind' => 'pause-waiter', 'len' => mt_rand(200, 1200) / 1000], []];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        $pid = null;
        $chosen = null;
        $i->onStart(function () use (&$pid, &$chosen, $i, $run) {
            $pids = array_map(fn($p) => $p['pid'], $run->procs);
            $candidates = array_values(array_filter(($run->waiting)(), fn($w) => !isset($run->stopped[$pids[$w]])));
            if (!$candidates) {
                $run->faultLog[$i->idx] = ['op' => 'fault-skipped', 'kind' => $i->f['kind'], 'idx' => $i->idx, 't0' => $i->begin, 'why' => 'no worker waiting'];
                return;
            }
            $chosen = $candidates[mt_rand(0, count($candidates) - 1)];
            $pid = $pids[$chosen];
            $i->stop($pid);
        });
        $i->onEnd(function () use (&$pid, &$chosen, $i, $run) {
            if ($pid === null) { return; }
            $i->resume($pid);
            $i->rec(['worker' => $chosen] + (isset($run->procs[$chosen]['threads']) ? ['workers' => $run->procs[$chosen]['threads']] : []));
        });
    }
}

/**
 * A worker's proxied connections closed; on Sentinel and Cluster every connection of a
 * node's proxy (the node chosen as for partition).
 */
final class Reset extends Fault
{
    public function plan(Plan $p, string $kind, int $w): array
    {
        // On Sentinel and Cluster, a node's proxy: every client's connections to it.
        if ($p->sentinel || $p->cluster) { return [['kind' => 'reset'] + $p->nodeTarget() + ['len' => 0.0], []]; }
        return [['kind' => 'reset', 'worker' => $w, 'len' => 0.0], []];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        $f = $i->f;
        $i->onStart(function () use ($i, $run, $f) {
            if (isset($f['target'])) {
                // A node's proxy: every connection to the node closed, whoever's.
                $n = $i->nodeOf();
                rl_proxy($run->nodeProxies[$n], 'reset');
                $i->rec($i->nodeRec($n));
                return;
            }
            foreach ($run->proxies[$f['worker']] as $px) { rl_proxy($px, 'reset'); }
            $i->rec();
        });
    }
}

/**
 * Redis stopped with SIGSTOP: one server for 0.1–0.7 s; on Redlock 1–2 nodes (a
 * minority) for 0.2–1.2 s; on Sentinel the master of the moment for 0.1–1.5 s, past the
 * sentinels' 0.5 s when long (a failover while it lives); on the Cluster the master of
 * one of the keys for 0.1–1.5 s, past the node timeout when long.
 */
final class Stall extends Fault
{
    public function settle(Plan $p): float { return $p->sentinel || $p->cluster ? 2.0 : 0.0; }

    public function plan(Plan $p, string $kind, int $w): array
    {
        if ($p->cluster) {
            // The master of a key's slot when the fault comes; one cluster fault at a time.
            $len = mt_rand(100, 1500) / 1000;
            $key = ['k0', 'k1', 'sem'][mt_rand(0, 2)];
            return [['kind' => 'stall', 'key' => $key, 'nodes' => ["master of $key"], 'len' => $len], ['cluster']];
        }
        if ($p->sentinel) {
            // Whichever node is the master when the fault comes.
            return [['kind' => 'stall', 'nodes' => ['master'], 'len' => mt_rand(100, 1500) / 1000], ['master']];
        }
        $len = $p->nodes === 1 ? mt_rand(100, 700) / 1000 : mt_rand(200, 1200) / 1000;
        $which = range(0, $p->nodes - 1);
        shuffle($which);
        // A minority: 1 node of 1, 1–2 of 5.
        $which = array_slice($which, 0, $p->nodes === 1 ? 1 : mt_rand(1, intdiv($p->nodes - 1, 2)));
        sort($which);
        return [['kind' => 'stall', 'nodes' => $which, 'len' => $len], array_map(fn($n) => "node:$n", $which)];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        // On Sentinel and Cluster the target is the master of the moment.
        $which = $i->f['nodes'];
        $i->onStart(function () use (&$which, $i, $run) {
            if ($run->sentinel) { $which = [($run->masterNow)()]; }
            if ($run->cluster) { $which = [($run->clusterMasterOf)($i->f['key'])]; }
            foreach ($which as $n) { $i->stop($run->nodes[$n]['pid']); }
        });
        $i->onEnd(function () use (&$which, $i, $run) {
            foreach ($which as $n) { $i->resume($run->nodes[$n]['pid']); }
            $i->rec(['nodes' => $which]);
        });
    }
}

/**
 * Redis (on Redlock: one node) SIGKILLed, restarted after 0–0.2 s on the same port and
 * files; on Sentinel the master of the moment, restarted from its AOF 1–2.5 s later as
 * it was, a master (as a server restarted by its supervisor comes back: the sentinels
 * make it a replica if they promoted another meanwhile, or find it again as the master
 * if they did not), with its announce settings (its proxy).
 */
final class Kill extends Fault
{
    public function reserve(): float { return 1.0; }

    public function settle(Plan $p): float { return $p->sentinel ? 2.0 : 0.0; }

    public function whole(Plan $p): bool { return $p->sentinel; }

    public function plan(Plan $p, string $kind, int $w): array
    {
        if ($p->sentinel) {
            // Whichever node is the master when the fault comes; one master fault at a time.
            return [['kind' => 'kill', 'nodes' => ['master'], 'len' => mt_rand(1000, 2500) / 1000], ['master']];
        }
        $node = mt_rand(0, $p->nodes - 1);
        $len = mt_rand(0, 200) / 1000;  // down before the restart begins
        return [['kind' => 'kill', 'nodes' => [$node], 'len' => $len], ["node:$node"]];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        $n = $i->f['nodes'][0];
        $i->onStart(function () use (&$n, $run) {
            if ($run->sentinel) { $n = ($run->masterNow)(); }
            rl_kill_redis($run->nodes[$n]);
        });
        $i->onEnd(function () use (&$n, $i, $run) {
            $r0 = ($run->nowMs)();
            // On Sentinel: whom the sentinels name as it comes back (itself: no failover yet).
            $named = $run->sentinel ? rescue($run->masterNow) : null;
            $run->nodes[$n] = rl_start_redis(array_merge($run->persistArgs, $run->nodeArgs[$n] ?? []), $run->nodes[$n]['port']);
            $i->rec(['restart_t0' => $r0] + ($run->sentinel ? ['nodes' => [$n], 'master_at_restart' => $named] : []));
        });
    }
}

/**
 * clock-forward, clock-back (the -clock topologies): a server's wall clock jumps 0.6–3 s
 * forward or back and stays there (Redlock: one node, from the seed; Sentinel: the
 * master of the moment); the fault records the jump and the node's offset after it. A
 * forward jump expires the leases on it early.
 */
final class ClockJump extends Fault
{
    public function plan(Plan $p, string $kind, int $w): array
    {
        // One node's clock (Redlock: one of five; Sentinel: the master's), from the seed.
        $node = $p->sentinel ? 'master' : mt_rand(0, $p->nodes - 1);
        $by = mt_rand(600, 3000) / 1000 * ($kind === 'clock-back' ? -1 : 1);
        return [['kind' => $kind, 'nodes' => [$node], 'jump' => $by, 'len' => 0.0], []];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        $f = $i->f;
        // The fault ends as it begins.
        $i->onStart(function () use ($i, $run, $f) {
            $n = $f['nodes'][0] === 'master' ? ($run->masterNow)() : $f['nodes'][0];
            $offset = round(rl_clock_offset($run->nodes[$n]) + $f['jump'], 6);
            rl_clock_set($run->nodes[$n], $offset);
            $i->rec(['nodes' => [$n], 'jump' => $f['jump'], 'offset' => $offset]);
        });
    }
}

/**
 * failover (Sentinel, Cluster): the current master SIGKILLed; the sentinels promote the
 * replica, which may have missed the last writes, and the old master restarts 2–3 s
 * later as a replica; on the Cluster, the master of one of the keys (k0, k1, sem),
 * chosen from the seed: its replica is promoted after the 1 s node timeout, and it
 * restarts 2–3 s later from its own files and rejoins as a replica. clock-failover
 * (sentinel-clock): the same, the replica promoted being 1–3 s ahead of the master:
 * it starts that far ahead (the run's first replica, and each old master restarting as
 * a replica), and expires every key that much early once promoted (sentinel-clock's
 * leases are 2 s, so that holds outlive the failover, about 1.5 s).
 */
final class Failover extends Fault
{
    public function reserve(): float { return 1.0; }

    public function settle(Plan $p): float { return $p->sentinel || $p->cluster ? 2.0 : 0.0; }

    public function whole(Plan $p): bool { return true; }

    public function plan(Plan $p, string $kind, int $w): array
    {
        $len = mt_rand(2000, 3000) / 1000;  // down before the old master restarts (the sentinels fail over after 0.5 s, the cluster after 1 s)
        if ($p->cluster) {
            $key = ['k0', 'k1', 'sem'][mt_rand(0, 2)];
            return [['kind' => 'failover', 'key' => $key, 'nodes' => ["master of $key"], 'len' => $len], ['cluster']];
        }
        $f = ['kind' => $kind, 'nodes' => ['master'], 'len' => $len];
        // How far ahead of the master's the replica's clock is when it is promoted:
        // set when that replica started (a jump just before would look to the
        // sentinels like a replica cut off from its master that long).
        if ($kind === 'clock-failover') { $f['ahead'] = mt_rand(1000, 3000) / 1000; }
        return [$f, ['master']];
    }

    public function inject(Injection $i): void
    {
        $run = $i->run;
        $f = $i->f;
        $victim = null;
        $clock = [];  // clock-failover: the offsets of the master killed and of the replica promoted
        $i->onStart(function () use (&$victim, &$clock, $run, $f) {
            $victim = $run->cluster ? ($run->clusterMasterOf)($f['key']) : ($run->masterNow)();
            if (isset($f['ahead'])) {
                [$was, $to] = [rl_clock_offset($run->nodes[$victim]), rl_clock_offset($run->nodes[1 - $victim])];
                $clock = ['ahead' => round($to - $was, 6), 'offset_killed' => $was, 'offset_promoted' => $to];
            }
            rl_kill_redis($run->nodes[$victim]);
        });
        if ($run->cluster) {
            $i->onEnd(function () use (&$victim, $i, $run, $f) {
                $r0 = ($run->nowMs)();
                // From its own files: nodes.conf has it rejoin, and the cluster's newer
                // epoch makes it a replica of the master promoted meanwhile. The fault
                // ends once it is a replica in sync.
                $run->nodes[$victim] = rl_start_redis(array_merge($run->nodeArgs[$victim], $run->persistArgs), $run->nodes[$victim]['port']);
                $deadline = microtime(true) + 5;
                $repl = '';
                while (microtime(true) < $deadline) {
                    $repl = (string) rl_poll($run->nodes[$victim]['dsn'], 'INFO', 'replication');
                    if (str_contains($repl, 'role:slave') && str_contains($repl, 'master_link_status:up')) { break; }
                    usleep(20000);
                }
                $i->rec(['nodes' => [$victim], 'key' => $f['key'], 'restart_t0' => $r0,
                    'role_after' => str_contains($repl, 'role:slave') ? 'replica' : 'master']);
            });
            return;
        }
        // The lead the victim restarts with, as a replica: the next clock-failover's.
        $next = array_values(array_filter(array_slice($run->schedule, $i->idx + 1), fn($g) => $g['kind'] === 'clock-failover'))[0]['ahead'] ?? ($f['ahead'] ?? null);
        $i->onEnd(function () use (&$victim, &$clock, $i, $run, $f, $next) {
            $r0 = ($run->nowMs)();
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
            $master = ($run->masterNow)();
            $until = microtime(true) + 10;
            while ($master === $victim && microtime(true) < $until) {
                usleep(100000);
                $master = ($run->masterNow)();
            }
            $follow = $master === $victim ? [] : ['--replicaof', '127.0.0.1', (string) $run->nodeProxies[$master]['port']];
            if (isset($f['ahead']) && $master !== $victim) {
                // A replica again, its clock ahead of the new master's from its start.
                rl_clock_set($run->nodes[$victim], round(rl_clock_offset($run->nodes[$master]) + $next, 6));
                $clock['restarted_offset'] = rl_clock_offset($run->nodes[$victim]);
            }
            $run->nodes[$victim] = rl_start_redis(array_merge($run->persistArgs, $run->nodeArgs[$victim], ['--repl-diskless-sync-delay', '0'], $follow),
                $run->nodes[$victim]['port']);
            $deadline = microtime(true) + 3;
            while (!str_contains((string) rl_poll($run->nodes[$victim]['dsn'], 'INFO', 'replication'), 'master_link_status:up') && microtime(true) < $deadline) {
                usleep(20000);
            }
            $i->rec(['nodes' => [$victim], 'restart_t0' => $r0, 'master_after' => $master] + $clock);
        });
    }
}

/** Every fault kind, by the name --faults gives it. */
const FAULT_KINDS = [
    'partition' => Partition::class,
    'pause' => Pause::class,
    'pause-waiter' => PauseWaiter::class,
    'reset' => Reset::class,
    'stall' => Stall::class,
    'kill' => Kill::class,
    'clock-forward' => ClockJump::class,
    'clock-back' => ClockJump::class,
    'failover' => Failover::class,
    'clock-failover' => Failover::class,
];

/** The fault kind named $kind. */
function fault(string $kind): Fault
{
    static $made = [];
    $class = FAULT_KINDS[$kind] ?? throw new ValueError("no fault kind $kind");
    return $made[$class] ??= new $class();
}
