<?php
// Uncontended acquire+release on Redlock over 5 and 3 servers, and on a Redis
// Cluster (3 masters, 3 replicas), against one server, in one run (interleaved
// rounds), on throwaway loopback servers. The Redlock fan-out writes to all nodes
// before reading any reply, so a cycle should cost about one slowest round trip per
// step, not five; a cluster lock should cost what one server with a replica does
// (the routing is one slot lookup; the replicas cost their masters the propagation).
// And Redlock over 5 other servers, one of them hung (SIGSTOP: its host accepts and
// acknowledges, it never answers), against the healthy 5 in the same rounds: a call
// returns once a majority decided, and the hung node, skipped after its first
// read_timeout without a reply, is probed on the connection it has; target ≤ 1.5×
// (median of per-round ratios). Both use read_timeout 0.2 s: before the majority
// decided early, a hung node cost every step one, 2,400× a healthy cycle.
// Prints a Markdown table and writes bench/results/redlock.md.
// Usage: php ... bench/redlock.php [cycles]
require __DIR__ . '/../php-tests/_helper.inc';

$cycles = (int) ($argv[1] ?? 5000);
$rounds = 5;
$nodes = rl_start_many(5);
$hungSet = rl_start_many(5);
$cluster = rl_start_cluster();
$primary = rl_start_redis();
$replica = rl_start_redis(['--replicaof', '127.0.0.1', (string) $primary['port']]);
try {
    $servers = array_column($nodes, 'dsn');
    $rt = ['read_timeout' => 0.2, 'connect_timeout' => 0.2];
    $cases = [
        'one server' => new Lock('bench:redlock', 0, 10, ['dsn' => $servers[0]]),
        'Redlock, 5 servers' => new Lock('bench:redlock', 0, 10, ['servers' => $servers] + $rt),
        'Redlock, 5 servers, 1 hung (SIGSTOP)' => new Lock('bench:redlock', 0, 10, ['servers' => array_column($hungSet, 'dsn')] + $rt),
        'Redlock, 3 servers' => new Lock('bench:redlock', 0, 10, ['servers' => array_slice($servers, 0, 3)]),
        'one server + replica' => new Lock('bench:redlock', 0, 10, ['dsn' => $primary['dsn']]),
        'Cluster, 3+3 replicas' => new Lock('bench:redlock', 0, 10, ['cluster' => $cluster['seeds']]),
    ];
    $run = function (Lock $l, int $n): float {
        $t0 = hrtime(true);
        for ($i = 0; $i < $n; $i++) {
            $t = $l->addLock();
            if ($t === false || !$l->releaseLock($t)) { throw new Exception('cycle failed'); }
        }
        return (hrtime(true) - $t0) / 1e3 / $n;
    };
    foreach ($cases as $l) { $run($l, 300); }           // warm up: connections, scripts
    posix_kill($hungSet[4]['pid'], SIGSTOP);
    $run($cases['Redlock, 5 servers, 1 hung (SIGSTOP)'], 300);   // the first cycles without it
    $wall = [];
    for ($r = 0; $r < $rounds; $r++) {
        foreach ($cases as $name => $l) { $wall[$name][] = $run($l, $cycles); }
    }
    $median = function (array $xs) { sort($xs); return $xs[intdiv(count($xs), 2)]; };
    $hung = 'Redlock, 5 servers, 1 hung (SIGSTOP)';
    $ratios = array_map(fn($h, $ok) => $h / $ok, $wall[$hung], $wall['Redlock, 5 servers']);
    preg_match('/^redis_version:(\S+)/m', (string) rl_cmd($servers[0], 'INFO', 'server'), $v);
    $md = "<!-- written by bench/redlock.php (make bench) -->\n";
    $md .= sprintf("Uncontended acquire + release, loopback redis-server %s, %s; %d interleaved rounds of %d cycles.\n\n",
        $v[1] ?? '?', date('Y-m-d'), $rounds, $cycles);
    $md .= "| acquire + release | wall µs/cycle | vs one server | target | met |\n|---|---|---|---|---|\n";
    $base = $median($wall['one server']);
    foreach ($wall as $name => $xs) {
        if ($name === $hung) { continue; }
        $md .= sprintf("| %s | %.1f | %.2f× | | |\n", $name, $median($xs), $median($xs) / $base);
    }
    $ratio = $median($ratios);
    $md .= sprintf("| %s | %.1f | %.2f× against the healthy 5 (median of per-round ratios) | ≤ 1.5× | %s |\n",
        $hung, $median($wall[$hung]), $ratio, $ratio <= 1.5 ? 'yes' : 'no');
    $md .= sprintf("\n(µs: median per-cycle wall time over the rounds. Both Redlock-5 rows with read_timeout 0.2 s; "
        . "the hung node was SIGSTOPped after the warm-up and stayed so for all %d rounds (%.1f s), through its back-off and probes. "
        . "%d redis-servers share the machine's cores.)\n", $rounds, array_sum($wall[$hung]) * $cycles / 1e6,
        count($nodes) + count($hungSet) + count($cluster['nodes']) + 2);
    echo $md;
    @mkdir(__DIR__ . '/results');
    file_put_contents(__DIR__ . '/results/redlock.md', $md);
    fwrite(STDERR, "wrote bench/results/redlock.md\n");
} finally {
    foreach ($hungSet as $n) { posix_kill($n['pid'], SIGCONT); rl_stop_redis($n); }
    foreach ($nodes as $n) { rl_stop_redis($n); }
    rl_stop_cluster($cluster);
    rl_stop_redis($replica);
    rl_stop_redis($primary);
}
