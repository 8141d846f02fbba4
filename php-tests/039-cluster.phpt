--TEST--
Redis Cluster (3 masters, 3 replicas): durable grants acknowledged by a replica of the slot's master (none with it frozen); 200 locks across slots each on its slot's master; a second client refused; auxiliary keys in the lock's slot; MOVED and ASK followed during a slot migration, and a waiter follows the slot to its new master, where the release hands it the lock; wake on release, shard-local (sharded pub/sub: no bus PUBLISH message); clear errors
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$c = rl_start_cluster();
try {
    $seeds = $c['seeds'];
    $replica = null;
    foreach ($seeds as $dsn) {
        if (str_contains(rl_cmd($dsn, 'INFO', 'replication'), 'role:slave')) { $replica = $dsn; break; }
    }
    // One seed is enough, even a replica: the slot map is read from it.
    $opts = ['cluster' => [$replica], 'read_timeout' => 0.5];

    $keys = $tokens = $locks = [];
    for ($i = 0; $i < 200; $i++) {
        $keys[$i] = rl_key("c$i");
        $locks[$i] = new Lock($keys[$i], 0, 30, $opts);
        $tokens[$i] = $locks[$i]->addLock();
    }
    $masters = []; $onMaster = 0; $fenced = 0;
    foreach ($keys as $i => $k) {
        $m = rl_cluster_master_of($seeds[0], $k);
        $masters[$m] = true;
        if (is_string($tokens[$i]) && rl_cmd($m, 'GET', $k) === $tokens[$i]) { $onMaster++; }
        // The fencing counter lives beside the lock, on the same master (the numbers
        // are issued now, as they are asked for: the check-and-INCR runs there too).
        $f = $locks[$i]->getFencingToken();
        if ((int) rl_cmd($m, 'GET', "{{$k}}:fence") === $f) { $fenced++; }
    }
    echo "held on their slots' masters: $onMaster of 200, over ", count($masters), " masters; fencing counters beside them: $fenced\n";
    $refused = 0;
    foreach ($keys as $k) {
        if ((new Lock($k, 0, 30, ['cluster' => $seeds]))->tryLock() === false) { $refused++; }
    }
    echo "a second client refused: $refused of 200\n";
    $released = 0;
    foreach ($locks as $l) { $released += (int) $l->releaseLock(); }
    $left = 0;
    foreach ($keys as $k) { $left += rl_cmd(rl_cluster_master_of($seeds[0], $k), 'EXISTS', $k); }
    echo "released: $released, left: $left\n";

    // Keys that cannot be wrapped in a hash tag still keep their helpers in their slot:
    // a new counter there, on the key's master, whose first number is that master's
    // clock in µs when it was issued.
    foreach (['a}b:' . bin2hex(random_bytes(4)), '{}x' . bin2hex(random_bytes(4))] as $odd) {
        $l = new Lock($odd, 0, 30, $opts + ['fair' => true]);
        $m = rl_cluster_master_of($seeds[0], $odd);
        $before = rl_server_us($m);
        $taken = is_string($l->addLock());
        $f = $l->getFencingToken();
        $counter = rl_cmd($m, 'KEYS', "*$odd:fence}");
        $fresh = rl_is_fence($f) && $f >= $before && $f <= rl_server_us($m)
            && count($counter) === 1 && rl_cmd($m, 'GET', $counter[0]) === (string) $f;
        echo "odd key: ", var_export($taken && $fresh && $l->releaseLock(), true), "\n";
    }

    // ini: a comma-separated list.
    ini_set('redis_lock.cluster', implode(', ', $seeds));
    $l = new Lock(rl_key('ini'), 0, 5);
    echo "ini: ", var_export(is_string($l->addLock()) && $l->releaseLock(), true), "\n";
    ini_restore('redis_lock.cluster');

    // Wake on release: the waiter listens on the key's master, on a sharded channel
    // of the key's slot (Redis 7 and later), where the grant is published with
    // SPUBLISH, so the release hands the lock over in the same step and the grant
    // never crosses the cluster bus to the other shards (no bus PUBLISH message).
    $bus = function () use ($c): array {
        $sum = ['publish' => 0, 'publishshard' => 0];
        foreach ($c['nodes'] as $n) {
            $info = rl_cmd($n['dsn'], 'CLUSTER', 'INFO');
            foreach ($sum as $k => $_) { $sum[$k] += preg_match("/^cluster_stats_messages_{$k}_sent:(\d+)/m", $info, $m) ? (int) $m[1] : 0; }
        }
        return $sum;
    };
    $before = $bus();
    // A key that the first seed does not serve, so that any other node would be wrong.
    do { $wk = rl_key('wake'); } while (rl_cluster_master_of($seeds[0], $wk) === $seeds[0]);
    $wmaster = rl_cluster_master_of($seeds[0], $wk);
    $pid = pcntl_fork();
    if ($pid === 0) {
        $h = new Lock($wk, 0, 10, ['cluster' => $seeds]);
        $h->addLock();
        usleep(400000);
        $h->releaseLock();
        $at = microtime(true);
        // Right after the release, before the waiter could have sent anything.
        file_put_contents("/tmp/rl-wake-$wk", $at . '|' . rl_cmd($wmaster, 'GET', $wk));
        exit(0);
    }
    usleep(100000);
    $w = new Lock($wk, 5, 10, ['cluster' => $seeds]);
    $got = $w->addLock();
    $now = microtime(true);
    pcntl_waitpid($pid, $st);
    [$at, $after] = explode('|', file_get_contents("/tmp/rl-wake-$wk"));
    @unlink("/tmp/rl-wake-$wk");
    // Without the grant the waiter would look again only after a second.
    echo "handed over by the release: ", var_export(is_string($got) && $after === $got, true),
        ", waiter woken at once: ", var_export($now - (float) $at < 0.5, true), "\n";
    $after = $bus();
    echo "bus PUBLISH messages for it: ", $after['publish'] - $before['publish'],
        ", shard-local ones (to the shard's replica): ", var_export($after['publishshard'] > $before['publishshard'], true), "\n";
    $w->releaseLock();

    // Shared locks on the slot's master: two readers, a writer waiting behind them in
    // another process, handed the lock by the last reader's release.
    $readers = [new Lock($wk, 0, 10, ['cluster' => $seeds]), new Lock($wk, 0, 10, ['cluster' => $seeds])];
    $both = is_string($readers[0]->tryReadLock()) && is_string($readers[1]->tryReadLock());
    echo "two readers on the slot's master: ", var_export($both && rl_cmd($wmaster, 'ZCARD', "{{$wk}}:readers") === 2, true), "\n";
    $pid = pcntl_fork();
    if ($pid === 0) {
        $w = new Lock($wk, 5, 10, ['cluster' => $seeds]);
        $t = $w->addLock();
        exit(is_string($t) && rl_cmd($wmaster, 'GET', $wk) === $t ? 0 : 1);
    }
    for ($i = 0; $i < 100 && !rl_cmd($wmaster, 'LLEN', "{{$wk}}:queue"); $i++) { usleep(10000); }
    $readers[0]->releaseLock();
    usleep(100000);
    echo "the writer waits for the last reader: ", rl_cmd($wmaster, 'LLEN', "{{$wk}}:queue"), " queued\n";
    $readers[1]->releaseLock();
    pcntl_waitpid($pid, $st);
    echo "handed to the writer by the last release: ", var_export(pcntl_wexitstatus($st) === 0, true), "\n";

    // A semaphore on the slot's master: a waiter in another process is handed the
    // permits by the release.
    $sk = $wk . ':sem';
    $smaster = rl_cluster_master_of($seeds[0], $sk);
    $sem = new Semaphore($sk, 2, 0, 10, ['cluster' => $seeds]);
    $sem->tryAcquire(2);
    $pid = pcntl_fork();
    if ($pid === 0) {
        $w = new Semaphore($sk, 2, 5, 10, ['cluster' => $seeds]);
        $t = $w->acquire();
        exit(is_string($t) && rl_cmd($smaster, 'ZSCORE', "{{$sk}}:readers", $t) !== null ? 0 : 1);
    }
    for ($i = 0; $i < 100 && !rl_cmd($smaster, 'LLEN', "{{$sk}}:queue"); $i++) { usleep(10000); }
    $sem->release();
    pcntl_waitpid($pid, $st);
    echo "semaphore: permits handed over on the slot's master: ", var_export(pcntl_wexitstatus($st) === 0, true), "\n";

    // A grant PUBLISHed on another node, forged, while the lock is still held. On a
    // sharded channel it is not heard at all; on a plain one (Redis 6) it reaches every
    // node's subscribers, and a grant heard there is confirmed before addLock() believes it.
    $fk = rl_key('forged');
    $fmaster = rl_cluster_master_of($seeds[0], $fk);
    $holder = new Lock($fk, 0, 10, ['cluster' => $seeds]);
    $holder->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) {
        $w = new Lock($fk, 5, 10, ['cluster' => $seeds]);
        $t = $w->addLock();
        $sound = is_string($t) && rl_cmd($fmaster, 'GET', $fk) === $t && $w->getFencingToken() !== 999;
        exit($sound ? 0 : 1);
    }
    $entry = null;
    for ($i = 0; $i < 100 && !$entry; $i++) { usleep(20000); $entry = rl_cmd($fmaster, 'LINDEX', "{{$fk}}:queue", '0'); }
    [$wt, $channel] = rl_queue_entry($entry);
    $elsewhere = current(array_filter(array_keys($masters), fn($m) => $m !== $fmaster));
    // In the grant's own shape (`g<fence>@<server ms>:<token>`), so that only where it
    // was heard, not how it reads, can have it ignored.
    rl_cmd($elsewhere, 'PUBLISH', $channel, 'g999@' . intdiv(rl_server_us($elsewhere), 1000) . ":$wt");
    usleep(300000);
    $released = $holder->releaseLock();
    pcntl_waitpid($pid, $st);
    echo "forged grant ignored: ", var_export($released && pcntl_wexitstatus($st) === 0, true), "\n";

    // A slot migration. Pick a key whose slot is empty, lock and release it once, so
    // that this process has the slot map, then move the slot under it.
    do {
        $mk = rl_key('moved');
        $src = rl_cluster_master_of($seeds[0], $mk);
        $slot = rl_cmd($src, 'CLUSTER', 'KEYSLOT', $mk);
    } while (rl_cmd($src, 'CLUSTER', 'COUNTKEYSINSLOT', (string) $slot) !== 0);
    $dst = current(array_filter(array_keys($masters), fn($m) => $m !== $src));
    $plain = ['cluster' => $seeds, 'fencing' => false, 'read_timeout' => 0.2];
    $p = new Lock($mk, 0, 30, $plain);
    $p->addLock(); $p->releaseLock();
    rl_cmd($dst, 'CLUSTER', 'SETSLOT', (string) $slot, 'IMPORTING', rl_cluster_id($src));
    rl_cmd($src, 'CLUSTER', 'SETSLOT', (string) $slot, 'MIGRATING', rl_cluster_id($dst));
    // ASK: the key is new, so the source sends it to the importing node.
    $t = $p->addLock();
    echo "ASK followed: ", var_export(is_string($t) && rl_cmd($dst, 'CLUSTER', 'COUNTKEYSINSLOT', (string) $slot) === 1
        && rl_cmd($src, 'CLUSTER', 'COUNTKEYSINSLOT', (string) $slot) === 0, true), "\n";
    // A script's keys split by the migration: Redis says TRYAGAIN until it ends.
    $f = new Lock(rl_key('tryagain') . "{{$mk}}", 0, 30, ['cluster' => $seeds, 'read_timeout' => 0.2]);
    try { $f->addLock(); echo "no error\n"; }
    catch (LockConnectionException $e) { echo get_class($e), ": names the migration: ", var_export(str_contains($e->getMessage(), "migrated"), true), "\n"; }
    // A waiter for the lock in the migrating slot, in another process: it follows
    // the slot to its new master and listens there (on a sharded channel the old
    // master drops once the slot is gone), where the release hands it the lock.
    $mwait = tempnam(sys_get_temp_dir(), 'rl-039-');
    $wpid = pcntl_fork();
    if ($wpid === 0) {
        $got = (new Lock($mk, 8, 30, ['cluster' => $seeds]))->addLock();
        file_put_contents($mwait, is_string($got) ? sprintf('%.6f', microtime(true)) : 'no');
        exit(0);
    }
    for ($i = 0; $i < 200 && !rl_cmd($dst, 'LLEN', "{{$mk}}:queue"); $i++) { usleep(10000); }
    foreach ([$dst, $src] as $m) { rl_cmd($m, 'CLUSTER', 'SETSLOT', (string) $slot, 'NODE', rl_cluster_id($dst)); }
    foreach (array_keys($masters) as $m) { rl_cmd($m, 'CLUSTER', 'SETSLOT', (string) $slot, 'NODE', rl_cluster_id($dst)); }
    // Until the waiter listens on the new master (an entry there whose channel it hears).
    $there = function () use ($dst, $mk): bool {
        foreach ((array) rl_cmd($dst, 'LRANGE', "{{$mk}}:queue", '0', '-1') as $entry) {
            $ch = rl_queue_entry($entry)[1];
            if (rl_cmd($dst, 'PUBSUB', ($ch[16] ?? '') === '{' ? 'SHARDNUMSUB' : 'NUMSUB', $ch)[1] > 0) { return true; }
        }
        return false;
    };
    for ($i = 0; $i < 400 && !$there(); $i++) { usleep(10000); }
    echo "the waiter listens on the slot's new master: ", var_export($there(), true), "\n";
    // MOVED: this process still sends the slot to the source, which redirects.
    $releasedAt = microtime(true);
    echo "MOVED followed: release ", var_export($p->releaseLock(), true), "\n";
    pcntl_waitpid($wpid, $st);
    $woken = file_get_contents($mwait);
    unlink($mwait);
    echo "the waiter got it at the release: ", var_export($woken !== 'no' && (float) $woken - $releasedAt < 0.5, true),
        ", the lock and its queue left: ", rl_cmd($dst, 'EXISTS', $mk, "{{$mk}}:queue"), "\n";
    $q = new Lock($mk, 0, 30, ['cluster' => $seeds]);
    echo "locks again in the moved slot: ", var_export(is_string($q->addLock()) && rl_cmd($dst, 'EXISTS', $mk) === 1 && $q->releaseLock(), true), "\n";

    // Errors.
    $dead = 'redis://127.0.0.1:' . rl_free_port();
    try { (new Lock(rl_key('e'), 0, 5, ['cluster' => [$dead], 'connect_timeout' => 0.2]))->addLock(); }
    catch (LockConnectionException $e) { echo get_class($e), ': ', str_replace($dead, 'DEAD', $e->getMessage()), "\n"; }
    $plainSrv = rl_start_redis();
    try { (new Lock(rl_key('e'), 0, 5, ['cluster' => [$plainSrv['dsn']]]))->addLock(); }
    catch (LockConnectionException $e) { echo get_class($e), ': ', var_export(str_contains($e->getMessage(), 'cluster support disabled'), true), "\n"; }
    rl_stop_redis($plainSrv);
    foreach ([['cluster' => $seeds, 'servers' => $seeds], ['cluster' => $seeds, 'sentinels' => $seeds, 'service' => 'm'],
              ['cluster' => ['redis://127.0.0.1:7000/2']], ['cluster' => []], ['cluster' => 'redis://127.0.0.1:7000']] as $bad) {
        try { new Lock('k', 0, 5, $bad); echo "accepted\n"; }
        catch (ValueError | TypeError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
    }

    // Durable grants on a Cluster: each hold is acknowledged by a replica of its
    // slot's master; with that replica frozen, none counts.
    $dk = rl_key('durable');
    // A healthy replica's acknowledgement is awaited up to 2 s (a busy machine kept
    // one past 100 ms in 099); the frozen one's for 0.3 s.
    $durable = ['cluster' => $seeds, 'durable' => 1, 'durable_timeout' => 2.0] + RL_PATIENT;
    $dl = new Lock($dk, 0, 5, $durable);
    $t = $dl->addLock();
    echo "durable on a cluster: ", var_export(is_string($t) && $dl->releaseLock($t), true);
    $ownerPort = (int) parse_url(rl_cluster_master_of($seeds[0], $dk), PHP_URL_PORT);
    $follower = null;
    foreach ($c['nodes'] as $n) {
        $role = rl_cmd($n['dsn'], 'ROLE');
        if ($role[0] === 'slave' && (int) $role[2] === $ownerPort) { $follower = $n; }
    }
    posix_kill($follower['pid'], SIGSTOP);
    try { (new Lock($dk, 0, 5, ['durable_timeout' => 0.3] + $durable))->tryLock(); echo ", acquired with its replica frozen\n"; }
    catch (LockConnectionException $e) { echo ", its replica frozen: ", str_contains($e->getMessage(), 'could not make the lock durable: 0 of 1 replicas') ? 'not durable' : $e->getMessage(), "\n"; }
    posix_kill($follower['pid'], SIGCONT);
    // Last, since it takes the cluster down: a slot its master stops serving.
    do {
        $dk = rl_key('down');
        $owner = rl_cluster_master_of($seeds[0], $dk);
        $dslot = (string) rl_cmd($owner, 'CLUSTER', 'KEYSLOT', $dk);
    } while (rl_cmd($owner, 'CLUSTER', 'COUNTKEYSINSLOT', $dslot) !== 0);
    $d = new Lock($dk, 0, 5, ['cluster' => $seeds, 'fencing' => false]);
    $d->addLock(); $d->releaseLock();
    rl_cmd($owner, 'CLUSTER', 'DELSLOTS', $dslot);
    try { $d->addLock(); echo "no error\n"; }
    catch (LockConnectionException $e) { echo "slot not served: ", get_class($e), ', names CLUSTERDOWN: ', var_export(str_contains($e->getMessage(), 'CLUSTERDOWN'), true), "\n"; }
} finally {
    rl_stop_cluster($c);
}
?>
--EXPECT--
held on their slots' masters: 200 of 200, over 3 masters; fencing counters beside them: 200
a second client refused: 200 of 200
released: 200, left: 0
odd key: true
odd key: true
ini: true
handed over by the release: true, waiter woken at once: true
bus PUBLISH messages for it: 0, shard-local ones (to the shard's replica): true
two readers on the slot's master: true
the writer waits for the last reader: 1 queued
handed to the writer by the last release: true
semaphore: permits handed over on the slot's master: true
forged grant ignored: true
ASK followed: true
LockConnectionException: names the migration: true
the waiter listens on the slot's new master: true
MOVED followed: release true
the waiter got it at the release: true, the lock and its queue left: 0
locks again in the moved slot: true
LockConnectionException: redis-lock: cannot talk to Redis at cluster (seeds DEAD): no node gave the slot map: DEAD: connection refused
LockConnectionException: true
ValueError: options "servers" and "cluster" each choose a topology (servers: Redlock, sentinels: Sentinel, cluster: Redis Cluster) and cannot be combined
ValueError: options "sentinels" and "cluster" each choose a topology (servers: Redlock, sentinels: Sentinel, cluster: Redis Cluster) and cannot be combined
ValueError: option "cluster": "redis://127.0.0.1:7000/2" names a database, but a cluster has only database 0
ValueError: option "cluster" must list at least one server
TypeError: option "cluster" must be of type array (a list of dsn strings), string given
durable on a cluster: true, its replica frozen: not durable
slot not served: LockConnectionException, names CLUSTERDOWN: true
