--TEST--
auto_renew: a holder that sleeps 3x its lockOut keeps the lock and nobody else gets it; once it releases, a waiter gets the lock at once and the watchdog falls silent
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
// A private server: its command counts are this test's alone. Renewals are the only
// PEXPIRE calls here (the renew script runs PEXPIRE on the lock key).
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$key = rl_key('renew');
// A renewal is the script's PEXPIRE, or, of a lock taken with nobody queued on a
// server with its own compare-and-delete, a SET IFEQ (docs/performance.md): there
// the SETs are counted too, less the other side's tries (each a SET NX).
$cad = rl_cad($dsn) !== null;
$renewals = function () use ($dsn, $cad) {
    $stats = rl_cmd($dsn, 'INFO', 'commandstats');
    preg_match('/cmdstat_pexpire:calls=(\d+)/', $stats, $m);
    preg_match('/cmdstat_set:calls=(\d+)/', $stats, $s);
    return (int) ($m[1] ?? 0) + ($cad ? (int) ($s[1] ?? 0) : 0);
};
try {
    $holder = pcntl_fork();
    if ($holder === 0) {
        $l = new Lock($key, 0, 0.3, ['dsn' => $dsn, 'auto_renew' => true]);
        $l->addLock() or exit(10);
        rl_cmd($dsn, 'SET', "$key:phase", 'held');
        usleep(1000000);                     // 3.3x lockOut
        $owned = $l->isOwned();
        rl_cmd($dsn, 'SET', "$key:released", sprintf('%.6f', microtime(true)));
        $ok = $l->releaseLock();
        usleep(900000);                      // alive and idle: the watchdog must be quiet
        exit($owned && $ok ? 0 : 11);
    }
    while (rl_cmd($dsn, 'GET', "$key:phase") !== 'held') { usleep(2000); }
    $before = $renewals();
    // Others can't get it while the holder sleeps past its lease, again and again.
    $c = new Lock($key, 0, 10, ['dsn' => $dsn, 'fencing' => false]);
    $tries = $refused = 0;
    $t0 = microtime(true);
    while (microtime(true) - $t0 < 0.7) {
        $tries++;
        if ($c->tryLock() === false) { $refused++; } else { break; }
        usleep(50000);
    }
    echo "refused every try: ", var_export($tries >= 10 && $refused === $tries, true), "\n";
    echo "renewed while held: ", var_export($renewals() - $before - ($cad ? $tries : 0) >= 4, true), "\n";
    // A waiter blocked on the lock gets it as soon as the holder releases.
    $w = new Lock($key, 5, 10, ['dsn' => $dsn]);
    $got = $w->addLock();
    $lag = microtime(true) - (float) rl_cmd($dsn, 'GET', "$key:released");
    echo "waiter got it: ", var_export(is_string($got), true), ", within 150 ms of the release: ", var_export($lag < 0.15, true), "\n";
    // The holder is still alive for 0.9 s: no renewal may follow its release.
    $after = $renewals();
    usleep(600000);
    echo "renewals after release: ", $renewals() - $after, "\n";
    pcntl_waitpid($holder, $st);
    echo "holder owned it after 3x lockOut and released it: ", var_export(pcntl_wexitstatus($st) === 0, true), "\n";
    $w->releaseLock();
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
refused every try: true
renewed while held: true
waiter got it: true, within 150 ms of the release: true
renewals after release: 0
holder owned it after 3x lockOut and released it: true
