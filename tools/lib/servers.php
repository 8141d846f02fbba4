<?php
// The servers the phpt suite, the bridges' tests, the nemesis, the model test and the
// benches start on loopback and stop again, each on free ports with a folder of its
// own under the temp dir: one server (rl_start_redis()), Redlock's independent nodes
// (rl_start_many()), a master and its replica (rl_start_pair()), a Sentinel set
// (rl_start_sentinel_set()) and a Cluster (rl_start_cluster()), these three plain or
// with each node behind a fault proxy of its own (tools/test/fault-proxy.php,
// rl_fault_proxy()), and servers under the clock shim (rl_clockshift()). The programs
// are $REDIS_LOCK_TEST_SERVER's (redis, the default, or valkey).

require_once __DIR__ . '/resp.php';

// --- one server ---------------------------------------------------------------------

/**
 * The binary of a server program: redis-server, redis-cli, redis-sentinel, or
 * Valkey's when REDIS_LOCK_TEST_SERVER=valkey (`make test-one SERVER=valkey`).
 */
function rl_bin(string $program): string {
    $flavour = getenv('REDIS_LOCK_TEST_SERVER') ?: 'redis';
    return "$flavour-$program";
}

/**
 * A free loopback port whose server folder no test used lately: a server restarted on
 * its port (019) leaves the port free for a moment, and a test beside it that took
 * the port then would wipe the folder the restart reads.
 */
function rl_free_port(): int {
    for ($try = 0; ; $try++) {
        $s = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        $port = (int) substr(strrchr(stream_socket_get_name($s, false), ':'), 1);
        fclose($s);
        $dir = sys_get_temp_dir() . '/rl-redis-' . $port;
        clearstatcache(true, $dir);
        if ($try >= 20 || !is_dir($dir) || time() - (int) filemtime($dir) > 300) {
            return $port;
        }
    }
}

/** Starts a private server (rl_bin('server')); returns ['port'=>, 'pid'=>, 'dir'=>, 'dsn'=>]. */
function rl_start_redis(array $extra = [], ?int $port = null): array {
    $fresh = $port === null;
    $port = $port ?? rl_free_port();
    $dir = sys_get_temp_dir() . '/rl-redis-' . $port;
    // A new server starts empty. A directory left by an earlier server on this port
    // (a run that died, or a replica's dump.rdb) would be loaded: stale keys, stale
    // cluster membership, or a newer server's RDB that this one refuses, exiting after
    // it has answered. A restart on the same port keeps its data (019).
    if ($fresh) { rl_rmtree($dir); }
    @mkdir($dir);
    // A restart on the same port: the killed server must be gone, and so must its
    // pid file, or the new server's pid would be mistaken for the old one's.
    $gone = microtime(true) + 5;
    while (microtime(true) < $gone && ($c = @stream_socket_client("tcp://127.0.0.1:$port", $e, $s, 0.1))) { fclose($c); usleep(10000); }
    @unlink("$dir/redis.pid");
    // Under the clock shim (rl_clockshift()), when asked for: its offset is the file
    // clock-offset in the server's folder, which a restart on the port keeps.
    $shim = getenv('REDIS_LOCK_TEST_CLOCKSHIFT');
    $env = $shim ? ['env', "LD_PRELOAD=$shim", "CLOCKSHIFT_FILE=$dir/clock-offset"] : [];
    $args = array_merge($env, [rl_bin('server'), '--port', (string) $port, '--bind', '127.0.0.1',
        '--save', '', '--appendonly', 'no', '--dir', $dir, '--daemonize', 'yes',
        '--pidfile', "$dir/redis.pid", '--logfile', "$dir/redis.log"], $extra);
    exec(implode(' ', array_map('escapeshellarg', $args)), $out, $rc);
    if ($rc !== 0) { throw new RuntimeException(rl_bin('server') . " failed: " . implode("\n", $out)); }
    $deadline = microtime(true) + 5;
    $pid = 0;
    while (microtime(true) < $deadline) {
        $c = @stream_socket_client("tcp://127.0.0.1:$port", $e, $s, 0.2);
        // The pid file can exist for an instant before it holds the pid: without the
        // pid, the server could not be stopped and would outlive the test.
        $pid = (int) @file_get_contents("$dir/redis.pid");
        if ($c) { fclose($c); }
        if ($c && $pid > 0) { break; }
        usleep(10000);
    }
    if ($pid <= 0) {
        $log = implode(' | ', array_slice(file("$dir/redis.log", FILE_IGNORE_NEW_LINES) ?: [], -3));
        throw new RuntimeException(rl_bin('server') . " on port $port did not start: $log");
    }
    return ['port' => $port, 'pid' => $pid, 'dir' => $dir, 'dsn' => "redis://127.0.0.1:$port"];
}

