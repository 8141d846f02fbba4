<?php
// Failovers as passing states, measured: on a Redis Cluster (3 masters, 3 replicas,
// cluster-node-timeout 1 s) and on Sentinel (a master, a replica, 3 sentinels with
// down-after-milliseconds 0.5 s, failover-timeout 3 s), each round starts the servers
// anew, SIGKILLs a master and at once runs php-tests/_failover.inc's callers: a
// blocking Lock, Semaphore and MultiLock with a 20 s wait (each in a process of its
// own, started at the kill), a tryLock(), a release of a lock held there, and an
// addLock() with a 0.4 s wait. Reports how long the blocking waits took (the failover
// waited out), how many of them threw, how long the calls without a wait took, and
// how far past its wait the short one ended. Writes bench/results/failover.md.
// Usage: php -n -d extension=posix -d extension=.../libredis_lock.so bench/failover.php [rounds]
require __DIR__ . '/../php-tests/_helper.inc';
require __DIR__ . '/../php-tests/_failover.inc';

$rounds = (int) ($argv[1] ?? 5);
$short = 0.4;
$rt = ['read_timeout' => 0.3, 'connect_timeout' => 0.3];
$rows = [];
foreach (['Cluster', 'Sentinel'] as $topology) {
    for ($r = 0; $r < $rounds; $r++) {
        if ($topology === 'Cluster') {
            $c = rl_start_cluster();
            $stop = fn() => rl_stop_cluster($c);
            $opts = ['cluster' => $c['seeds']] + $rt;
            $k = rl_key('failover');
            $master = rl_cluster_master_of($c['seeds'][0], $k);
            $on = function (string $name, bool $there = true) use ($c, $master) {
                do { $key = rl_key($name); } while ((rl_cluster_master_of($c['seeds'][0], $key) === $master) !== $there);
                return $key;
            };
            $keys = ['lock' => $k, 'held' => $on('held'), 'sem' => $on('sem'), 'multi' => [$on('multi'), $on('other', false)]];
            $victim = current(array_filter($c['nodes'], fn($n) => $n['dsn'] === $master));
        } else {
            $set = rl_start_sentinel_set();
            $stop = fn() => rl_stop_sentinel_set($set);
            $opts = ['sentinels' => array_column($set['sentinels'], 'dsn'), 'service' => 'mymaster'] + $rt;
            $keys = ['lock' => rl_key('failover'), 'held' => rl_key('held'), 'sem' => rl_key('sem'), 'multi' => [rl_key('multi'), rl_key('multi')]];
            $victim = $set['master'];
        }
        try {
            foreach ([new Lock($keys['lock'], 0, 5, $opts), new MultiLock($keys['multi'], 0, 5, $opts)] as $l) { $l->addLock(); $l->releaseLock(); }
            $out = rl_failover_during($opts, $keys, fn() => rl_kill_redis($victim), $short, 20);
        } finally {
            $stop();
        }
        $rows[$topology][] = $out;
        printf("%s round %d: %s\n", $topology, $r + 1, implode(', ', array_map(
            fn($kind, $v) => sprintf('%s %.2f s%s', $kind, $v[0], $v[1] === null ? '' : ' (' . $v[1] . ')'), array_keys($out['long']), $out['long'])));
    }
}

$median = function (array $xs) { sort($xs); return $xs[intdiv(count($xs), 2)]; };
$ms = fn(float $s) => number_format($s * 1000, 0) . ' ms';
$md = "<!-- written by bench/failover.php (make bench) -->\n";
$md .= sprintf("A master SIGKILLed, then callers at once; %s, %s; %d rounds per topology, each on servers started anew.\n\n",
    trim((string) shell_exec(rl_bin('server') . ' --version | cut -d" " -f1-3')), date('Y-m-d'), $rounds);
$md .= "| | blocking waits (20 s) that threw | failover waited out: median (min–max) | tryLock(): slowest answer | release there: slowest answer | $short s wait: ended past it by, at most |\n|---|---|---|---|---|---|\n";
foreach ($rows as $topology => $outs) {
    $long = [];
    $threw = 0;
    foreach ($outs as $out) {
        foreach ($out['long'] as [$s, $error]) {
            if ($error !== null) { $threw++; } else { $long[] = $s; }
        }
    }
    $md .= sprintf("| %s | %d of %d | %s | %s | %s | %s |\n", $topology, $threw, 3 * count($outs),
        $long ? sprintf('%s (%s–%s)', $ms($median($long)), $ms(min($long)), $ms(max($long))) : 'none waited out',
        $ms(max(array_map(fn($o) => $o['try'][0], $outs))), $ms(max(array_map(fn($o) => $o['release'][0], $outs))),
        $ms(max(array_map(fn($o) => $o['short'][0] - $short, $outs))));
}
$md .= "\n(The blocking waits are a Lock, a Semaphore and a MultiLock per round, each in a process of its own that started its wait at the kill; read_timeout and connect_timeout 0.3 s.)\n";
echo "\n$md";
@mkdir(__DIR__ . '/results');
file_put_contents(__DIR__ . '/results/failover.md', $md);
