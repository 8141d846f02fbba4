--TEST--
The pool's metrics in a CLI process and the children it forks (which share them): per folded name, acquisitions, waits, timeouts, hand-overs, releases, losses, renewals and errors by kind; the wait and hold histograms; the gauges of holds and waits in progress (a killed child's dropped, its counts kept); the Prometheus text; the folding rules, the overflow name, a bad directive and the switch off
--SKIPIF--
<?php
if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$o = ['dsn' => $dsn];
$p = 'rl-test:metrics:' . getmypid();
$name = fn(string $rest) => "rl-test:metrics:*:$rest";
$m = fn(string $rest) => redis_lock_metrics()[$name($rest)] ?? null;
$le = fn(array $h, string $bound) => $h['buckets'][$bound];

// Uncontended: five names that fold into one, each held 5 ms.
for ($i = 1; $i <= 5; $i++) {
    $l = new Lock("$p:invoice:$i", 0, 10, $o);
    $t = $l->addLock();
    usleep(5000);
    $l->releaseLock($t);
}
$f = $m('invoice:*');
printf("invoice: acquired %d, waits %d, released %d\n", $f['acquired'], $f['waits'], $f['released']);
printf("  wait: count %d, all at 0 (le 0.001): %s, sum %s\n", $f['wait_seconds']['count'], var_export($le($f['wait_seconds'], '0.001') === 5, true), $f['wait_seconds']['sum']);
printf("  hold: count %d, none within 4 ms: %s, sum at least 25 ms: %s\n", $f['hold_seconds']['count'], var_export($le($f['hold_seconds'], '0.004') === 0, true), var_export($f['hold_seconds']['sum'] >= 0.025, true));

// A hand-over: a child holds 0.3 s, this process waits and is granted the lock.
$k = "$p:job:1";
$pid = pcntl_fork();
if ($pid === 0) { $l = new Lock($k, 0, 10, $o); $t = $l->addLock(); usleep(300000); $l->releaseLock($t); exit(0); }
usleep(100000);
$l = new Lock($k, 5, 10, $o);
$t = $l->addLock();
$l->releaseLock($t);
pcntl_waitpid($pid, $st);
$f = $m('job:*');
printf("job: acquired %d (one in the child), waits %d, handed over %d, released %d\n", $f['acquired'], $f['waits'], $f['handed_over'], $f['released']);
$w = $f['wait_seconds'];
printf("  wait: count %d, one at 0, one of 0.1-0.5 s (le 0.064: %d, le 0.512: %d)\n", $w['count'], $le($w, '0.064'), $le($w, '0.512'));

// Gauges: a child holds, another waits, a third holds and is killed.
$k2 = "$p:job:2";
$holder = pcntl_fork();
if ($holder === 0) { $l = new Lock($k2, 0, 10, $o); $t = $l->addLock(); usleep(800000); $l->releaseLock($t); exit(0); }
usleep(100000);
$waiter = pcntl_fork();
if ($waiter === 0) { $l = new Lock($k2, 5, 10, $o); $t = $l->addLock(); $l->releaseLock($t); exit(0); }
$killed = pcntl_fork();
if ($killed === 0) { $l = new Lock("$p:killed:1", 0, 30, $o); $l->addLock(); sleep(30); exit(0); }
usleep(300000);
$f = $m('job:*');
$g = $m('killed:*');
printf("while they run: job holds %d, waiting %d; killed holds %d\n", $f['holds'], $f['waiting'], $g['holds']);
posix_kill($killed, SIGKILL);
pcntl_waitpid($killed, $st);
pcntl_waitpid($holder, $st);
pcntl_waitpid($waiter, $st);
$f = $m('job:*');
$g = $m('killed:*');
printf("after: job holds %d, waiting %d, acquired %d; killed holds %d, acquired %d (kept)\n", $f['holds'], $f['waiting'], $f['acquired'], $g['holds'], $g['acquired']);

