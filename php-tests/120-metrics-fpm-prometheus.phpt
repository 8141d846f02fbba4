--TEST--
A php-fpm pool of 8 workers recycled every 10 requests (pm.max_requests) under a load of contending requests, scraped by a real Prometheus through the documented endpoint (docs/examples/metrics.php): Prometheus's HTTP API gives exact acquisition and release counts per lock name, wait counts equal to them, hold and wait quantiles that fit what the requests did, nothing held at the end; a worker killed while it holds a lock loses none of its counts and leaves the gauge
--SKIPIF--
<?php
if (PHP_ZTS) die('skip php-fpm here is the NTS build');
if (!function_exists('pcntl_fork')) die('skip pcntl');
if (!is_executable('/usr/sbin/php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION)) die('skip no php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . ' (tools/env/deps.sh installs it)');
if (!is_executable('/usr/bin/prometheus')) die('skip no prometheus (tools/env/deps.sh installs Debian\'s)');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/_fpm.inc';
$dsn = rl_dsn();
$dir = sys_get_temp_dir() . '/rl-fpm-120-' . getmypid();
@mkdir($dir);
$p = 'rl-test:fpm-metrics:' . getmypid();
$folded = fn(string $rest) => "rl-test:fpm-metrics:*:$rest";
// work.php: one request's lock, held 20 ms; hold.php: held until the worker is killed.
file_put_contents("$dir/work.php", <<<'PHP'
<?php
$l = new Lock($_GET['key'], 10, 10, ['dsn' => $_GET['dsn']]);
$t = $l->addLock();
usleep(20000);
$l->releaseLock($t);
echo getmypid();
PHP);
file_put_contents("$dir/hold.php", <<<'PHP'
<?php
$l = new Lock($_GET['key'], 0, 60, ['dsn' => $_GET['dsn']]);
$l->addLock();
file_put_contents($_GET['pidfile'], getmypid());
sleep(60);
PHP);
[$fpm, $port] = rl_start_fpm($dir, "pm = static\npm.max_children = 8\npm.max_requests = 10\n");
// An HTTP front for the pool (what nginx or Apache would be), passing the endpoint's
// headers and body through FastCGI.
$rport = rl_free_port();
file_put_contents("$dir/front.php", '<?php require ' . var_export(__DIR__ . '/_fpm.inc', true) . ";\n"
    . '[$h, $b] = fcgi_request(' . $port . ', ' . var_export(realpath(__DIR__ . '/../docs/examples/metrics.php'), true) . ", '/metrics', '');\n"
    . 'foreach (explode("\r\n", $h) as $line) { if ($line !== "") { header($line); } }' . "\necho \$b;\n");
$front = proc_open([PHP_BINARY, '-n', '-S', "127.0.0.1:$rport", "$dir/front.php"], [1 => ['file', "$dir/front.out", 'w'], 2 => ['file', "$dir/front.out", 'a']], $pipes);
$pport = rl_free_port();
file_put_contents("$dir/prometheus.yml", "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: php-fpm\n    metrics_path: /metrics\n    static_configs:\n      - targets: ['127.0.0.1:$rport']\n");
$prom = proc_open(['/usr/bin/prometheus', "--config.file=$dir/prometheus.yml", "--storage.tsdb.path=$dir/tsdb", "--web.listen-address=127.0.0.1:$pport"], [1 => ['file', "$dir/prom.out", 'w'], 2 => ['file', "$dir/prom.out", 'a']], $pipes);
$query = function (string $q) use ($pport): array {
    $r = @file_get_contents("http://127.0.0.1:$pport/api/v1/query?query=" . rawurlencode($q));
    $j = $r === false ? null : json_decode($r, true);
    $out = [];
    foreach ($j['data']['result'] ?? [] as $s) { $out[$s['metric']['name'] ?? ''] = (float) $s['value'][1]; }
    return $out;
};
try {
    // The load: 8 clients of 30 requests each; a third on one key (contended), the
    // rest on per-request keys of two names.
    $kinds = ['cron' => fn($c, $j) => "$p:cron", 'invoice:*' => fn($c, $j) => "$p:invoice:" . ($c * 100 + $j), 'report:*:pdf' => fn($c, $j) => "$p:report:" . ($c * 100 + $j) . ':pdf'];
    $names = array_keys($kinds);
    $expected = array_fill_keys($names, 0);
    for ($c = 0; $c < 8; $c++) { for ($j = 0; $j < 30; $j++) { $expected[$names[($c + $j) % 3]]++; } }
    $codes = rl_fork(8, function (int $c) use ($port, $dir, $dsn, $kinds, $names) {
        $pids = [];
        for ($j = 0; $j < 30; $j++) {
            $key = $kinds[$names[($c + $j) % 3]]($c, $j);
            $pids[] = fcgi_get($port, "$dir/work.php", '/work', 'key=' . urlencode($key) . '&dsn=' . urlencode($dsn));
        }
        file_put_contents("$dir/pids.$c", implode("\n", $pids));
        return 0;
    });
    $workers = [];
    for ($c = 0; $c < 8; $c++) { foreach (explode("\n", (string) @file_get_contents("$dir/pids.$c")) as $pid) { $workers[(int) $pid] = true; } }
    echo 'clients: ', json_encode($codes), ', workers seen: ', count($workers) > 16 ? 'more than 16 (recycled)' : count($workers), "\n";

    // A worker killed while it holds a lock.
    $kkey = "$p:killed:1";
    $c = stream_socket_client("tcp://127.0.0.1:$port");
    $pairs = '';
    $params = ['SCRIPT_FILENAME' => "$dir/hold.php", 'REQUEST_METHOD' => 'GET', 'QUERY_STRING' => 'key=' . urlencode($kkey) . '&dsn=' . urlencode($dsn) . '&pidfile=' . urlencode("$dir/held.pid")];
    foreach ($params as $k => $v) { $pairs .= chr(strlen($k)) . chr(strlen($v)) . $k . $v; }
    $rec = fn(int $type, string $body) => pack('CCnnCx', 1, $type, 1, strlen($body), 0) . $body;
    fwrite($c, $rec(1, pack('nCx5', 1, 0)) . $rec(4, $pairs) . $rec(4, '') . $rec(5, ''));
    $deadline = microtime(true) + 10;
    while (!is_file("$dir/held.pid") && microtime(true) < $deadline) { usleep(20000); }
    usleep(50000);
    $held = (int) file_get_contents("$dir/held.pid");

    // Prometheus's view, once it has scraped all of it.
    $want = function () use ($query, $folded, $expected) {
        $a = $query('redis_lock_acquisitions_total');
        foreach ($expected as $n => $count) { if (($a[$folded($n)] ?? -1) != $count) { return false; } }
        return ($query('redis_lock_holds')[$folded('killed:*')] ?? 0) == 1;
    };
    $deadline = microtime(true) + 40;
    while (!$want() && microtime(true) < $deadline) { usleep(250000); }
    $a = $query('redis_lock_acquisitions_total');
    $r = $query('redis_lock_releases_total');
    $w = $query('redis_lock_wait_seconds_count');
    $waits = $query('redis_lock_waits_total');
    $hold50 = $query('histogram_quantile(0.5, redis_lock_hold_seconds_bucket)');
    $wait99 = $query('histogram_quantile(0.99, redis_lock_wait_seconds_bucket)');
    foreach ($names as $n) {
        $f = $folded($n);
        printf("%s: expected %d, acquisitions %s, releases %s, wait count %s, hold p50 within 16-64 ms: %s\n", $n, $expected[$n], $a[$f] ?? '-', $r[$f] ?? '-', $w[$f] ?? '-', var_export(($hold50[$f] ?? 0) > 0.016 && $hold50[$f] <= 0.064, true));
    }
    printf("cron waited: %s, its wait p99 between 1 ms and 5 s: %s\n", var_export(($waits[$folded('cron')] ?? 0) > 0, true), var_export(($wait99[$folded('cron')] ?? 0) > 0.001 && $wait99[$folded('cron')] < 5, true));
    printf("killed: holds %s before the kill\n", $query('redis_lock_holds')[$folded('killed:*')] ?? '-');
    posix_kill($held, SIGKILL);
    fclose($c);
    $deadline = microtime(true) + 20;
    while (($query('redis_lock_holds')[$folded('killed:*')] ?? 1) != 0 && microtime(true) < $deadline) { usleep(250000); }
    printf("after the kill: holds %s, acquisitions %s, processes with an object now: %s\n", $query('redis_lock_holds')[$folded('killed:*')] ?? '-', $query('redis_lock_acquisitions_total')[$folded('killed:*')] ?? '-', ($query('redis_lock_metrics_processes')[''] ?? -1) == 0 ? 'none' : 'some');
    $all = $query('sum(redis_lock_acquisitions_total)');
    printf("total acquisitions %s, up %s\n", $all[''] ?? '-', $query('up')[''] ?? '-');
} finally {
    foreach ([$prom, $front, $fpm] as $proc) { proc_terminate($proc); proc_close($proc); }
    exec('rm -rf ' . escapeshellarg($dir));
}
?>
--EXPECT--
clients: [0,0,0,0,0,0,0,0], workers seen: more than 16 (recycled)
cron: expected 80, acquisitions 80, releases 80, wait count 80, hold p50 within 16-64 ms: true
invoice:*: expected 80, acquisitions 80, releases 80, wait count 80, hold p50 within 16-64 ms: true
report:*:pdf: expected 80, acquisitions 80, releases 80, wait count 80, hold p50 within 16-64 ms: true
cron waited: true, its wait p99 between 1 ms and 5 s: true
killed: holds 1 before the kill
after the kill: holds 0, acquisitions 1, processes with an object now: none
total acquisitions 241, up 1
