<?php
// Uncontended acquire+release on Redlock over 5 and 3 servers, and on a Redis
// Cluster (3 masters, 3 replicas), against one server, in one run (interleaved
// rounds), on throwaway loopback servers. The Redlock fan-out writes to all nodes
// before reading any reply, so a cycle should cost about one slowest round trip per
// step, not five; a cluster lock should cost what one server with a replica does
// (the routing is one slot lookup; the replicas cost their masters the propagation).
// Usage: php ... bench/redlock.php [cycles]
require __DIR__ . '/../php-tests/_helper.inc';

$cycles = (int) ($argv[1] ?? 5000);
$rounds = 5;
$nodes = rl_start_many(5);
$cluster = rl_start_cluster();
$primary = rl_start_redis();
$replica = rl_start_redis(['--replicaof', '127.0.0.1', (string) $primary['port']]);
try {
    $servers = array_column($nodes, 'dsn');
    $cases = [
        'one server' => new Lock('bench:redlock', 0, 10, ['dsn' => $servers[0]]),
        'Redlock, 5 servers' => new Lock('bench:redlock', 0, 10, ['servers' => $servers]),
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
    $wall = [];
    for ($r = 0; $r < $rounds; $r++) {
        foreach ($cases as $name => $l) { $wall[$name][] = $run($l, $cycles); }
    }
    $median = function (array $xs) { sort($xs); return $xs[intdiv(count($xs), 2)]; };
    printf("%-24s %14s %10s\n", 'acquire+release', 'wall µs/cycle', 'vs one');
    $base = $median($wall['one server']);
    foreach ($wall as $name => $xs) {
        printf("%-24s %14.1f %9.2fx\n", $name, $median($xs), $median($xs) / $base);
    }
    printf("(median of %d interleaved rounds of %d cycles; loopback Redis %s)\n", $rounds, $cycles, trim(explode("\n", rl_cmd($servers[0], 'INFO', 'server'))[1] ?? ''));
} finally {
    foreach ($nodes as $n) { rl_stop_redis($n); }
    rl_stop_cluster($cluster);
    rl_stop_redis($replica);
    rl_stop_redis($primary);
}
