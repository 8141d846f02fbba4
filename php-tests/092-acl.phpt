--TEST--
ACL: each feature of docs/acl.md (mutex, shared locks, fencing, owner_info, semaphores) runs as a user with exactly the doc's rules (read out of the doc): nothing refused, every rule used, waiters woken by the release; without pub/sub rights a waiter polls and still gets the lock; a releaser refused PUBLISH (and LPUSH) still releases, and the waiter it could not tell gets the lock by its own timer
--FILE--
<?php
require __DIR__ . '/_acl.inc';
$srv = rl_start_redis();
try {
    $admin = $srv['dsn'];
    // Each block is tested here, in another 09[2-6]-acl*.phpt, in 097 (eviction) or in 104 (cad): a new one must be too.
    echo "blocks: ", implode(' ', rl_acl_block_names()), "\n";
    $run = function (string $label, array $blocks, array $check, callable $fn) use ($admin) {
        $o = ['dsn' => rl_acl_user($admin, 'app', $blocks), 'prefix' => 'app:'];
        rl_acl_log_reset([$admin]);
        $before = rl_acl_stats([$admin]);
        foreach ($fn($o) as $step => $r) { echo "$label, $step: $r\n"; }
        echo "$label: ", rl_acl_verdict(rl_acl_refused([$admin], 'app'), rl_acl_delta($before, rl_acl_stats([$admin])), $check), "\n";
    };
    $run('mutex', ['user', 'mutex'], ['user', 'mutex'], fn($o) => rl_acl_mutex_run($o, 'job'));
    $run('shared', ['user', 'mutex', 'shared'], ['shared'], fn($o) => rl_acl_shared_run($o, 'report'));
    $run('owner_info', ['user', 'mutex', 'semaphore', 'owner_info'], ['owner_info'], function ($o) {
        $o += ['owner_info' => true];
        $out = [];
        $l = new Lock('recorded', 0, 10, $o);
        rl_acl_step($out, 'lock', fn() => $l->addLock() && $l->inspect()['owner']['pid'] === getmypid());
        $s = new Semaphore('pool', 1, 0, 10, $o);
        rl_acl_step($out, 'semaphore', function () use ($s, $o) {
            $s->acquire();
            // A waiter records itself when it queues.
            $w = rl_acl_waiter(fn() => rl_acl_keep(new Semaphore('pool', 1, 5, 10, $o + RL_ACL_SLOW))->acquire() !== false);
            $queued = rl_acl_until(fn() => $s->inspect()['waiters'] === 1);
            $released = microtime(true);
            $s->release();
            return ($queued ? '' : 'never seen queued; ') . rl_acl_woken(rl_acl_outcome($w), $released);
        });
        return $out;
    });
    $run('semaphore', ['user', 'semaphore'], ['user', 'semaphore'], fn($o) => rl_acl_semaphore_run($o, 'pool'));
    // Without pub/sub rights a waiter cannot subscribe: it polls, and still gets the lock.
    $o = ['dsn' => rl_acl_user($admin, 'nopubsub', ['user', 'mutex'], ['+subscribe', '+unsubscribe', '+publish', '+pubsub|numsub', '&redis_lock:wake:*']), 'prefix' => 'app:'];
    rl_acl_log_reset([$admin]);
    $h = new Lock('polled', 0, 10, $o);
    $h->addLock();
    $w = rl_acl_waiter(fn() => rl_acl_keep(new Lock('polled', 5, 10, $o + ['retry_delay' => 0.05, 'retry_delay_max' => 0.1]))->addLock() !== false);
    usleep(300000);
    $released = microtime(true);
    $h->releaseLock();
    $r = rl_acl_outcome($w);
    echo "no pub/sub: ", isset($r['error']) ? $r['error'] : sprintf('got it %s, heard no grant %s, within 0.5 s of the release %s',
        var_export($r['got'], true), var_export($r['heard'] === 0, true), var_export($r['at'] - $released < 0.5, true)), "\n";
    echo "no pub/sub: ", rl_acl_verdict(rl_acl_refused([$admin], 'nopubsub'), [], []), "\n";
    // A releaser that may not PUBLISH, and a waiter that listens: the release takes the
    // waiter's entry off the queue, cannot tell it, and cannot put it back (no LPUSH in
    // the mutex rules): it still releases, and the waiter gets the lock by its own
    // timer (1 s at most while queued).
    $full = ['dsn' => rl_acl_user($admin, 'full', ['user', 'mutex']), 'prefix' => 'app:'];
    $nopub = ['dsn' => rl_acl_user($admin, 'nopub', ['user', 'mutex'], ['+publish']), 'prefix' => 'app:'];
    rl_acl_log_reset([$admin]);
    $h = new Lock('untold', 0, 10, $nopub);
    $h->addLock();
    $w = rl_acl_waiter(fn() => rl_acl_keep(new Lock('untold', 5, 10, $full))->addLock() !== false);
    $queued = rl_acl_until(fn() => $h->inspect()['waiters'] === 1);
    $released = microtime(true);
    $ok = $h->releaseLock();
    $r = rl_acl_outcome($w);
    echo "releaser without PUBLISH: ", isset($r['error']) ? $r['error'] : sprintf('queued %s, released %s, the waiter got it %s, within 1.5 s %s, heard no grant %s',
        var_export($queued, true), var_export($ok, true), var_export($r['got'], true), var_export($r['at'] - $released < 1.5, true), var_export($r['heard'] === 0, true)), "\n";
    echo "releaser without PUBLISH: ", rl_acl_verdict(rl_acl_refused([$admin], 'nopub'), [], []), "\n";
    // Last: once a process has asked for a fencing token, all its acquisitions take one (INCR).
    $run('fencing', ['user', 'mutex', 'fencing'], ['fencing'], function ($o) {
        $out = [];
        $f = new Lock('fenced', 0, 10, $o);
        rl_acl_step($out, 'numbered', function () use ($f, $o) {
            $f->addLock();
            $first = $f->getFencingToken();
            // The grant takes the waiter's number in the releaser's script.
            $w = rl_acl_waiter(function () use ($o, $first) {
                $l = rl_acl_keep(new Lock('fenced', 5, 10, $o + RL_ACL_SLOW));
                return $l->addLock() !== false && $l->getFencingToken() > $first;
            });
            $queued = rl_acl_until(fn() => $f->inspect()['waiters'] === 1);
            $released = microtime(true);
            $f->releaseLock();
            return ($first > 0 ? '' : 'no first number; ') . ($queued ? '' : 'never seen queued; ') . rl_acl_woken(rl_acl_outcome($w), $released);
        });
        return $out;
    });
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
blocks: user eviction mutex cad shared fencing owner_info semaphore wait_replicas durable sentinel sentinel_master cluster admin
mutex, held: ok
mutex, gives up: ok
mutex, waiter: woken by the release
mutex, synchronized: ok
mutex, lease ends: ok
mutex, forced: ok
mutex, fair: ok
mutex, no expiry: ok
mutex, watchdog: ok
mutex: refused: none; never ran: none
shared, readers: ok
shared, writer after readers: woken by the release
shared, reader after writer: woken by the release
shared, upgrade: woken by the release
shared, downgrade: ok
shared: refused: none; never ran: none
owner_info, lock: ok
owner_info, semaphore: woken by the release
owner_info: refused: none; never ran: none
semaphore, held: ok
semaphore, newcomer passes: ok
semaphore, waiter: woken by the release
semaphore, gives up: ok
semaphore, other permits: ok
semaphore, synchronized: ok
semaphore, lease ends: ok
semaphore, no expiry: ok
semaphore: refused: none; never ran: none
no pub/sub: got it true, heard no grant true, within 0.5 s of the release true
no pub/sub: refused: subscribe; never ran: none
releaser without PUBLISH: queued true, released true, the waiter got it true, within 1.5 s true, heard no grant true
releaser without PUBLISH: refused: lpush publish; never ran: none
fencing, numbered: woken by the release
fencing: refused: none; never ran: none
