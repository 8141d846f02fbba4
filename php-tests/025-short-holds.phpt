--TEST--
Short holds: by default a releaser may take the lock back while the first waiter's 5 ms patience lasts, and that waiter is told when to look again; fair mode never allows the re-take
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
// 'idle': the first waiter frees the lock after a short hold and goes away, so the
// second can only learn of it from the notice (else: its once-a-second recheck).
$cases = ['default, re-take' => [false, true], 'default, idle' => [false, false], 'fair, re-take' => [true, true]];
foreach ($cases as $mode => [$fair, $retake]) {
    $key = rl_key('short');
    $opts = ['dsn' => $dsn, 'fair' => $fair];
    $holder = new Lock($key, 0, 10, $opts);
    $holder->addLock() or die("holder failed\n");
    $pids = [];
    foreach (['first', 'second'] as $i => $who) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $l = new Lock($key, 5, 10, $opts);
            $t = $l->addLock() or exit(1);
            if ($who === 'first') {
                $l->releaseLock($t);                 // held for microseconds: a short hold
                $freed = microtime(true);
                $again = $retake ? $l->tryLock() : false;   // take it straight back?
                rl_cmd($dsn, 'SET', "$key:retook", $again === false ? 'no' : 'yes');
                rl_cmd($dsn, 'SET', "$key:freed", sprintf('%.6f', $freed));
                if ($again !== false) { $l->releaseLock($again); }
            } else {
                rl_cmd($dsn, 'SET', "$key:second", sprintf('%.6f', microtime(true)));
                $l->releaseLock($t);
            }
            exit(0);
        }
        $pids[] = $pid;
        while (rl_cmd($dsn, 'LLEN', "{{$key}}:queue") < $i + 1) { usleep(2000); }
    }
    $holder->releaseLock();                          // a long hold: handed to 'first'
    foreach ($pids as $pid) { pcntl_waitpid($pid, $st); }
    $lag = (float) rl_cmd($dsn, 'GET', "$key:second") - (float) rl_cmd($dsn, 'GET', "$key:freed");
    printf("%s: retook %s, second waiter %s\n", $mode, rl_cmd($dsn, 'GET', "$key:retook"),
        $lag < 0.3 ? 'served soon after' : sprintf('late by %.3f s', $lag));
}
?>
--EXPECT--
default, re-take: retook yes, second waiter served soon after
default, idle: retook no, second waiter served soon after
fair, re-take: retook no, second waiter served soon after