/** Whether a process runs: a zombie (killed, not yet reaped by its parent) does not. */
function rl_alive(int $pid): bool {
    if (!@posix_kill($pid, 0)) { return false; }
    $stat = @file_get_contents("/proc/$pid/stat");
    return $stat === false || !preg_match('/^\d+ \(.*\) Z/s', $stat);
}

function rl_stop_redis(array $srv): void {
    if ($srv['pid'] > 0) {
        @posix_kill($srv['pid'], SIGCONT);
        @posix_kill($srv['pid'], SIGKILL);
        $deadline = microtime(true) + 5;
        while (microtime(true) < $deadline && rl_alive($srv['pid'])) { usleep(10000); }
    }
    rl_rmtree($srv['dir']);
}

/** Kills a server with SIGKILL and waits until its port refuses connections. */
function rl_kill_redis(array $srv): void {
    @posix_kill($srv['pid'], SIGKILL);
    $deadline = microtime(true) + 5;
    while (microtime(true) < $deadline) {
        $c = @stream_socket_client("tcp://127.0.0.1:{$srv['port']}", $e, $s, 0.1);
        if (!$c) { return; }
        fclose($c);
        usleep(10000);
    }
}

/** Removes a test server's directory and all in it (dump.rdb, nodes.conf, appendonlydir). */
function rl_rmtree(string $dir): void {
    if (!is_dir($dir) || is_link($dir)) { @unlink($dir); return; }
    foreach (scandir($dir) ?: [] as $f) {
        if ($f !== '.' && $f !== '..') { rl_rmtree("$dir/$f"); }
    }
    @rmdir($dir);
}

function rl_remove_dir(string $dir): void {
    array_map('unlink', glob("$dir/*"));
    @rmdir($dir);
}

/** The last lines of a test server's log, for an error message. */
function rl_log_tail(array $srv, int $lines = 5): string {
    return implode(' | ', array_slice(@file($srv['dir'] . '/redis.log', FILE_IGNORE_NEW_LINES) ?: [], -$lines));
}

/** redis-server arguments for a TLS port with one of rl_make_certs()'s server certificates. */
function rl_tls_args(string $dir, int $port, string $cert = 'server', bool $clients = false): array {
    $key = $cert === 'expired' ? 'server' : $cert;
    return ['--tls-port', (string) $port, '--tls-cert-file', "$dir/$cert.crt", '--tls-key-file', "$dir/$key.key",
        '--tls-ca-cert-file', "$dir/ca.crt", '--tls-auth-clients', $clients ? 'yes' : 'no'];
}

// --- the clock shim -----------------------------------------------------------------

/**
 * The clock shim (tools/test/clockshift/clockshift.c), built with cc into
 * target/clockshift/ when missing or older than its source; returns the library's
 * path. With REDIS_LOCK_TEST_CLOCKSHIFT set to it, rl_start_redis() starts servers
 * under it, and rl_clock_set() moves their wall clocks.
 */
function rl_clockshift(): string {
    $root = dirname(__DIR__, 2);
    $src = "$root/tools/test/clockshift/clockshift.c";
    $lib = "$root/target/clockshift/libclockshift.so";
    if (is_file($lib) && filemtime($lib) >= filemtime($src)) { return $lib; }
    @mkdir(dirname($lib), 0777, true);
    $tmp = "$lib." . getmypid();
    exec('cc -O2 -Wall -fPIC -shared -o ' . escapeshellarg($tmp) . ' ' . escapeshellarg($src) . ' -ldl 2>&1', $out, $rc);
    if ($rc !== 0) { throw new RuntimeException('the clock shim did not build (cc: make deps installs gcc): ' . implode("\n", $out)); }
    rename($tmp, $lib);
    return $lib;
}

