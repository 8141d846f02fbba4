--TEST--
A broken or hostile server: malformed, truncated, oversized, endless or deeply nested replies each end addLock() and releaseLock() with a LockConnectionException naming the address and the fault, within about two read_timeouts, with no panic and no memory taken by what was only declared; a reply longer than max_reply (8 MiB by default, an option and a directive) is refused before it is read, and read with a larger max_reply; a real server works after
--SKIPIF--
<?php if (!function_exists('pcntl_fork') || !function_exists('posix_kill')) die('skip pcntl and posix');
--FILE--
<?php
require __DIR__ . '/_fault.inc';

// Each scenario has a listening port of its own; every connection to it gets the
// scenario's reply to its first command that is not part of a new connection's
// setup (PING, answered as Redis does; HELLO, the compare-and-delete probe, and
// CONFIG GET and INFO, eviction's check,
// refused as by a server that renamed them). `after`: what the server does next.
$scenarios = [
    'malformed length' => ["\$12a\r\nhello\r\n", 'silent'],
    'negative length' => ["*-7\r\n", 'silent'],
    'truncated, then silent' => ["\$10\r\nhel", 'silent'],
    'truncated, then closed' => ["*3\r\n:1\r\n\$5\r\nab", 'close'],
    '100 MB bulk declared, then silent' => ["\$104857600\r\n" . str_repeat('x', 1000), 'silent'],
    'a 9 MB bulk, whole' => ["\$9437184\r\n" . str_repeat('x', 9437184) . "\r\n", 'silent'],
    '100000 levels of nesting' => [str_repeat("*1\r\n", 100000) . ":1\r\n", 'silent'],
    'garbage type byte' => ["?what\r\n", 'silent'],
    'RESP3 boolean malformed' => ["%2\r\n#x\r\n", 'silent'],
    '2 million integers' => ["*2000000\r\n" . str_repeat(":1\r\n", 2000000), 'silent'],
    'a byte every 50 ms' => ["\$1000000\r\n", 'trickle'],
    'a line without end' => ['+', 'endless line'],
    'push messages, never the reply' => ['', 'endless pushes'],
    'a well-formed reply of the wrong shape' => ["*2\r\n:1\r\n:2\r\n", 'silent'],
];
$listeners = [];
foreach ($scenarios as $name => $_) {
    $listeners[$name] = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr) or die("listen: $errstr\n");
}
$portOf = fn($s) => (int) substr(strrchr(stream_socket_get_name($s, false), ':'), 1);

/** Reads one command (an array of bulk strings); null when the client is gone. */
function read_command($c): ?array {
    $head = fgets($c);
    if ($head === false || $head[0] !== '*') { return null; }
    $args = [];
    for ($i = 0, $n = (int) substr($head, 1); $i < $n; $i++) {
        $len = (int) substr((string) fgets($c), 1);
        $arg = '';
        while (strlen($arg) < $len + 2) {
            $more = fread($c, $len + 2 - strlen($arg));
            if ($more === false || $more === '') { return null; }
            $arg .= $more;
        }
        $args[] = substr($arg, 0, $len);
    }
    return $args;
}

/** Writes $bytes while the client reads them; false once it has gone. */
function send_all($c, string $bytes): bool {
    for ($at = 0; $at < strlen($bytes); $at += $n) {
        $n = @fwrite($c, substr($bytes, $at, 65536));
        if (!$n) { return false; }
    }
    return true;
}

/** One connection: its setup answered, then the scenario. Ten seconds at most. */
function serve($c, string $reply, string $after): void {
    stream_set_timeout($c, 10);
    $until = microtime(true) + 10;
    $setup = ['PING' => "+PONG\r\n", 'CONFIG' => "-ERR unknown command 'CONFIG'\r\n", 'INFO' => "-ERR unknown command 'INFO'\r\n", 'HELLO' => "-ERR unknown command 'HELLO'\r\n"];
    while (($cmd = read_command($c)) !== null && isset($setup[strtoupper($cmd[0])])) {
        fwrite($c, $setup[strtoupper($cmd[0])]);
    }
    if ($cmd === null || !send_all($c, $reply)) { return; }
    switch ($after) {
        case 'close':
            return;
        case 'silent':
            // Until the client hangs up.
            while (!feof($c) && microtime(true) < $until) { fread($c, 65536); }
            return;
        case 'trickle':
            while (microtime(true) < $until && @fwrite($c, 'x')) { usleep(50000); }
            return;
        case 'endless line':
            $chunk = str_repeat('1', 65536);
            while (microtime(true) < $until && send_all($c, $chunk)) {}
            return;
        case 'endless pushes':
            $chunk = str_repeat(">2\r\n\$7\r\nmessage\r\n\$1\r\nx\r\n", 1000);
            while (microtime(true) < $until && send_all($c, $chunk)) {}
            return;
    }
}

// The server: a child process, and a child of its own per connection (each ends
// when its client has gone, or after ten seconds).
$server = pcntl_fork();
if ($server === 0) {
    pcntl_signal(SIGCHLD, SIG_IGN);
    while (true) {
        $ready = array_values($listeners);
        $w = $e = null;
        if (!@stream_select($ready, $w, $e, 1)) { continue; }
        foreach ($ready as $l) {
            $c = @stream_socket_accept($l, 0);
            if (!$c) { continue; }
            $name = array_search($l, $listeners, true);
            if (pcntl_fork() === 0) {
                foreach ($listeners as $other) { fclose($other); }
                serve($c, ...$scenarios[$name]);
                fclose($c);
                posix_kill(posix_getpid(), SIGKILL);
            }
            fclose($c);
        }
    }
}

