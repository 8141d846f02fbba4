--TEST--
Passwords, ACL users, databases and unix sockets in the dsn; refused auth is a LockConnectionException without the password
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$sock = sys_get_temp_dir() . '/rl-test-' . getmypid() . '.sock';
$srv = rl_start_redis(['--requirepass', 'right-pw', '--unixsocket', $sock, '--unixsocketperm', '700']);
try {
    $p = $srv['port'];
    $key = rl_key('auth');
    foreach (["redis://:wrong-pw@127.0.0.1:$p", "redis://127.0.0.1:$p"] as $bad) {
        try {
            (new Lock($key, 0, 5, ['dsn' => $bad]))->tryLock();
            echo "no exception\n";
        } catch (LockConnectionException $e) {
            echo get_class($e), str_contains($e->getMessage(), 'wrong-pw') ? ' LEAKS PASSWORD' : '',
                str_contains($e->getMessage(), "127.0.0.1:$p") ? ' names address' : ' no address', "\n";
        }
    }
    rl_cmd("redis://:right-pw@127.0.0.1:$p", 'ACL', 'SETUSER', 'locker', 'on', '>user-pw', '~*', '+@all');
    $l = new Lock($key, 0, 5, ['dsn' => "redis://locker:user-pw@127.0.0.1:$p/3"]);
    $t = $l->addLock();
    var_dump(is_string($t), $l->isLocked());
    var_dump(rl_cmd("redis://:right-pw@127.0.0.1:$p", 'EXISTS', $key));   // not in db 0
    $u = new Lock($key, 0, 5, ['dsn' => "unix://$sock?db=3&pass=right-pw"]);
    var_dump($u->isLocked(), $u->tryLock(), $u->releaseLock($t), $l->isLocked());
    // A new connection is checked with PING; an ACL that denies PING still locks.
    rl_cmd("redis://:right-pw@127.0.0.1:$p", 'ACL', 'SETUSER', 'noping', 'on', '>np-pw', '~*', '+@all', '-ping');
    $n = new Lock(rl_key('noping'), 0, 5, ['dsn' => "redis://noping:np-pw@127.0.0.1:$p"]);
    var_dump($n->releaseLock($n->addLock()));
} finally {
    rl_stop_redis($srv);
    @unlink($sock);
}
?>
--EXPECT--
LockConnectionException names address
LockConnectionException names address
bool(true)
bool(true)
int(0)
bool(true)
bool(false)
bool(true)
bool(false)
bool(true)