/**
 * Sets the wall clock of a server started under the clock shim to $seconds off
 * the host's (a jump, forward or back, from the one before); written whole and
 * renamed, so the server never reads it half written. It takes effect within
 * about 1 ms.
 */
function rl_clock_set(array $srv, float $seconds): void {
    $file = $srv['dir'] . '/clock-offset';
    file_put_contents("$file.new", sprintf("%.6f\n", $seconds));
    rename("$file.new", $file);
}

/** The offset rl_clock_set() gave a server's clock, in seconds (0: none). */
function rl_clock_offset(array $srv): float {
    return (float) @file_get_contents($srv['dir'] . '/clock-offset');
}

// --- the fault proxy ----------------------------------------------------------------

/**
 * Starts tools/test/fault-proxy.php in front of the loopback server on $port, with a
 * one-way delay of $delayMs; returns ['proc' =>, 'port' =>, 'control' =>, 'dsn' =>].
 * Drive it with rl_proxy(), stop it with rl_stop_proxy().
 */
function rl_fault_proxy(int $port, float $delayMs = 0): array {
    $script = dirname(__DIR__) . '/test/fault-proxy.php';
    $proc = proc_open([PHP_BINARY, '-n', $script, (string) $port, (string) $delayMs], [1 => ['pipe', 'w'], 2 => STDERR], $pipes);
    $line = (string) fgets($pipes[1]);
    if (!preg_match('/^proxy (\d+) control (\d+)$/', trim($line), $m)) { throw new RuntimeException("fault proxy did not start: $line"); }
    return ['proc' => $proc, 'port' => (int) $m[1], 'control' => (int) $m[2], 'dsn' => "redis://127.0.0.1:$m[1]"];
}

/** Sends one command to the fault proxy; returns its answer. */
function rl_proxy(array $proxy, string $command): string {
    $c = stream_socket_client("tcp://127.0.0.1:{$proxy['control']}", $errno, $errstr, 2);
    fwrite($c, "$command\n");
    $answer = trim((string) fgets($c));
    fclose($c);
    return $answer;
}

function rl_stop_proxy(array $proxy): void {
    proc_terminate($proxy['proc'], SIGKILL);
    proc_close($proxy['proc']);
}

// --- Redlock, replication, Sentinel -------------------------------------------------

/**
 * Starts $n independent redis-servers (Redlock nodes), each with the arguments
 * $extra; returns their rl_start_redis() arrays. None outlives a failed start.
 */
function rl_start_many(int $n, array $extra = []): array {
    $nodes = [];
    try {
        for ($i = 0; $i < $n; $i++) { $nodes[] = rl_start_redis($extra); }
    } catch (Throwable $e) {
        foreach ($nodes as $srv) { rl_stop_redis($srv); }
        throw $e;
    }
    return $nodes;
}

/** The arguments that have a sentinel set's node announce its proxy: at its start, and at each restart. */
function rl_proxied_replica_args(array $proxy): array {
    return ['--replica-announce-ip', '127.0.0.1', '--replica-announce-port', (string) $proxy['port']];
}

/**
 * A master and a replica of it on loopback, returned as [master, replica]
 * (rl_start_redis() arrays) as soon as both answer: rl_wait_synced() waits for the
 * replica's sync. Each server started is added to $started, for the cleanup.
 * $proxied: each node behind a fault proxy of its own (added to $proxies, [the
 * master's, the replica's]), which it announces (rl_proxied_replica_args()); the
 * replica replicates from the master's proxy. $replicas: more replicas of the same
 * master, each started as the first (returned after it, their proxies after its).
 */
function rl_start_pair(bool $proxied = false, array &$started = [], array &$proxies = [], int $replicas = 1): array {
    if (!$proxied) {
        // No 5 s wait for more replicas before the first full sync.
        $started[] = $master = rl_start_redis(['--repl-diskless-sync-delay', '0']);
        $nodes = [$master];
        for ($i = 0; $i < $replicas; $i++) {
            $started[] = $nodes[] = rl_start_redis(['--replicaof', '127.0.0.1', (string) $master['port']]);
        }
        return $nodes;
    }
    // The proxies first: each node knows its proxy's port from its start.
    $ports = [];
    for ($i = 0; $i <= $replicas; $i++) {
        $ports[$i] = rl_free_port();
        $proxies[$i] = rl_fault_proxy($ports[$i]);
    }
    // No 5 s wait for more replicas before a full sync (any node may be the master).
    foreach ($ports as $port) { rl_rmtree(sys_get_temp_dir() . '/rl-redis-' . $port); }
    $started[] = $master = rl_start_redis(array_merge(['--repl-diskless-sync-delay', '0'], rl_proxied_replica_args($proxies[0])), $ports[0]);
    $nodes = [$master];
    for ($i = 1; $i <= $replicas; $i++) {
        $started[] = $nodes[] = rl_start_redis(array_merge(['--repl-diskless-sync-delay', '0'], rl_proxied_replica_args($proxies[$i]),
            ['--replicaof', '127.0.0.1', (string) $proxies[0]['port']]), $ports[$i]);
    }
    return $nodes;
}