function status(string $field): int {
    preg_match("/^$field:\\s+(\\d+) kB/m", file_get_contents('/proc/self/status'), $m);
    return (int) $m[1] * 1024;
}

$readTimeout = 0.3;
$bound = 2 * $readTimeout + 1.0;
$token = str_repeat('ab', 16);
$mem0 = memory_get_usage();
$rss0 = status('VmRSS');
$hwm0 = status('VmHWM');
foreach ($scenarios as $name => $_) {
    $port = $portOf($listeners[$name]);
    $opts = ['dsn' => "redis://127.0.0.1:$port", 'read_timeout' => $readTimeout, 'connect_timeout' => 0.5];
    $lines = [];
    foreach (['addLock' => fn() => (new Lock(rl_key('hostile'), 0, 10, $opts))->addLock(),
              'releaseLock' => fn() => (new Lock(rl_key('hostile'), 0, 10, $opts))->releaseLock($token)] as $call => $fn) {
        [$r, $took] = rl_timed($fn);
        $what = $r instanceof Throwable ? get_class($r) : 'no exception: ' . var_export($r, true);
        $named = $r instanceof Throwable && str_contains($r->getMessage(), "127.0.0.1:$port");
        $panic = $r instanceof Throwable && stripos($r->getMessage(), 'panic') !== false;
        $lines[] = sprintf("  %s: %s, names the address: %s, in time: %s%s", $call, $what, $named ? 'yes' : 'NO',
            $took < $bound ? 'yes' : sprintf('NO (%.2f s)', $took), $panic ? ', PANIC' : '');
        if ($call === 'addLock') {
            $message = $r instanceof Throwable ? str_replace((string) $port, 'PORT', $r->getMessage()) : '';
        }
    }
    echo "$name\n", implode("\n", $lines), "\n  $message\n";
}
gc_collect_cycles();
printf("PHP memory grew by less than 64 KiB: %s\n", var_export(memory_get_usage() - $mem0 < 65536, true));
printf("RSS grew by less than 4 MiB: %s\n", var_export(status('VmRSS') - $rss0 < (4 << 20), true));
printf("peak RSS grew by less than 8 MiB: %s\n", var_export(status('VmHWM') - $hwm0 < (8 << 20), true));

// The bound is the setting's: with a larger max_reply the 9 MB bulk is read whole, and
// found of the wrong shape for a lock's reply.
$port = $portOf($listeners['a 9 MB bulk, whole']);
try {
    (new Lock(rl_key('hostile'), 0, 10, ['dsn' => "redis://127.0.0.1:$port", 'read_timeout' => 2, 'max_reply' => 16 << 20]))->addLock();
    echo "max_reply 16 MiB: no exception\n";
} catch (LockConnectionException $e) {
    echo "max_reply 16 MiB: read whole, then: ", str_contains($e->getMessage(), 'unexpected reply') ? 'an unexpected reply' : $e->getMessage(), "\n";
}
foreach ([1024, 1 << 30, '8M'] as $bad) {
    try { new Lock('x', 0, 1, ['max_reply' => $bad]); echo "max_reply $bad: accepted\n"; }
    catch (Throwable $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
}
posix_kill($server, SIGKILL);
pcntl_waitpid($server, $status);

// The process is healthy: a real server, at once.
$l = new Lock(rl_key('after-hostile'), 0, 10, ['dsn' => rl_dsn()]);
$t = $l->addLock();
echo "a real server after: ", var_export(is_string($t) && $l->releaseLock($t), true), "\n";
?>
--EXPECTF--
malformed length
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: expected a number, got "12a"%s
negative length
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: expected an aggregate length of 0 to 1048576 values, got "-7"%s
truncated, then silent
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: timed out (connect_timeout 0.5 s, read_timeout 0.3 s)%s
truncated, then closed
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: connection lost (the server closed the connection)%s
100 MB bulk declared, then silent
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: expected a bulk length of at most max_reply (8388608 bytes), got "104857600"%s
a 9 MB bulk, whole
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: expected a bulk length of at most max_reply (8388608 bytes), got "9437184"%s
100000 levels of nesting
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: aggregates nested at most 64 deep, got deeper%s
garbage type byte
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: expected a RESP reply, got "?what"%s
RESP3 boolean malformed
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: expected a boolean, got "x"%s
2 million integers
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: expected an aggregate length of 0 to 1048576 values, got "2000000"%s
a byte every 50 ms
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: timed out (connect_timeout 0.5 s, read_timeout 0.3 s)%s
a line without end
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: protocol error - Parse: a line of at most 65536 bytes, got a longer one%s
push messages, never the reply
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: timed out (connect_timeout 0.5 s, read_timeout 0.3 s)%s
a well-formed reply of the wrong shape
  addLock: LockConnectionException, names the address: yes, in time: yes
  releaseLock: LockConnectionException, names the address: yes, in time: yes
  redis-lock: cannot talk to Redis at redis://127.0.0.1:PORT: the server broke the protocol: an unexpected reply (to SET NX: array([int(1), int(2)])); the lock may have been taken: releaseLock() clears it, or it expires after lockOut
PHP memory grew by less than 64 KiB: true
RSS grew by less than 4 MiB: true
peak RSS grew by less than 8 MiB: true
max_reply 16 MiB: read whole, then: an unexpected reply
ValueError: option "max_reply" must be between 65536 and 536870912 bytes (64K to 512M), 1024 given
ValueError: option "max_reply" must be between 65536 and 536870912 bytes (64K to 512M), 1073741824 given
TypeError: option "max_reply" must be of type int, string given
a real server after: true
