--TEST--
ACL: each feature of docs/acl.md (mutex, shared locks, fencing, owner_info, semaphores) runs as a user with exactly the doc's rules: nothing refused, every rule used, waiters woken by the release; without pub/sub rights a waiter polls and still gets the lock
--FILE--
<?php
require __DIR__ . '/_acl.inc';
$srv = rl_start_redis();
try {
    $admin = $srv['dsn'];
    $o = ['dsn' => rl_acl_user($admin, 'app', ['mutex']), 'prefix' => 'app:'];
    $before = rl_acl_stats([$admin]);
    foreach (rl_acl_mutex_run($o, 'job') as $step => $r) { echo "mutex, $step: $r\n"; }
    echo "mutex: ", rl_acl_verdict(rl_acl_delta($before, rl_acl_stats([$admin])), ['mutex']), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
mutex, held: ok
mutex, gives up: ok
mutex, waiter: woken by the release
mutex, synchronized: ok
mutex, forced: ok
mutex, no expiry: ok
mutex, watchdog: ok
mutex: refused: none; never ran: none
