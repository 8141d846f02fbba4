--TEST--
The pool's gauges after a pid is reused: a child holding a lock is killed and a new process is given its pid (chosen through /proc/sys/kernel/ns_last_pid); the dead child's hold is no longer counted, the new process is not taken for it, and the counts stay
--SKIPIF--
<?php
if (!function_exists('pcntl_fork') || !function_exists('posix_kill')) die('skip pcntl and posix');
if (!is_writable('/proc/sys/kernel/ns_last_pid')) die('skip choosing the next pid needs /proc/sys/kernel/ns_last_pid writable (root in the pid namespace)');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$o = ['dsn' => rl_dsn()];
$p = 'rl-test:reuse:' . getmypid();
$m = fn() => redis_lock_metrics()['rl-test:reuse:*:held'] ?? ['holds' => 0, 'acquired' => 0];

$pipe = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, 0);
$dead = pcntl_fork();
if ($dead === 0) {
    $l = new Lock("$p:held", 0, 30, $o);
    $l->addLock();
    fwrite($pipe[1], 'held');
    sleep(30);
    exit(0);
}
fread($pipe[0], 4);
printf("while the child holds: holds %d, acquired %d\n", $m()['holds'], $m()['acquired']);
// A process's start is known to the clock tick (10 ms): the new one starts later.
usleep(50000);
posix_kill($dead, SIGKILL);
pcntl_waitpid($dead, $st);

// A new process with the dead child's pid: the next pid is chosen, and another
// process of the machine may take it first, so it is tried again.
$reused = false;
for ($try = 0; $try < 100 && !$reused; $try++) {
    file_put_contents('/proc/sys/kernel/ns_last_pid', (string) ($dead - 1));
    $new = pcntl_fork();
    if ($new === 0) {
        sleep(30);
        exit(0);
    }
    if ($new === $dead) {
        $reused = true;
        break;
    }
    posix_kill($new, SIGKILL);
    pcntl_waitpid($new, $st);
}
echo 'the pid given again: ', var_export($reused, true), "\n";
printf("the new process alive: %s\n", var_export(posix_kill($dead, 0), true));
$f = $m();
printf("after: holds %d, acquired %d (kept)\n", $f['holds'], $f['acquired']);
posix_kill($new, SIGKILL);
pcntl_waitpid($new, $st);
--EXPECT--
while the child holds: holds 1, acquired 1
the pid given again: true
the new process alive: true
after: holds 0, acquired 1 (kept)