/** Waits until the replica $replica has its link to its master up; throws at $deadline (microtime(true)). */
function rl_wait_synced(array $replica, float $deadline): void {
    while (!str_contains((string) Resp::poll($replica['dsn'], 'INFO', 'replication'), 'master_link_status:up')) {
        if (microtime(true) > $deadline) {
            throw new RuntimeException('replica did not sync' . (rl_alive($replica['pid']) ? '' : ' (gone)') . ': ' . rl_log_tail($replica));
        }
        usleep(20000);
    }
}

/**
 * Three sentinels on loopback monitoring service "mymaster" at 127.0.0.1:$masterPort
 * with short timeouts (down after 0.5 s; a failover times out after
 * $failoverTimeoutMs); each one started is added to $started (rl_start_redis()-shaped
 * arrays, for the cleanup). Returns them.
 */
function rl_start_sentinels(int $masterPort, array &$started, int $failoverTimeoutMs = 3000): array {
    $sentinels = [];
    for ($i = 0; $i < 3; $i++) {
        $port = rl_free_port();
        $dir = sys_get_temp_dir() . '/rl-sentinel-' . $port;
        rl_rmtree($dir);
        @mkdir($dir);
        file_put_contents("$dir/sentinel.conf", implode("\n", [
            "port $port", 'bind 127.0.0.1', "dir $dir", 'daemonize yes',
            "pidfile $dir/redis.pid", "logfile $dir/redis.log",
            "sentinel monitor mymaster 127.0.0.1 $masterPort 2",
            'sentinel down-after-milliseconds mymaster 500',
            "sentinel failover-timeout mymaster $failoverTimeoutMs",
            'sentinel parallel-syncs mymaster 1', '']));
        exec(rl_bin('sentinel') . ' ' . escapeshellarg("$dir/sentinel.conf"), $out, $rc);
        if ($rc !== 0) { throw new RuntimeException(rl_bin('sentinel') . ' failed'); }
        $deadline = microtime(true) + 5;
        while ((int) @file_get_contents("$dir/redis.pid") <= 0 && microtime(true) < $deadline) { usleep(10000); }
        $started[] = $sentinels[] = ['port' => $port, 'pid' => (int) @file_get_contents("$dir/redis.pid"), 'dir' => $dir,
                        'dsn' => "redis://127.0.0.1:$port"];
    }
    return $sentinels;
}

/**
 * A master, one replica (or $replicas) and three sentinels on loopback, the sentinels
 * watching service "mymaster" with short timeouts (rl_start_sentinels(): down after
 * 0.5 s, a failover timing out after $failoverTimeoutMs); returns ['master'=>,
 * 'replica'=> (the first), 'replicas' => [every replica], 'sentinels'=>[...],
 * 'proxies' => [...]] (rl_start_redis() arrays), once every replica is in sync and
 * the sentinels know each other and every replica. Stop it with
 * rl_stop_sentinel_set().
 *
 * $proxied: a fault proxy (rl_fault_proxy()) in front of each node, through which
 * everything reaches the node: each node announces its proxy
 * (replica-announce-ip/-port), the replicas replicate from the master's proxy, and
 * the sentinels monitor the master at its proxy, so that they, and the clients they
 * name the master to, reach the nodes there too. A partition or reset of a node's
 * proxy is then every client's. 'proxies' are [the master's, the replicas'...] (by
 * the nodes' first roles; none unproxied); a node restarted later keeps its proxy if
 * it is started with rl_proxied_replica_args().
 */
