--TEST--
redis-lock CLI on Redis Cluster (3 masters, 3 replicas): list scans every master (keys on each of them, none twice though replicas hold copies), from one seed that is a replica; --limit; inspect and release --force reach the key's master; an unreachable seed
--FILE--
<?php
require __DIR__ . '/_cli.inc';
$c = rl_start_cluster();
try {
    $seeds = $c['seeds'];
    $replica = null;
    foreach ($seeds as $s) {
        if (str_contains(rl_cmd($s, 'INFO', 'replication'), 'role:slave')) { $replica = $s; break; }
    }
    $opts = ['cluster' => $seeds, 'prefix' => 'cl:', 'owner_info' => true];
    $expected = [];
    $locks = [];
    for ($i = 0; $i < 40; $i++) {
        $k = sprintf('job:%02d', $i);
        $locks[$k] = new Lock($k, 0, 120, $opts);
        $locks[$k]->tryLock();
        $expected[$k] = 'lock';
    }
    $sems = [];
    for ($i = 0; $i < 5; $i++) {
        $sems[$i] = new Semaphore("pool:$i", 2, 0, 120, $opts);
        $sems[$i]->tryAcquire();
        $expected["pool:$i"] = 'semaphore';
    }
    ksort($expected, SORT_STRING);
    $perMaster = [];
    foreach (array_keys($expected) as $k) { $perMaster[rl_cluster_master_of($seeds[0], "cl:$k")][] = $k; }
    echo "keys on ", count($perMaster), " masters, at least 5 on each: ", var_export(min(array_map('count', $perMaster)) >= 5, true), "\n";
    // The replicas hold copies: a listing that scanned them too would show keys twice.
    $deadline = microtime(true) + 10;
    do {
        $sizes = ['master' => 0, 'slave' => 0];
        foreach ($c['nodes'] as $n) {
            $role = str_contains(rl_cmd($n['dsn'], 'INFO', 'replication'), 'role:slave') ? 'slave' : 'master';
            $sizes[$role] += rl_cmd($n['dsn'], 'DBSIZE');
        }
    } while ($sizes['slave'] < $sizes['master'] && microtime(true) < $deadline && usleep(20000) === null);
    echo "the replicas hold copies: ", var_export($sizes['slave'] === $sizes['master'] && $sizes['master'] >= 45, true), "
";

    echo "== list, one seed (a replica)\n";
    $r = rl_cli(["--cluster=$replica", '--prefix=cl:', 'list']);
    $lines = explode("\n", rtrim($r['out'], "\n"));
    echo "exit {$r['rc']}, stderr ", var_export($r['err'], true), ", rows ", count($lines) - 2, ", keys as expected: ",
        var_export(array_map(fn($l) => explode(' ', $l, 2)[0], array_slice($lines, 1, -1)) === array_map('strval', array_keys($expected)), true), "\n";
    echo "last: ", rl_cli_last($r), "\n";
    $doc = rl_cli_json(rl_cli(['--cluster', implode(',', $seeds), '--prefix', 'cl:', '--json', 'list']));
    echo "json: count {$doc['count']}, locks {$doc['locks']}, semaphores {$doc['semaphores']}, truncated ", var_export($doc['truncated'], true),
        ", kinds as expected: ", var_export(array_column($doc['items'], 'kind', 'key') == $expected, true),
        ", all held: ", var_export(array_values(array_unique(array_column($doc['items'], 'state'))) === ['write', 'held'], true), "\n";
    foreach ($perMaster as $m => $keys) {
        $listed = array_intersect(array_column($doc['items'], 'key'), $keys);
        if (count($listed) !== count($keys)) { echo "missing from $m: ", implode(',', array_diff($keys, $listed)), "\n"; }
    }
    $doc = rl_cli_json(rl_cli(['--cluster', implode(',', $seeds), '--prefix', 'cl:', '--json', '--limit=10', 'list']));
    // The first 10 the SCANs came upon, sorted.
    $listed = array_column($doc['items'], 'key');
    $sorted = $listed;
    sort($sorted, SORT_STRING);
    echo "--limit=10: count {$doc['count']}, truncated ", var_export($doc['truncated'], true), ", distinct keys of the 45, sorted: ",
        var_export(count(array_unique($listed)) === 10 && !array_diff($listed, array_keys($expected)) && $sorted === $listed, true), "\n";
    $doc = rl_cli_json(rl_cli(['--cluster', $seeds[0], '--prefix', 'cl:', '--json', 'list', 'pool:*']));
    echo "pool:*: ", implode(',', array_column($doc['items'], 'key')), "\n";

    echo "== inspect, release --force\n";
    foreach (['job:07', 'pool:3'] as $k) {
        $j = rl_cli_json(rl_cli(["--cluster=$replica", '--prefix=cl:', '--json', 'inspect', $k]));
        echo "$k: {$j['kind']} {$j['state']}, holders {$j['holders']}, owner pid is this process: ", var_export(($j['owners'][0]['pid'] ?? null) === getmypid(), true), "\n";
    }
    $r = rl_cli(["--cluster=$replica", '--prefix=cl:', 'release', '--force', 'job:07']);
    echo "exit {$r['rc']}: ", $r['out'];
    echo "job:07 held: ", var_export($locks['job:07']->isOwned(), true), ", job:08 held: ", var_export($locks['job:08']->isOwned(), true), "\n";

    echo "== an unreachable seed\n";
    $closed = rl_free_port();
    $r = rl_cli(["--cluster=redis://127.0.0.1:$closed", 'list']);
    echo "exit {$r['rc']}, stdout ", var_export($r['out'], true), ", names it: ", var_export(str_contains($r['err'], "127.0.0.1:$closed"), true),
        ", clean: ", var_export(rl_cli_clean($r), true), "\n";
} finally {
    rl_stop_cluster($c);
}
?>
--EXPECT--
keys on 3 masters, at least 5 on each: true
the replicas hold copies: true
== list, one seed (a replica)
exit 0, stderr '', rows 45, keys as expected: true
last: 45 keys (40 locks, 5 semaphores)
json: count 45, locks 40, semaphores 5, truncated false, kinds as expected: true, all held: true
--limit=10: count 10, truncated true, distinct keys of the 45, sorted: true
pool:*: pool:0,pool:1,pool:2,pool:3,pool:4
== inspect, release --force
job:07: lock write, holders 1, owner pid is this process: true
pool:3: semaphore held, holders 1, owner pid is this process: true
exit 0: released job:07: its holder was removed; the first waiter, if any, has it now
job:07 held: false, job:08 held: true
== an unreachable seed
exit 1, stdout '', names it: true, clean: true
