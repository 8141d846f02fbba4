--TEST--
ACL: on Redis Cluster, a user with exactly the mutex, semaphore and cluster rules of docs/acl.md on every node runs the mutex and semaphores, and follows ASK during a slot migration: nothing refused, every rule used (PUBLISH or SPUBLISH, whichever the build sends); without +cluster|slots or +asking, the error names it
--FILE--
<?php
require __DIR__ . '/_acl.inc';
$c = rl_start_cluster();
try {
    $nodes = array_column($c['nodes'], 'dsn');
    // ACLs are per node: every node, replicas too, gets the user.
    $user = fn(string $name, array $drop = []) => array_map(fn($n) => rl_acl_user($n, $name, ['user', 'mutex', 'semaphore', 'cluster'], $drop), $nodes);
    $o = ['cluster' => $user('app'), 'prefix' => 'app:'] + RL_PATIENT;
    // The migration's nodes, found before counting: the helpers send CLUSTER SLOTS too.
    $src = rl_cluster_master_of($nodes[0], 'app:moving');
    $slot = (string) rl_cmd($src, 'CLUSTER', 'KEYSLOT', 'app:moving');
    $dst = current(array_filter(array_unique(array_map(fn($r) => "redis://{$r[2][0]}:{$r[2][1]}", rl_cmd($nodes[0], 'CLUSTER', 'SLOTS'))), fn($m) => $m !== $src));
    [$srcId, $dstId] = [rl_cluster_id($src), rl_cluster_id($dst)];
    rl_acl_log_reset($nodes);
    $before = rl_acl_stats($nodes);
    foreach (rl_acl_mutex_run($o, 'job') as $step => $r) { echo "cluster mutex, $step: $r\n"; }
    foreach (rl_acl_semaphore_run($o, 'pool') as $step => $r) { echo "cluster semaphore, $step: $r\n"; }
    // ASK: the key is new, so the migrating source sends its first try (a plain SET) to the target.
    rl_cmd($dst, 'CLUSTER', 'SETSLOT', $slot, 'IMPORTING', $srcId);
    rl_cmd($src, 'CLUSTER', 'SETSLOT', $slot, 'MIGRATING', $dstId);
    $m = new Lock('moving', 0, 10, $o + ['fencing' => false]);
    $t = $m->addLock();
    // Another key of that slot, for a user without +asking.
    $noasking = ['cluster' => $user('noasking', ['+asking']), 'prefix' => 'app:', 'fencing' => false] + RL_PATIENT;
    $thrown = rl_acl_throws(fn() => (new Lock('moving2{app:moving}', 0, 10, $noasking))->tryLock());
    foreach ([$dst, $src, ...$nodes] as $n) { rl_cmd($n, 'CLUSTER', 'SETSLOT', $slot, 'NODE', $dstId); }
    $released = $m->releaseLock();
    $delta = rl_acl_delta($before, rl_acl_stats($nodes));
    echo "cluster, ASK followed: ", var_export(is_string($t) && $released, true), "\n";
    echo "cluster: ", rl_acl_verdict(rl_acl_refused($nodes, 'app'), $delta, ['user', 'mutex', 'semaphore', 'cluster']), "\n";
    echo "cluster without +asking, a key being migrated: ", rl_acl_names($thrown, 'asking'), "\n";
    $o = ['cluster' => $user('noslots', ['+cluster|slots']), 'prefix' => 'app:'];
    echo "cluster without +cluster|slots: ", rl_acl_names(rl_acl_throws(fn() => (new Lock('job', 0, 10, $o))->tryLock()), 'cluster|slots'), "\n";
} finally {
    rl_stop_cluster($c);
}
?>
--EXPECT--
cluster mutex, held: ok
cluster mutex, gives up: ok
cluster mutex, waiter: woken by the release
cluster mutex, synchronized: ok
cluster mutex, lease ends: ok
cluster mutex, forced: ok
cluster mutex, fair: ok
cluster mutex, no expiry: ok
cluster mutex, watchdog: ok
cluster semaphore, held: ok
cluster semaphore, newcomer passes: ok
cluster semaphore, waiter: woken by the release
cluster semaphore, gives up: ok
cluster semaphore, other permits: ok
cluster semaphore, synchronized: ok
cluster semaphore, lease ends: ok
cluster semaphore, no expiry: ok
cluster, ASK followed: true
cluster: refused: none; never ran: none
cluster without +asking, a key being migrated: a LockException naming 'asking'
cluster without +cluster|slots: a LockException naming 'cluster|slots'