function rl_start_sentinel_set(bool $proxied = false, int $replicas = 1, int $failoverTimeoutMs = 3000): array {
    $started = [];
    $proxies = [];
    try {
        $nodes = rl_start_pair($proxied, $started, $proxies, $replicas);
        $master = array_shift($nodes);
        $deadline = microtime(true) + 10;
        foreach ($nodes as $replica) { rl_wait_synced($replica, $deadline); }
        $sentinels = rl_start_sentinels($proxied ? $proxies[0]['port'] : $master['port'], $started, $failoverTimeoutMs);
        // Sentinels find each other and the replicas (at their proxies, if proxied)
        // through the master (hello every 2 s).
        foreach ($sentinels as $s) {
            while (true) {
                $peers = Resp::poll($s['dsn'], 'SENTINEL', 'SENTINELS', 'mymaster');
                $known = Resp::poll($s['dsn'], 'SENTINEL', 'REPLICAS', 'mymaster');
                if (is_array($peers) && count($peers) === 2 && is_array($known) && count($known) === $replicas) { break; }
                if (microtime(true) > $deadline + 10) { throw new RuntimeException("sentinel {$s['port']} did not converge: " . rl_log_tail($s)); }
                usleep(100000);
            }
        }
        return ['master' => $master, 'replica' => $nodes[0], 'replicas' => $nodes, 'sentinels' => $sentinels, 'proxies' => $proxies];
    } catch (Throwable $e) {
        // Nothing outlives a set that did not come up.
        foreach ($started as $srv) { rl_stop_redis($srv); }
        foreach ($proxies as $p) { rl_stop_proxy($p); }
        throw $e;
    }
}

function rl_stop_sentinel_set(array $set): void {
    foreach ($set['sentinels'] as $s) {
        rl_stop_redis($s);
    }
    rl_stop_redis($set['master']);
    rl_stop_redis($set['replica']);
    foreach (array_slice($set['replicas'] ?? [], 1) as $r) { rl_stop_redis($r); }
    foreach ($set['proxies'] ?? [] as $p) { rl_stop_proxy($p); }
}

// --- Cluster ------------------------------------------------------------------------

/**
 * A Redis Cluster of 3 masters and 3 replicas on loopback, made with
 * `redis-cli --cluster create --cluster-replicas 1`, with a short node timeout so
 * that a failover takes a second or two. Returns ['nodes' => [rl_start_redis()
 * arrays], 'seeds' => [dsns], 'proxies' => [node => rl_fault_proxy()], 'args' =>
 * [node => the arguments a restart of it on its port needs, beside persistence]]
 * once every node sees every slot served and every replica is in sync. Stop it with
 * rl_stop_cluster().
 *
 * $certs (a folder of rl_make_certs()): each node has a TLS port too ('tls'), which
 * the bus, replication and the seeds use; the plain port stays for the helpers.
 * $proxied (without TLS): a fault proxy in front of each node, through which clients
 * and replicas reach it: each node announces its proxy (cluster-announce-ip/-port),
 * so that CLUSTER SLOTS, MOVED, ASK and the replicas' links name the proxies, while
 * the cluster bus stays direct (cluster-announce-bus-port is the node's own bus
 * port); the seeds are the proxies. A partition or reset of a node's proxy is every
 * client's, and the cluster sees no failure from it.
 */
function rl_start_cluster(?string $certs = null, bool $proxied = false): array {
    $nodes = [];
    $proxies = [];
    try {
        return rl_make_cluster($certs, $proxied, $nodes, $proxies);
    } catch (Throwable $e) {
        // Nothing outlives a cluster that did not come up.
        rl_stop_cluster(['nodes' => $nodes, 'proxies' => $proxies]);
        throw $e;
    }
}