// A timeout: a child waits 0.2 s for a lock this process holds.
$k3 = "$p:busy:1";
$h = new Lock($k3, 0, 10, $o);
$ht = $h->addLock();
rl_fork(1, fn() => (new Lock($k3, 0.2, 10, $o))->addLock() === false ? 0 : 1);
$h->releaseLock($ht);
$f = $m('busy:*');
printf("busy: timeouts %d, waits %d, wait within 0.128 s: %d, within 0.256 s: %d\n", $f['timeouts'], $f['waits'], $le($f['wait_seconds'], '0.128') - 1, $le($f['wait_seconds'], '0.256') - 1);

// Losses: the key deleted under a hold the watchdog renews, and under synchronized()
// (whose release goes unawaited while the lease surely lasts: the loss is read, and
// told, at the next call); a renewal: extendLock().
$l = new Lock("$p:lost:1", 0, 0.6, $o + ['auto_renew' => true]);
$t = $l->addLock();
rl_cmd($dsn, 'DEL', "$p:lost:1");
usleep(500000);
var_dump($l->releaseLock($t));
(new Lock("$p:lost:2", 0, 10, $o))->synchronized(fn() => rl_cmd($dsn, 'DEL', "$p:lost:2"));
$l = new Lock("$p:renew:1", 0, 10, $o);
$t = $l->addLock();
$l->extendLock($t, 20);
$l->releaseLock($t);
printf("lost: %d, released %d (the unawaited one, when it was sent); renew: renewals %d\n", $m('lost:*')['lost'], $m('lost:*')['released'], $m('renew:*')['renewals']);

// A hold this object frees itself by force: released, and no longer held.
$l = new Lock("$p:forced:1", 0, 10, $o);
$l->addLock();
printf("forced: holds %d", $m('forced:*')['holds']);
$l->forceReleaseLock();
$f = $m('forced:*');
printf(", then holds %d, released %d, hold count %d\n", $f['holds'], $f['released'], $f['hold_seconds']['count']);

// Errors, by kind: a server that is not there; permits that disagree.
try { (new Lock("$p:down:1", 0, 10, ['dsn' => 'redis://127.0.0.1:1']))->addLock(); } catch (LockConnectionException $e) { echo "LockConnectionException\n"; }
$s = new Semaphore("$p:sem:1", 2, 0, 10, $o);
$st1 = $s->acquire();
try { (new Semaphore("$p:sem:1", 3, 0, 10, $o))->acquire(); } catch (LockException $e) { echo get_class($e), "\n"; }
$s->release($st1);
echo 'down errors: ', json_encode($m('down:*')['errors']), "\n";
echo 'sem errors: ', json_encode($m('sem:*')['errors']), "\n";

// The Prometheus text: every family declared once, buckets that only grow, counts
// equal to their +Inf bucket, and the figures above.
$text = redis_lock_metrics_text();
$types = [];
$series = [];
foreach (explode("\n", rtrim($text, "\n")) as $line) {
    if (preg_match('/^# TYPE (\w+) (counter|gauge|histogram)$/', $line, $x)) { $types[$x[1]] = ($types[$x[1]] ?? 0) + 1; continue; }
    if (str_starts_with($line, '# HELP ')) { continue; }
    if (!preg_match('/^(\w+)(\{[^}]*\})? (\S+)$/', $line, $x)) { echo "bad line: $line\n"; continue; }
    $series[$x[1] . ($x[2] ?? '')] = $x[3];
}
echo 'families declared once: ', var_export(max($types) === 1 && count($types) === 15, true), ' (', count($types), ")\n";
$ok = true;
foreach (['wait', 'hold'] as $h) {
    foreach (redis_lock_metrics() as $n => $f) {
        $prev = -1;
        foreach ($f["{$h}_seconds"]['buckets'] as $b => $c) {
            $v = (int) $series["redis_lock_{$h}_seconds_bucket{name=\"$n\",le=\"$b\"}"];
            $ok = $ok && $v === $c && $v >= $prev;
            $prev = $v;
        }
        $ok = $ok && (int) $series["redis_lock_{$h}_seconds_count{name=\"$n\"}"] === $prev;
    }
}
echo 'histograms cumulative, counts equal +Inf, same as the array: ', var_export($ok, true), "\n";
echo $series['redis_lock_acquisitions_total{name="' . $name('invoice:*') . '"}'], ' ', $series['redis_lock_handovers_total{name="' . $name('job:*') . '"}'], ' ', $series['redis_lock_errors_total{name="' . $name('down:*') . '",kind="connection"}'], "\n";

