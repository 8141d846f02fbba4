--TEST--
ACL: a user missing one rule of docs/acl.md (a command a script runs, a command sent directly, a key pattern) gets a LockException that names what it lacks
--FILE--
<?php
require __DIR__ . '/_acl.inc';
$srv = rl_start_redis();
try {
    $admin = $srv['dsn'];
    // The key is held by another user, with every rule.
    $other = ['dsn' => rl_acl_user($admin, 'full', ['user', 'mutex', 'shared', 'fencing', 'owner_info']), 'prefix' => 'app:'];
    $as = fn(array $blocks, array $drop, array $more = []) => ['dsn' => rl_acl_user($admin, 'app', $blocks, $drop), 'prefix' => 'app:'] + $more;

    $o = $as(['user', 'mutex'], ['+rpush']);
    $held = new Lock('busy', 0, 10, $other);
    $held->addLock();
    echo "mutex without +rpush, a wait: ", rl_acl_names(rl_acl_throws(fn() => (new Lock('busy', 0.3, 10, $o))->addLock()), 'rpush'), "\n";
    $o = $as(['user', 'mutex'], ['+exists']);
    echo "mutex without +exists, isLocked(): ", rl_acl_names(rl_acl_throws(fn() => (new Lock('busy', 0, 10, $o))->isLocked()), 'exists'), "\n";
    $o = $as(['user', 'mutex'], ['+del']);
    $l = new Lock('job', 0, 10, $o);
    echo "mutex without +del, releaseLock(): ", rl_acl_names(rl_acl_throws(fn() => $l->addLock() && $l->releaseLock()), 'del'), "\n";
    // The lock's own key is allowed: the first try (SET) works, the scripts that name the queue do not.
    $o = $as(['user', 'mutex'], ['~{app:*']);
    $l = new Lock('job2', 0, 10, $o);
    $thrown = rl_acl_throws(fn() => $l->addLock() && $l->releaseLock());
    echo "mutex without ~{app:*, releaseLock(): ", str_starts_with($thrown, 'LockException: ') && stripos($thrown, 'key') !== false ? 'a LockException about keys' : $thrown, "\n";

    $o = $as(['user', 'mutex', 'shared'], ['+zadd']);
    echo "shared without +zadd, addReadLock(): ", rl_acl_names(rl_acl_throws(fn() => (new Lock('doc', 0, 10, $o))->addReadLock()), 'zadd'), "\n";
    $o = $as(['user', 'mutex', 'owner_info'], ['+hset'], ['owner_info' => true]);
    echo "owner_info without +hset, addLock(): ", rl_acl_names(rl_acl_throws(fn() => (new Lock('who', 0, 10, $o))->addLock()), 'hset'), "\n";
    $o = $as(['user', 'semaphore'], ['+hmget']);
    echo "semaphore without +hmget, acquire(): ", rl_acl_names(rl_acl_throws(fn() => (new Semaphore('pool', 2, 0, 10, $o))->acquire()), 'hmget'), "\n";
    // Last: a process that asked for a fencing token takes one at every acquisition.
    $o = $as(['user', 'mutex', 'fencing'], ['+incr']);
    $l = new Lock('fenced', 0, 10, $o);
    echo "fencing without +incr, getFencingToken(): ", rl_acl_names(rl_acl_throws(fn() => $l->addLock() && $l->getFencingToken()), 'incr'), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
mutex without +rpush, a wait: a LockException naming 'rpush'
mutex without +exists, isLocked(): a LockException naming 'exists'
mutex without +del, releaseLock(): a LockException naming 'del'
mutex without ~{app:*, releaseLock(): a LockException about keys
shared without +zadd, addReadLock(): a LockException naming 'zadd'
owner_info without +hset, addLock(): a LockException naming 'hset'
semaphore without +hmget, acquire(): a LockException naming 'hmget'
fencing without +incr, getFencingToken(): a LockException naming 'incr'
