--TEST--
One connection per server per process: a process that waited for a lock (or for permits), woken by the release, keeps one connection, where it listened (RESP3); a grant that comes on it later is not taken for a reply, and a new wait for the same token is not fooled by it; through a server without RESP3 (the proxy answers HELLO with an error) a waiter listens on a subscriber of its own and is woken all the same
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$port = (int) parse_url($dsn, PHP_URL_PORT);
$conns = fn(array $p) => (int) preg_replace('/^conns (\d+).*/', '$1', rl_proxy($p, 'stats'));

/**
 * A child behind its own proxy $p waits for $take (a lock or permits held here by
 * $hold); this process releases once it is queued. Returns what the child reports
 * once woken: whether it got it in time, its connects, and the proxy's open
 * connections while the child still lives.
 */
function woken_child(array $p, callable $take, callable $queued, callable $release): string {
    $out = tempnam(sys_get_temp_dir(), 'rl-076-');
    $pid = pcntl_fork();
    if ($pid === 0) {
        $t0 = microtime(true);
        $got = $take($p['dsn']);
        file_put_contents($out, sprintf('got %s within 2 s %s, connects %d', var_export($got, true),
            var_export(microtime(true) - $t0 < 2, true), redis_lock_stats()['connects']));
        usleep(500000);   // alive while the parent counts its connections
        exit(0);
    }
    for ($i = 0; $i < 500 && !$queued(); $i++) { usleep(5000); }
    $release();
    for ($i = 0; $i < 400 && !filesize($out); $i++) { usleep(5000); clearstatcache(); }
    $line = file_get_contents($out) . ', open connections ' . $GLOBALS['conns']($p);
    pcntl_waitpid($pid, $st);
    unlink($out);
    return $line;
}

// A lock: the child's one connection carried its wait.
$key = rl_key('one');
$p = rl_fault_proxy($port);
$h = new Lock($key, 0, 10, ['dsn' => $dsn]);
$h->addLock();
echo "lock: ", woken_child($p,
    fn($d) => (new Lock($key, 5, 10, ['dsn' => $d]))->addLock() !== false,
    fn() => $h->inspect()['waiters'] === 1, fn() => $h->releaseLock()), "\n";
rl_stop_proxy($p);

// Permits: the same.
$skey = rl_key('one-sem');
$p = rl_fault_proxy($port);
$s = new Semaphore($skey, 1, 0, 10, ['dsn' => $dsn]);
$s->acquire();
echo "semaphore: ", woken_child($p,
    fn($d) => (new Semaphore($skey, 1, 5, 10, ['dsn' => $d]))->acquire() !== false,
    fn() => $s->inspect()['waiters'] === 1, fn() => $s->release()), "\n";
rl_stop_proxy($p);

// Without RESP3: a subscriber of its own, so two connections; woken all the same.
$p = rl_fault_proxy($port);
rl_proxy($p, 'nohello');
$h->addLock();
echo "no RESP3: ", woken_child($p,
    fn($d) => (new Lock($key, 5, 10, ['dsn' => $d]))->addLock() !== false,
    fn() => $h->inspect()['waiters'] === 1, fn() => $h->releaseLock()), "\n";
rl_stop_proxy($p);

// A grant that comes when nobody waits: a wait for the chosen token "same" gives
// up; its channel (read from the queue meanwhile) then gets a grant for that token.
$o = ['dsn' => $dsn];
$other = new Lock($key, 0, 10, $o);
$other->addLock();
$w = new Lock($key, 0.4, 10, $o);
$pid = pcntl_fork();
if ($pid === 0) {
    usleep(150000);
    $entry = rl_cmd($dsn, 'LINDEX', "{{$key}}:queue", '0');
    file_put_contents(sys_get_temp_dir() . "/rl-076-channel-$key", rl_queue_entry($entry)[1]);
    exit(0);
}
var_dump($w->addLock('same'));
pcntl_waitpid($pid, $st);
$channel = file_get_contents($file = sys_get_temp_dir() . "/rl-076-channel-$key");
unlink($file);
echo "a listener on the channel: ", rl_cmd($dsn, 'PUBSUB', 'NUMSUB', $channel)[1], "\n";
// A grant as a release sends it, made now on the server's clock: only where and when it is heard can make it ignored.
rl_cmd($dsn, 'PUBLISH', $channel, 'g@' . intdiv(rl_server_us($dsn), 1000) . ':same');
usleep(50000);
// The replies are still each call's own.
var_dump($w->isLocked(), $w->isOwned('same'), $w->getTtl() > 9);
// A new wait for the same token, the lock still held: the old grant does not fool it.
// A grant as a release sends it, made now on the server's clock: only where and when it is heard can make it ignored.
rl_cmd($dsn, 'PUBLISH', $channel, 'g@' . intdiv(rl_server_us($dsn), 1000) . ':same');
usleep(50000);
var_dump($w->addLock('same'), $other->isOwned());
$other->releaseLock();
var_dump(is_string($w->addLock()), $w->releaseLock());
?>
--EXPECT--
lock: got true within 2 s true, connects 1, open connections 1
semaphore: got true within 2 s true, connects 1, open connections 1
no RESP3: got true within 2 s true, connects 2, open connections 2
bool(false)
a listener on the channel: 1
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
bool(true)
bool(true)