// The directives, in fresh processes.
$run = function (string $ini, string $code): string {
    $cmd = PHP_BINARY . ' -n -d extension=' . escapeshellarg(rl_ext()) . " $ini -r " . escapeshellarg($code) . ' 2>&1';
    return trim((string) shell_exec($cmd));
};
$code = 'foreach (["invoice:42:pdf", "invoice:43:pdf", "a:b:c", "cron"] as $k) { $l = new Lock($k, 0, 10, ["dsn" => "' . $dsn . '"]); $l->releaseLock($l->addLock()); } echo implode(" | ", array_keys(redis_lock_metrics()));';
echo 'digits: ', $run('', $code), "\n";
echo 'prefix:1: ', $run('-d redis_lock.metrics_fold=prefix:1', $code), "\n";
echo 'exact: ', $run('-d redis_lock.metrics_fold=exact', $code), "\n";
echo 'two names: ', $run('-d redis_lock.metrics_names=2 -d redis_lock.metrics_fold=exact', $code), "\n";
echo 'off: ', $run('-d redis_lock.metrics=0', $code . ' var_dump(redis_lock_metrics(), redis_lock_metrics_text());'), "\n";
echo 'bad: ', $run('-d redis_lock.metrics_fold=regex', $code . ' echo count(redis_lock_metrics());'), "\n";
echo 'ini_set: ', $run('', 'var_dump(ini_set("redis_lock.metrics", "0"), ini_get("redis_lock.metrics"));'), "\n";
?>
--EXPECTF--
invoice: acquired 5, waits 0, released 5
  wait: count 5, all at 0 (le 0.001): true, sum 0
  hold: count 5, none within 4 ms: true, sum at least 25 ms: true
job: acquired 2 (one in the child), waits 1, handed over 1, released 2
  wait: count 2, one at 0, one of 0.1-0.5 s (le 0.064: 1, le 0.512: 2)
while they run: job holds 1, waiting 1; killed holds 1
after: job holds 0, waiting 0, acquired 4; killed holds 0, acquired 1 (kept)
busy: timeouts 1, waits 1, wait within 0.128 s: 0, within 0.256 s: 1
bool(false)

Warning: Lock::addLock(): redis-lock: the lock "rl-test:metrics:%d:lost:2" was found lost by the release that ended synchronized(), read after it returned %s
lost: 2, released 1 (the unawaited one, when it was sent); renew: renewals 1
forced: holds 1, then holds 0, released 1, hold count 1
LockConnectionException
LockException
down errors: {"connection":1,"unavailable":0,"not_durable":0,"server":0,"other":0}
sem errors: {"connection":0,"unavailable":0,"not_durable":0,"server":0,"other":1}
families declared once: true (15)
histograms cumulative, counts equal +Inf, same as the array: true
5 2 1
digits: a:b:c | cron | invoice:*:pdf
prefix:1: a:* | cron | invoice:*
exact: a:b:c | cron | invoice:42:pdf | invoice:43:pdf
two names: (other) | %s | %s
off: array(0) {
}
string(0) ""
bad: %Sredis-lock: redis_lock.metrics_fold must be digits, exact or prefix:N (N from 1 to 16), not "regex"; the metrics are off
0
ini_set: bool(false)
string(1) "1"
