--TEST--
A shortening that fails keeps no long promise: extendLock($t, 0.5) on a 30 s hold, refused (a durable extension the frozen replica does not acknowledge) or unanswered (its reply lost in a partition, the renewal landing later), leaves getRemainingLifetime() at most the new lease from the send, never above the key's PTTL; a longer extension that fails keeps the bound it had; another object of the process that shortens a shared token's lease bounds the holder too, and a MultiLock's refused shortening (all or none) leaves it its lease; a durable object's extension of a reader's token is checked as that read share (true)
--SKIPIF--
<?php if (!function_exists('posix_kill')) die('skip posix');
--FILE--
<?php
require __DIR__ . '/_fault.inc';
$m = rl_start_redis();
$r = rl_start_redis(['--replicaof', '127.0.0.1', (string) $m['port']]);
$proxy = rl_test_proxy($m['port']);
/** The bound against the key's lease: at most its PTTL (5 ms for the two readings). */
function bounded(Lock $l, string $dsn, string $key): string {
    $left = $l->getRemainingLifetime();
    $pttl = (int) rl_cmd($dsn, 'PTTL', $key);
    return $left * 1000 <= $pttl + 5 ? 'within the PTTL' : sprintf('%.3f s, over the PTTL of %d ms', $left, $pttl);
}
try {
    $up = microtime(true) + 10;
    while (!str_contains((string) rl_poll($r['dsn'], 'INFO', 'replication'), 'master_link_status:up') && microtime(true) < $up) { usleep(20000); }

    // Durable: the replica acknowledges the take, then is frozen. A healthy
    // acknowledgement gets 2 s (docs/testing.md).
    $key = rl_key('short-durable');
    $a = new Lock($key, 0, 30, ['dsn' => $m['dsn'], 'durable' => 1, 'durable_timeout' => 2.0, 'auto_renew' => false] + RL_PATIENT);
    $t = $a->addLock() or die("not acquired\n");
    posix_kill($r['pid'], SIGSTOP);
    try { $a->extendLock($t, 60); echo "longer: extended without the replica\n"; }
    catch (LockConnectionException $e) { printf("longer, refused: %s, remaining above 25 s %s\n", get_class($e), var_export($a->getRemainingLifetime() > 25, true)); }
    try { $a->extendLock($t, 0.5); echo "shorter: extended without the replica\n"; }
    catch (LockConnectionException $e) {
        echo "shorter, refused: ", get_class($e), ", ", $a->getRemainingLifetime() <= 0.5 ? 'remaining <= 0.5 s' : sprintf('remaining %.1f s', $a->getRemainingLifetime()),
            ", ", bounded($a, $m['dsn'], $key), "\n";
    }
    posix_kill($r['pid'], SIGCONT);

    // A durable object extends a reader's token (another object's read share): the
    // share is renewed, and acknowledged as the share, not checked as a write hold.
    $key = rl_key('short-reader');
    $reader = new Lock($key, 0, 30, ['dsn' => $m['dsn'], 'auto_renew' => false] + RL_PATIENT);
    $rt = $reader->addReadLock() or die("no read share\n");
    $d = new Lock($key, 0, 30, ['dsn' => $m['dsn'], 'durable' => 1, 'durable_timeout' => 2.0, 'auto_renew' => false] + RL_PATIENT);
    echo "a durable extension of a reader's token: ", var_export($d->extendLock($rt, 10), true), ", the share's lease now 10 s: ",
        var_export((int) rl_cmd($m['dsn'], 'PTTL', $key) <= 10000, true), "\n";
    $reader->releaseLock();

    // Two objects of one process with one chosen token: the other's shortening bounds
    // the holder too (its lease on the server is the new one).
    $key = rl_key('short-shared');
    $h = new Lock($key, 0, 30, ['dsn' => $m['dsn'], 'auto_renew' => false] + RL_PATIENT);
    $h->tryLock('job:7') or die("not acquired\n");
    $other = new Lock($key, 0, 30, ['dsn' => $m['dsn'], 'auto_renew' => false] + RL_PATIENT);
    echo "another object shortens the shared token: ", var_export($other->extendLock('job:7', 0.5), true), ", the holder ",
        $h->getRemainingLifetime() <= 0.5 ? 'remaining <= 0.5 s' : sprintf('remaining %.1f s', $h->getRemainingLifetime()), ", ", bounded($h, $m['dsn'], $key), "\n";
    rl_cmd($m['dsn'], 'DEL', $key);
    echo "then finds it gone: ", var_export($other->extendLock('job:7', 5), true), ", the holder remaining ",
        var_export($h->getRemainingLifetime(), true), "\n";

    // A MultiLock's shortening of the shared token, refused (the token holds one of
    // its two keys): all or none, nothing changed, and the holder keeps its lease.
    $k0 = rl_key('short-multi-0');
    $k1 = rl_key('short-multi-1');
    $h = new Lock($k1, 0, 30, ['dsn' => $m['dsn'], 'auto_renew' => false] + RL_PATIENT);
    $h->tryLock('job:8') or die("not acquired\n");
    $multi = new MultiLock([$k0, $k1], 0, 30, ['dsn' => $m['dsn'], 'auto_renew' => false] + RL_PATIENT);
    echo "a MultiLock's refused shortening: ", var_export($multi->extendLock('job:8', 0.5), true), ", the holder remaining above 25 s ",
        var_export($h->getRemainingLifetime() > 25, true), ", the key's lease above 25 s ", var_export((int) rl_cmd($m['dsn'], 'PTTL', $k1) > 25000, true), "\n";
    $h->releaseLock();

    // No durable: the extension's reply is lost in a partition (the client gives up
    // after read_timeout), and the renewal lands when it heals.
    $key = rl_key('short-lost');
    $b = new Lock($key, 0, 30, ['dsn' => $proxy['dsn'], 'auto_renew' => false, 'connect_timeout' => 5, 'read_timeout' => 0.5]);
    $t = $b->addLock() or die("not acquired\n");
    $b->extendLock($t, 30);   // the renewal script is loaded
    rl_proxy($proxy, 'partition');
    [$res] = rl_timed(fn() => $b->extendLock($t, 1.5));
    echo "unanswered: ", $res instanceof LockConnectionException ? 'LockConnectionException' : rl_outcome($res), ", ",
        $b->getRemainingLifetime() <= 1.5 ? 'remaining <= 1.5 s' : sprintf('remaining %.1f s', $b->getRemainingLifetime()), "\n";
    rl_heal($proxy);
    echo "healed: the server's lease is the new one: ", var_export((int) rl_cmd($m['dsn'], 'PTTL', $key) <= 1500, true), ", ", bounded($b, $m['dsn'], $key), "\n";
} finally {
    posix_kill($r['pid'], SIGCONT);
    rl_stop_redis($r);
    rl_stop_redis($m);
}
?>
--EXPECT--
longer, refused: LockConnectionException, remaining above 25 s true
shorter, refused: LockConnectionException, remaining <= 0.5 s, within the PTTL
a durable extension of a reader's token: true, the share's lease now 10 s: true
another object shortens the shared token: true, the holder remaining <= 0.5 s, within the PTTL
then finds it gone: false, the holder remaining 0.0
a MultiLock's refused shortening: false, the holder remaining above 25 s true, the key's lease above 25 s true
unanswered: LockConnectionException, remaining <= 1.5 s
healed: the server's lease is the new one: true, within the PTTL