/** rl_start_cluster()'s work; $nodes and $proxies collect what was started, for the cleanup. */
function rl_make_cluster(?string $certs, bool $proxied, array &$nodes, array &$proxies): array {
    $args = [];
    for ($i = 0; $i < 6; $i++) {
        // Each node needs two or three ports, each picked free on its own: another
        // process (or this node's other port) may take one before the server binds it.
        // Then the server does not start, and fresh ports are tried. A proxy is
        // started first, so that the node announces it from its start.
        for ($attempt = 1; ; $attempt++) {
            $port = rl_free_port();
            // The bus port is chosen too: by default it is the port + 10000, which a free
            // port above 55535 overflows (and another process may hold).
            $bus = (string) rl_free_port();
            $proxy = $proxied ? rl_fault_proxy($port) : null;
            $extra = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', $bus,
                '--cluster-node-timeout', '1000', '--cluster-replica-validity-factor', '0',
                '--repl-diskless-sync-delay', '0'];
            if ($proxy !== null) {
                $extra = array_merge($extra, ['--cluster-announce-ip', '127.0.0.1', '--cluster-announce-port', (string) $proxy['port'],
                    '--cluster-announce-bus-port', $bus]);
            }
            $tls = $certs === null ? null : rl_free_port();
            if ($tls !== null) {
                // The bus and replication speak TLS too; the plain port stays for the helpers.
                $extra = array_merge($extra, rl_tls_args($certs, $tls), ['--tls-cluster', 'yes', '--tls-replication', 'yes']);
            }
            rl_rmtree(sys_get_temp_dir() . '/rl-redis-' . $port);
            try {
                $nodes[$i] = rl_start_redis($extra, $port) + ['tls' => $tls];
                $args[$i] = $extra;
                if ($proxy !== null) { $proxies[$i] = $proxy; }
                break;
            } catch (RuntimeException $e) {
                if ($proxy !== null) { rl_stop_proxy($proxy); }
                if ($attempt >= 3) { throw $e; }
            }
        }
    }
    $addrs = array_map(fn($n) => '127.0.0.1:' . ($n['tls'] ?? $n['port']), $nodes);
    $cli = rl_bin('cli') . ($certs === null ? '' : ' --tls --cacert ' . escapeshellarg("$certs/ca.crt"));
    exec($cli . ' --cluster create ' . implode(' ', array_map('escapeshellarg', $addrs))
        . ' --cluster-replicas 1 --cluster-yes 2>&1', $out, $rc);
    if ($rc !== 0) {
        $logs = implode("\n", array_map(fn($n) => "{$n['port']}: " . rl_log_tail($n, 2), $nodes));
        throw new RuntimeException("cluster create failed:\n" . implode("\n", $out) . "\nnode logs:\n$logs");
    }
    $deadline = microtime(true) + 20;
    foreach ($nodes as $n) {
        while (true) {
            $info = (string) Resp::poll($n['dsn'], 'CLUSTER', 'INFO');
            $repl = (string) Resp::poll($n['dsn'], 'INFO', 'replication');
            $synced = str_contains($repl, 'role:master') || str_contains($repl, 'master_link_status:up');
            if (str_contains($info, 'cluster_state:ok') && str_contains($info, 'cluster_slots_assigned:16384') && $synced) { break; }
            if (microtime(true) > $deadline) { throw new RuntimeException("cluster did not converge on {$n['dsn']}: " . rl_log_tail($n)); }
            usleep(50000);
        }
    }
    $seeds = match (true) {
        $proxied => array_column($proxies, 'dsn'),
        $certs !== null => array_map(fn($n) => "rediss://127.0.0.1:{$n['tls']}", $nodes),
        default => array_column($nodes, 'dsn'),
    };
    return ['nodes' => $nodes, 'seeds' => $seeds, 'proxies' => $proxies, 'args' => $args];
}

function rl_stop_cluster(array $cluster): void {
    foreach ($cluster['nodes'] as $n) { @posix_kill($n['pid'], SIGKILL); }
    foreach ($cluster['nodes'] as $n) { rl_stop_redis($n); }
    foreach ($cluster['proxies'] ?? [] as $p) { rl_stop_proxy($p); }
}

/** The dsn of the master that serves $key's slot, asked of the node at $dsn. */
function rl_cluster_master_of(string $dsn, string $key): string {
    $slot = Resp::once($dsn, 'CLUSTER', 'KEYSLOT', $key);
    foreach (Resp::once($dsn, 'CLUSTER', 'SLOTS') as $range) {
        if ($range[0] <= $slot && $slot <= $range[1]) { return "redis://{$range[2][0]}:{$range[2][1]}"; }
    }
    throw new RuntimeException("no master for slot $slot");
}

/** The node id of the server at $dsn. */
function rl_cluster_id(string $dsn): string {
    return Resp::once($dsn, 'CLUSTER', 'MYID');
}
