--TEST--
A waiter's queue entry ends on the server by its deadline even when its queueing try arrives late (a link that delays each direction by 150 ms): once the process has read the server's clock (an earlier wait), each entry carries a cap on that clock, and the server's time for it is no later than the waiter's deadline there; the first wait, with no reading yet, is late by the delay
--FILE--
<?php
require __DIR__ . '/_fault.inc';
$dsn = rl_dsn();
$p = rl_test_proxy((int) parse_url($dsn, PHP_URL_PORT), 150);
$o = ['dsn' => $p['dsn'], 'read_timeout' => 2, 'connect_timeout' => 2];
$key = rl_key('deadline-cap');
$holder = new Lock($key, 0, 30, ['dsn' => $dsn]);
$holder->addLock();
$file = sys_get_temp_dir() . '/rl-091-' . getmypid();
$server_ms = fn() => intdiv(rl_server_us($dsn), 1000);
/**
 * One wait of 2 s behind the holder; a child reads the entry once it is queued. Returns by
 * how much (ms) the entry's time on the server ends after the waiter's deadline there
 * (negative: before it).
 */
$wait = function () use ($o, $key, $dsn, $file, $server_ms): int {
    $w = new Lock($key, 2.0, 10, $o);
    $w->isLocked();  // connected, so that the wait's clock starts with its first try
    $pid = pcntl_fork();
    if ($pid === 0) {
        // As soon as the entry is there (polled: a busy machine may start this child
        // late, but the entry stays until the wait's end).
        $entry = null;
        for ($i = 0; $i < 1000 && !$entry; $i++) {
            $entry = rl_cmd($dsn, 'LINDEX', "{{$key}}:queue", '0');
            if (!$entry) { usleep(2000); }
        }
        file_put_contents($file, (string) $entry);
        exit(0);
    }
    $start = $server_ms();
    $w->addLock();
    pcntl_waitpid($pid, $st);
    [, , $until] = rl_queue_entry(file_get_contents($file));
    // The deadline on the server's clock: 2 s after the server read $start, which was
    // before the wait began (so this errs towards a later deadline).
    return $until - ($start + 2000);
};
$first = $wait();
echo "the first wait (no reading of the server's clock yet): late by the delay: ", $first > 100 ? 'yes' : "no ($first ms)", "\n";
$late = [];
for ($i = 0; $i < 3; $i++) { $late[] = $wait(); }
echo "the next waits: each entry ends by the deadline: ", max($late) <= 2 ? 'yes' : 'NO (' . implode(', ', $late) . ' ms after it)', "\n";
echo "  and not long before it: ", min($late) > -400 ? 'yes' : 'NO (' . implode(', ', $late) . ' ms)', "\n";
$holder->releaseLock();
@unlink($file);
?>
--EXPECT--
the first wait (no reading of the server's clock yet): late by the delay: yes
the next waits: each entry ends by the deadline: yes
  and not long before it: yes
