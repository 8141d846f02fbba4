--TEST--
A waiter is woken by the release itself, far sooner than its polling interval, and the key's own queue is left empty
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('wake');
// Polling every 2 s: only a wake-up can make the waiter quick.
$opts = ['dsn' => $dsn, 'retry_delay' => 2.0, 'retry_delay_max' => 2.0];
foreach (['default' => false, 'fair' => true] as $mode => $fair) {
    $holder = new Lock($key, 0, 10, $opts + ['fair' => $fair]);
    $holder->addLock() or die("holder failed\n");
    $pid = pcntl_fork();
    if ($pid === 0) {
        $l = new Lock($key, 5, 10, $opts + ['fair' => $fair]);
        $t = $l->addLock();
        rl_cmd($dsn, 'SET', "$key:got", sprintf('%.6f', microtime(true)));
        $l->releaseLock($t);
        exit($t === false ? 1 : 0);
    }
    usleep(400000);                        // the waiter is blocked by now
    $released = microtime(true);
    $holder->releaseLock();
    pcntl_waitpid($pid, $st);
    $lag = (float) rl_cmd($dsn, 'GET', "$key:got") - $released;
    printf("%s: waiter exit %d, acquired %s after the release\n", $mode, pcntl_wexitstatus($st),
        $lag >= 0 && $lag < 0.25 ? 'within 250 ms' : sprintf('%.3f s', $lag));
}
printf("queue left %d\n", rl_cmd($dsn, 'EXISTS', "{{$key}}:queue"));
?>
--EXPECT--
default: waiter exit 0, acquired within 250 ms after the release
fair: waiter exit 0, acquired within 250 ms after the release
queue left 0
