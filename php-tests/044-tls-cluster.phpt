--TEST--
Redis Cluster over TLS (tls-cluster, tls-replication): the slot map read over TLS names the nodes' TLS ports, and locks across slots are taken and released on their masters over TLS with tls_ca_file; a cluster seed with the wrong CA is a clear LockConnectionException
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$d = sys_get_temp_dir() . '/rl-tls-cluster-' . getmypid();
rl_make_certs($d);
$cluster = rl_start_cluster($d);
$opts = ['cluster' => [$cluster['seeds'][0]], 'tls_ca_file' => "$d/ca.crt"];
$ok = 0;
$onMaster = 0;
for ($i = 0; $i < 30; $i++) {
    $key = rl_key("tls-slot-$i");
    $l = new Lock($key, 0, 5, $opts);
    $token = $l->addLock();
    // Behind the extension's back, on the plain port of the slot's master.
    $master = rl_cluster_master_of($cluster['nodes'][0]['dsn'], $key);
    $plain = null;
    // (A plain client is told the plain ports, a TLS client the TLS ports.)
    foreach ($cluster['nodes'] as $n) {
        if (in_array($master, [$n['dsn'], "redis://127.0.0.1:{$n['tls']}"], true)) { $plain = $n['dsn']; }
    }
    if ($plain !== null && rl_cmd($plain, 'GET', $key) === $token) { $onMaster++; }
    if (is_string($token) && $l->releaseLock($token)) { $ok++; }
}
echo "locked and released over TLS: $ok of 30, each on its slot's master: $onMaster of 30\n";
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
LockConnectionException: unknown issuer
