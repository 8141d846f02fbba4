--TEST--
ACL: with Sentinel, the sentinels' user has exactly the sentinel rules of docs/acl.md and the master's the mutex, ROLE and WAIT rules (wait_replicas): the mutex works, nothing is refused, every rule is used; without the sentinel rule or +role, the error names it; without +wait, WAIT is refused unseen; durable grants with the durable rules (+wait) work, nothing refused, and without +wait fail naming it and leave nothing
--FILE--
<?php
require __DIR__ . '/_acl.inc';
$set = rl_start_sentinel_set();
try {
    $master = $set['master']['dsn'];
    $users = function (string $user, array $sentinelDrop = [], array $masterDrop = [], array $blocks = ['wait_replicas']) use ($set) {
        $sentinels = array_map(fn($s) => rl_acl_user($s['dsn'], $user, ['sentinel'], $sentinelDrop), $set['sentinels']);
        // The replica too: it may become the master.
        foreach (['replica', 'master'] as $role) { $dsn = rl_acl_user($set[$role]['dsn'], $user, array_merge(['user', 'mutex', 'sentinel_master'], $blocks), $masterDrop); }
        $u = parse_url($dsn);
        return ['sentinels' => $sentinels, 'service' => 'mymaster', 'dsn' => "redis://{$u['user']}:{$u['pass']}@127.0.0.1",
                'prefix' => 'app:'] + (in_array('durable', $blocks, true) ? ['durable' => 1] : ['wait_replicas' => 1]);
    };
    $o = $users('app');
    foreach ($set['sentinels'] as $s) { rl_cmd($s['dsn'], 'ACL', 'LOG', 'RESET'); }
    rl_acl_log_reset([$master]);
    $before = rl_acl_stats([$master]);
    foreach (rl_acl_mutex_run($o, 'job') as $step => $r) { echo "sentinel, $step: $r\n"; }
    echo "sentinel, master: ", rl_acl_verdict(rl_acl_refused([$master], 'app'), rl_acl_delta($before, rl_acl_stats([$master])), ['user', 'mutex', 'sentinel_master', 'wait_replicas']), "\n";
    $refused = array_sum(array_map(fn($s) => count(rl_cmd($s['dsn'], 'ACL', 'LOG')), $set['sentinels']));
    echo "sentinel, sentinels refused: $refused\n";
    $l = new Lock('replicated', 0, 10, $o);
    $t = $l->addLock();
    echo "wait_replicas: on the replica when addLock() returns: ", var_export(rl_cmd($set['replica']['dsn'], 'GET', 'app:replicated') === $t, true), "\n";

    $o = $users('nodiscovery', ['+sentinel|get-master-addr-by-name']);
    echo "sentinels without +sentinel|get-master-addr-by-name: ",
        rl_acl_names(rl_acl_throws(fn() => (new Lock('job', 0, 10, $o))->tryLock()), 'sentinel|get-master-addr-by-name'), "\n";
    // The count of 0 above means something: the sentinels do log refusals.
    $logged = array_sum(array_map(fn($s) => count(rl_cmd($s['dsn'], 'ACL', 'LOG')), $set['sentinels']));
    echo "sentinels without it logged refusals: ", var_export($logged > 0, true), "\n";
    $o = $users('norole', [], ['+role']);
    echo "master without +role: ", rl_acl_names(rl_acl_throws(fn() => (new Lock('job', 0, 10, $o))->tryLock()), 'role'), "\n";
    // Best effort by design: the acquisition succeeds; only the server saw the refusal.
    $o = $users('nowait', [], ['+wait']);
    rl_acl_log_reset([$master]);
    $l = new Lock('unwaited', 0, 10, $o);
    echo "master without +wait: addLock() ", is_string($l->addLock()) ? 'succeeds' : 'fails', ", ",
        rl_acl_verdict(rl_acl_refused([$master], 'nowait'), [], []), "\n";
    // Durable grants need +wait: with it, nothing refused and every rule used; without
    // it, the acquisition fails, naming the refusal, and leaves nothing behind.
    $o = $users('durable', [], [], ['durable']);
    rl_acl_log_reset([$master]);
    $before = rl_acl_stats([$master]);
    $l = new Lock('durable', 0, 10, $o);
    $t = $l->addLock();
    echo "durable: on the replica when addLock() returns: ", var_export(rl_cmd($set['replica']['dsn'], 'GET', 'app:durable') === $t, true), ", released: ", var_export($l->releaseLock(), true), ", ",
        rl_acl_verdict(rl_acl_refused([$master], 'durable'), rl_acl_delta($before, rl_acl_stats([$master])), ['durable']), "\n";
    $o = $users('nodurable', [], ['+wait'], ['durable']);
    echo "durable without +wait: ", rl_acl_names(rl_acl_throws(fn() => (new Lock('durable', 0, 10, $o))->tryLock()), 'wait'),
        ", key left: ", rl_cmd($master, 'EXISTS', 'app:durable'), "\n";
} finally {
    rl_stop_sentinel_set($set);
}
?>
--EXPECT--
sentinel, held: ok
sentinel, gives up: ok
sentinel, waiter: woken by the release
sentinel, synchronized: ok
sentinel, lease ends: ok
sentinel, forced: ok
sentinel, fair: ok
sentinel, no expiry: ok
sentinel, watchdog: ok
sentinel, master: refused: none; never ran: none
sentinel, sentinels refused: 0
wait_replicas: on the replica when addLock() returns: true
sentinels without +sentinel|get-master-addr-by-name: a LockException naming 'sentinel|get-master-addr-by-name'
sentinels without it logged refusals: true
master without +role: a LockException naming 'role'
master without +wait: addLock() succeeds, refused: wait; never ran: none
durable: on the replica when addLock() returns: true, released: true, refused: none; never ran: none
durable without +wait: a LockException naming 'wait', key left: 0
