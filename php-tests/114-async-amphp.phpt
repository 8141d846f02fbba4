--TEST--
Waits an event loop drives, under Debian's AMPHP (php-amphp-amp 2.x, Amp\Loop::onReadable, docs/examples/amp.php): 20 coroutines contend for 4 keys with 4 processes that wait blocking, half of them through rl_amp_synchronized(), while a 10 ms Loop::repeat() timer keeps its beat: no beat late by more than 50 ms while waits are pending, every counter exact, nothing left held or queued; a wait that reaches its deadline resolves to false, and one whose server is gone fails with LockConnectionException, as addLock() throws
--CONFLICTS--
cpu # 5 processes, a 10 ms beat
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
if (!is_file('/usr/share/php/Amp/autoload.php')) die('skip needs php-amphp-amp (AMPHP v2), which tools/env/deps.sh installs where the release ships it: Debian 12 does, Debian 13 does not');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
require __DIR__ . '/../docs/examples/amp.php';
use Amp\Loop;
$dsn = rl_dsn();
$opts = ['dsn' => $dsn] + RL_PATIENT;
$keys = [];
for ($i = 0; $i < 4; $i++) { $keys[] = rl_key("amp$i"); }
$counter = fn(string $k) => "$k:count";
$until = microtime(true) + 3.0;
$others = [];
for ($p = 0; $p < 4; $p++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $n = array_fill(0, 4, 0);
        for ($i = $p; microtime(true) < $until; $i++) {
            $k = $keys[$i % 4];
            $lock = new Lock($k, 10, 5, $opts);
            if (($t = $lock->addLock()) === false) { continue; }
            $v = (int) rl_cmd($dsn, 'GET', $counter($k));
            usleep(2000);
            rl_cmd($dsn, 'SET', $counter($k), (string) ($v + 1));
            $lock->releaseLock($t);
            $n[$i % 4]++;
        }
        file_put_contents(sys_get_temp_dir() . '/rl-114-' . posix_getppid() . "-$p", json_encode($n));
        exit(0);
    }
    $others[] = $pid;
}
$ours = array_fill(0, 4, 0);
$pending = 0;
$late = 0.0;
$beats = 0;
Loop::run(function () use ($keys, $opts, $dsn, $counter, $until, &$ours, &$pending, &$late, &$beats) {
    $next = microtime(true) + 0.01;
    $tick = Loop::repeat(10, function () use (&$next, &$pending, &$late, &$beats) {
        $now = microtime(true);
        if ($pending > 0) { $late = max($late, $now - $next); $beats++; }
        $next = $now + 0.01;
    });
    $work = [];
    for ($c = 0; $c < 20; $c++) {
        $work[] = Amp\call(function () use ($c, $keys, $opts, $dsn, $counter, $until, &$ours, &$pending) {
            $ki = $c % 4;
            $k = $keys[$ki];
            $lock = new Lock($k, 10, 5, $opts);
            $critical = function () use ($dsn, $counter, $k) {
                $v = (int) rl_cmd($dsn, 'GET', $counter($k));
                yield new Amp\Delayed(2);
                rl_cmd($dsn, 'SET', $counter($k), (string) ($v + 1));
            };
            while (microtime(true) < $until) {
                $pending++;
                if ($c % 2) {
                    yield rl_amp_synchronized($lock, $critical);
                    $pending--;
                } else {
                    $t = yield rl_amp_wait($lock->addLockAsync());
                    $pending--;
                    if ($t === false) { continue; }
                    yield Amp\call($critical);
                    $lock->releaseLock($t);
                }
                $ours[$ki]++;
                yield new Amp\Delayed(1);
            }
        });
    }
    yield Amp\Promise\all($work);
    Loop::cancel($tick);
});
foreach ($others as $pid) { pcntl_waitpid($pid, $status); }
echo "beats while waits were pending: ", $beats > 50 ? 'many' : $beats, "\n";
printf("latest beat late by at most 50 ms: %s\n", $late <= 0.050 ? 'yes' : sprintf('no (%.1f ms)', $late * 1000));
$exact = true;
foreach ($keys as $i => $k) {
    $want = $ours[$i];
    for ($p = 0; $p < 4; $p++) {
        $file = sys_get_temp_dir() . '/rl-114-' . getmypid() . "-$p";
        $want += json_decode((string) @file_get_contents($file), true)[$i] ?? 0;
    }
    $have = (int) rl_cmd($dsn, 'GET', $counter($k));
    if ($have !== $want) { $exact = false; echo "key $i: counter $have, holds $want\n"; }
}
for ($p = 0; $p < 4; $p++) { @unlink(sys_get_temp_dir() . '/rl-114-' . getmypid() . "-$p"); }
echo "counters exact: ", $exact ? 'yes' : 'no', "\n";
echo "coroutines' holds: ", array_sum($ours) > 50 ? 'over 50' : array_sum($ours), "\n";
$left = array_filter((array) rl_cmd($dsn, 'KEYS', 'rl-test:amp*'), fn($x) => !str_ends_with((string) $x, ':count'));
echo "keys left: ", count($left), "\n";

// The deadline, and a server gone mid-wait: the same ends as addLock()'s.
$k = rl_key('amp-deadline');
$holder = new Lock($k, 0, 5, $opts);
$t = $holder->addLock();
$spare = rl_start_redis();
$held = new Lock($k, 0, 30, ['dsn' => $spare['dsn']]);
$held->addLock();
Loop::run(function () use ($k, $opts, $spare) {
    $t0 = microtime(true);
    $r = yield rl_amp_wait((new Lock($k, 0.3, 5, $opts))->addLockAsync());
    printf("deadline: %s after %s\n", var_export($r, true), microtime(true) - $t0 >= 0.29 ? 'its timeOut' : 'too soon');
    $w = (new Lock($k, 2, 5, ['dsn' => $spare['dsn'], 'connect_timeout' => 0.5, 'read_timeout' => 0.5]))->addLockAsync();
    Loop::delay(200, fn() => rl_kill_redis($spare));
    try {
        var_dump(yield rl_amp_wait($w));
    } catch (LockException $e) {
        echo "server gone: ", get_class($e), "\n";
    }
});
echo "the held lock is still held: ", var_export($holder->isOwned($t), true), "\n";
--EXPECT--
beats while waits were pending: many
latest beat late by at most 50 ms: yes
counters exact: yes
coroutines' holds: over 50
keys left: 0
deadline: false after its timeOut
server gone: LockConnectionException
the held lock is still held: true
