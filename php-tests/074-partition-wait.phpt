--TEST--
A partition while waiting (fault proxy): a waiter queued behind a holder is cut off; its wait ends at its deadline (within read_timeout more), with false or LockConnectionException naming the address; nothing stays queued for it: inspect() counts no waiter, the holder's next release does not hand the lock to the cut-off waiter, another client takes it at once, and the waiter's entry is gone from the queue
--SKIPIF--
<?php if (!function_exists('pcntl_fork') || !function_exists('posix_kill')) die('skip pcntl, posix');
--FILE--
<?php
require __DIR__ . '/_fault.inc';
$dsn = rl_dsn();
$p = rl_test_proxy((int) parse_url($dsn, PHP_URL_PORT));
$rt = 0.5;
$timeOut = 1.0;
$yes = fn(bool $b) => $b ? 'yes' : 'NO';
$key = rl_key('partition-wait');
$queue = '{' . $key . '}:queue';
$holder = new Lock($key, 0, 10, ['dsn' => $dsn]);
$holder->addLock();
// The waiter's own token, to find its entry in the queue and the lock.
$wt = 'waiter-' . bin2hex(random_bytes(8));
$result = tempnam(sys_get_temp_dir(), 'rl-wait');

$pid = pcntl_fork();
if ($pid === 0) {
    $w = new Lock($key, $timeOut, 5, ['dsn' => $p['dsn'], 'read_timeout' => $rt, 'connect_timeout' => $rt]);
    [$r, $took] = rl_timed(fn() => $w->addLock($wt));
    $how = $r === false ? 'false' : (rl_names($r, $p['dsn']) ? 'LockConnectionException naming the address' : rl_outcome($r));
    file_put_contents($result, sprintf("%.3f\n%s", $took, $how));
    exit(0);
}
$until = microtime(true) + 3;
while ($holder->inspect()['waiters'] < 1 && microtime(true) < $until) { usleep(5000); }
echo "queued behind the holder: ", $holder->inspect()['waiters'], "\n";
// Its subscriber and command connections both go through the proxy.
rl_proxy($p, 'partition');
pcntl_waitpid($pid, $status);
[$took, $how] = explode("\n", (string) file_get_contents($result), 2) + [1 => '(no result)'];
@unlink($result);
echo "the wait ends within deadline + read_timeout + 0.3 s: ", $yes((float) $took < $timeOut + $rt + 0.3), "\n";
echo "  with false or LockConnectionException naming the address: ",
    $how === 'false' || $how === 'LockConnectionException naming the address' ? 'yes' : $how, "\n";
// Redis still sees the waiter's subscriber (the partition closes nothing), so only
// the entry's own deadline can tell that nobody waits on it any more.
echo "queued waiters once it ended (inspect): ", $holder->inspect()['waiters'], "\n";
echo "the holder's release: ", var_export($holder->releaseLock(), true),
    "; the lock handed to the cut-off waiter: ", rl_cmd($dsn, 'GET', $key) === $wt ? 'YES' : 'no';
$other = new Lock($key, 0, 5, ['dsn' => $dsn]);
echo "; another client takes it at once: ", $yes(is_string($other->tryLock())), "\n";
// An entry past its deadline may sit in the list until a script passes it; after
// this release it must be gone.
$left = array_filter((array) rl_cmd($dsn, 'LRANGE', $queue, '0', '-1'), fn($e) => rl_queue_entry($e)[0] === $wt);
echo "the waiter's entry left in the queue: ", $left ? 'YES' : 'no', "\n";
$other->releaseLock();
?>
--EXPECT--
queued behind the holder: 1
the wait ends within deadline + read_timeout + 0.3 s: yes
  with false or LockConnectionException naming the address: yes
queued waiters once it ended (inspect): 0
the holder's release: true; the lock handed to the cut-off waiter: no; another client takes it at once: yes
the waiter's entry left in the queue: no
