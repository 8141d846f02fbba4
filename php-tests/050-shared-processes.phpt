--TEST--
Shared locks across processes: 12 processes mixing reads and writes never see a half-done write nor lose one; readers overlap (measured); a writer gets the lock while readers keep arriving; a SIGKILLed reader's share comes back at its lease end
--EXTENSIONS--
pcntl
posix
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('rw-procs');
$data = rl_key('rw-data');

echo "== 12 processes, reads and writes\n";
rl_cmd($dsn, 'MSET', "$data:a", '0', "$data:b", '0', "$data:in", '0', "$data:max", '0');
// The overlap gauge: readers in the section now, and the most at once (one atomic step each).
$enter = "local n = redis.call('incr', KEYS[1]) if n > tonumber(redis.call('get', KEYS[2])) then redis.call('set', KEYS[2], n) end return n";
$codes = rl_fork(12, function (int $i) use ($dsn, $key, $data, $enter) {
    $l = new Lock($key, 10, 5, ['dsn' => $dsn] + RL_PATIENT);
    $writer = $i < 3;                               // 3 writers, 9 readers
    $torn = 0;
    for ($n = 0; $n < ($writer ? 20 : 40); $n++) {
        if ($writer) {
            if (!is_string($l->addLock())) { return 2; }
            $a = (int) rl_cmd($dsn, 'GET', "$data:a");
            $b = (int) rl_cmd($dsn, 'GET', "$data:b");
            rl_cmd($dsn, 'SET', "$data:a", (string) ($a + 1));
            usleep(2000);                           // the two keys differ here
            rl_cmd($dsn, 'SET', "$data:b", (string) ($b + 1));
        } else {
            if (!is_string($l->addReadLock())) { return 3; }
            rl_cmd($dsn, 'EVAL', $enter, '2', "$data:in", "$data:max");
            $a = rl_cmd($dsn, 'GET', "$data:a");
            usleep(3000);
            if ($a !== rl_cmd($dsn, 'GET', "$data:b")) { $torn++; }
            rl_cmd($dsn, 'DECR', "$data:in");
        }
        if (!$l->releaseLock()) { return 4; }
    }
    return $torn ? 5 : 0;
});
echo "exits: ", implode(',', array_unique($codes)), "\n";
echo "writes: ", rl_cmd($dsn, 'GET', "$data:a"), " and ", rl_cmd($dsn, 'GET', "$data:b"), " (60 expected)\n";
$max = (int) rl_cmd($dsn, 'GET', "$data:max");
echo "readers overlapped: ", var_export($max > 1, true), " (most at once: $max of 9)\n";
echo "left: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers", "{{$key}}:queue"), " keys\n";

echo "== a writer among arriving readers\n";
$stop = sys_get_temp_dir() . '/rl-050-stop-' . getmypid();
$pids = [];
for ($i = 0; $i < 6; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $l = new Lock($key, 10, 5, ['dsn' => $dsn] + RL_PATIENT);
        while (!file_exists($stop)) {
            if ($l->addReadLock()) { usleep(20000); $l->releaseLock(); }
        }
        exit(0);
    }
    $pids[] = $pid;
}
usleep(300000);                                      // the readers overlap by now: the key is never free
$w = new Lock($key, 5, 5, ['dsn' => $dsn]);
$t0 = microtime(true);
$got = $w->addLock();
$waited = microtime(true) - $t0;
echo "the writer got it: ", var_export(is_string($got), true), ", within a second: ", var_export($waited < 1.0, true), sprintf(" (%.1f ms)", $waited * 1000), "\n";
echo "no reader inside meanwhile: ", rl_cmd($dsn, 'ZCARD', "{{$key}}:readers"), "\n";
$w->releaseLock();
touch($stop);
foreach ($pids as $pid) { pcntl_waitpid($pid, $st); }
unlink($stop);

echo "== a SIGKILLed reader\n";
$pid = pcntl_fork();
if ($pid === 0) {
    $l = new Lock($key, 0, 0.5, ['dsn' => $dsn]);
    $l->addReadLock();
    posix_kill(posix_getpid(), SIGKILL);
}
pcntl_waitpid($pid, $st);
$t0 = microtime(true);
$w = new Lock($key, 5, 5, ['dsn' => $dsn, 'retry_delay' => 1, 'retry_delay_max' => 1]);
echo "share held by the dead reader: ", rl_cmd($dsn, 'ZCARD', "{{$key}}:readers"), "\n";
$got = $w->addLock();
$waited = microtime(true) - $t0;
echo "a writer gets it at the lease end: ", var_export(is_string($got) && $waited > 0.3 && $waited < 1.2, true), "\n";
$w->releaseLock();
echo "left: ", rl_cmd($dsn, 'EXISTS', $key, "{{$key}}:readers", "{{$key}}:queue"), " keys\n";
?>
--EXPECTF--
== 12 processes, reads and writes
exits: 0
writes: 60 and 60 (60 expected)
readers overlapped: true (most at once: %d of 9)
left: 0 keys
== a writer among arriving readers
the writer got it: true, within a second: true (%f ms)
no reader inside meanwhile: 0
== a SIGKILLed reader
share held by the dead reader: 1
a writer gets it at the lease end: true
left: 0 keys
