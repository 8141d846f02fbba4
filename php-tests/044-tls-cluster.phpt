--TEST--
Redis Cluster over TLS (tls-cluster, tls-replication): the slot map read over TLS names the nodes' TLS ports, and locks across slots are taken and released on their masters over TLS with tls_ca_file; a waiter listens on a sharded channel on its command connection and is woken by the release; a cluster seed with the wrong CA is a clear LockConnectionException
--CONFLICTS--
cpu # makes RSA certificates and a TLS cluster, 4 s of CPU
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$d = sys_get_temp_dir() . '/rl-tls-cluster-' . getmypid();
rl_make_certs($d);
$cluster = rl_start_cluster($d);
$opts = ['cluster' => [$cluster['seeds'][0]], 'tls_ca_file' => "$d/ca.crt"];
// The plain port of $key's slot's master, for looking behind the extension's back.
$plainMaster = function (string $key) use ($cluster): ?string {
    $master = rl_cluster_master_of($cluster['nodes'][0]['dsn'], $key);
    // (A plain client is told the plain ports, a TLS client the TLS ports.)
    foreach ($cluster['nodes'] as $n) {
        if (in_array($master, [$n['dsn'], "redis://127.0.0.1:{$n['tls']}"], true)) { return $n['dsn']; }
    }
    return null;
};
$ok = 0;
$onMaster = 0;
for ($i = 0; $i < 30; $i++) {
    $key = rl_key("tls-slot-$i");
    $l = new Lock($key, 0, 5, $opts);
    $token = $l->addLock();
    $plain = $plainMaster($key);
    if ($plain !== null && rl_cmd($plain, 'GET', $key) === $token) { $onMaster++; }
    if (is_string($token) && $l->releaseLock($token)) { $ok++; }
}
echo "locked and released over TLS: $ok of 30, each on its slot's master: $onMaster of 30\n";

// A wait over TLS listens on its command connection, on a sharded channel of the
// lock's slot (as over TCP), and the release wakes it: it polls 2 s apart, so only
// a wake-up hands it the lock within a second.
$key = rl_key('tls-wait');
$plain = $plainMaster($key);
$holder = new Lock($key, 0, 5, $opts);
$token = $holder->addLock();
$seen = tempnam(sys_get_temp_dir(), 'rl-044-');
$pid = pcntl_fork();
if ($pid === 0) {
    $w = new Lock($key, 10, 5, $opts + ['retry_delay' => 2, 'retry_delay_max' => 2]);
    $got = $w->addLock();
    $w->releaseLock($got);
    file_put_contents($seen, is_string($got) ? 'got the lock' : 'FAILED');
    exit(0);
}
for ($i = 0; $i < 300 && $holder->inspect()['waiters'] !== 1; $i++) { usleep(10000); }
$channels = rl_cmd($plain, 'PUBSUB', 'SHARDCHANNELS', 'redis_lock:wake:*');
$released = microtime(true);
$holder->releaseLock($token);
pcntl_waitpid($pid, $status);
echo 'a waiter over TLS: ', file_get_contents($seen), ', within a second of the release: ',
    var_export(microtime(true) - $released < 1.0, true), ', listening on a sharded channel on the slot\'s master: ',
    is_array($channels) && count($channels) === 1 ? 'yes' : var_export($channels, true), "\n";
unlink($seen);

try {
    (new Lock(rl_key('tls-cluster'), 0, 5, ['cluster' => [$cluster['seeds'][0]], 'tls_ca_file' => "$d/other-ca.crt"]))->tryLock();
} catch (LockConnectionException $e) {
    echo get_class($e), ': ', str_contains($e->getMessage(), 'unknown issuer') ? 'unknown issuer' : $e->getMessage(), "\n";
}
rl_stop_cluster($cluster);
rl_remove_dir($d);
?>
--EXPECT--
locked and released over TLS: 30 of 30, each on its slot's master: 30 of 30
a waiter over TLS: got the lock, within a second of the release: true, listening on a sharded channel on the slot's master: yes
LockConnectionException: unknown issuer
