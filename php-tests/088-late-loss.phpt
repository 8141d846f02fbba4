--TEST--
synchronized() learns late of a hold lost under it while its lease surely lasted (forced by someone, deleted, taken by another): its release, sent unawaited, finds it gone when its reply is read at the connection's next use, which counts it in redis_lock_stats()['lost'] and raises an E_WARNING naming it; for Lock, Semaphore and MultiLock; a hold that lasted counts nothing
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$o = ['dsn' => $dsn];
$warnings = [];
set_error_handler(function (int $no, string $msg) use (&$warnings) {
    $warnings[] = ($no === E_WARNING ? 'E_WARNING: ' : "error $no: ") . $msg;
    return true;
});
$lost = fn() => redis_lock_stats()['lost'];
// The next use of the connection reads the reply the release left owed.
$probe = new Lock(rl_key('late:probe'), 0, 10, $o);
$report = function (string $what, $result) use (&$warnings, $lost, $probe) {
    $before = $lost();
    $probe->isLocked();
    echo "$what: returned ", var_export($result, true), ", lost +", $lost() - $before, ", warnings: ",
        $warnings ? implode(' | ', $warnings) : 'none', "\n";
    $warnings = [];
};

$key = rl_key('late:lock');
$l = new Lock($key, 0, 30, $o);
$report('a Lock that lasted', $l->synchronized(fn() => 'done'));

// An operator forces the lock away while the work runs: the holder's lease would
// still last 30 s by its own count, so its release is sent without waiting.
$admin = new Lock($key, 0, 30, $o);
$report('a Lock forced away', $l->synchronized(fn() => $admin->forceReleaseLock() ? 'done' : 'not forced'));

// Deleted, and taken by another client, under the work.
$report('a Lock taken by another', $l->synchronized(function () use ($dsn, $key) {
    rl_cmd($dsn, 'DEL', $key);
    rl_cmd($dsn, 'SET', $key, 'someone-else', 'PX', '30000');
    return 'done';
}));
echo "  the other's hold is left alone: ", var_export(rl_cmd($dsn, 'GET', $key), true), "\n";
rl_cmd($dsn, 'DEL', $key);

$skey = rl_key('late:sem');
$s = new Semaphore($skey, 2, 0, 30, $o);
$report('a Semaphore that lasted', $s->synchronized(fn() => 'done'));
$report('a Semaphore deleted', $s->synchronized(function () use ($dsn, $skey) {
    foreach (rl_cmd($dsn, 'KEYS', "*$skey*") as $k) { rl_cmd($dsn, 'DEL', $k); }
    return 'done';
}));

$a = rl_key('late:m1');
$b = rl_key('late:m2');
$m = new MultiLock([$a, $b], 0, 30, $o);
$report('a MultiLock that lasted', $m->synchronized(fn() => 'done'));
$report('a MultiLock with one key deleted', $m->synchronized(function () use ($dsn, $b) {
    rl_cmd($dsn, 'DEL', $b);
    return 'done';
}));
echo "keys left: ", json_encode(array_merge(rl_cmd($dsn, 'KEYS', "*$key*"), rl_cmd($dsn, 'KEYS', "*$a*"), rl_cmd($dsn, 'KEYS', "*$b*"))), "\n";
?>
--EXPECTF--
a Lock that lasted: returned 'done', lost +0, warnings: none
a Lock forced away: returned 'done', lost +1, warnings: E_WARNING: Lock::isLocked(): redis-lock: the lock "rl-test:late:lock:%s" was found lost by the release that ended synchronized(), read after it returned (someone forced it, the server evicted or forgot it, or its clock jumped): part of that work ran unprotected
a Lock taken by another: returned 'done', lost +1, warnings: E_WARNING: Lock::isLocked(): redis-lock: the lock "rl-test:late:lock:%s" was found lost by the release that ended synchronized(), read after it returned (someone forced it, the server evicted or forgot it, or its clock jumped): part of that work ran unprotected
  the other's hold is left alone: 'someone-else'
a Semaphore that lasted: returned 'done', lost +0, warnings: none
a Semaphore deleted: returned 'done', lost +1, warnings: E_WARNING: Lock::isLocked(): redis-lock: the semaphore "rl-test:late:sem:%s" was found lost by the release that ended synchronized(), read after it returned (someone forced it, the server evicted or forgot it, or its clock jumped): part of that work ran unprotected
a MultiLock that lasted: returned 'done', lost +0, warnings: none
a MultiLock with one key deleted: returned 'done', lost +1, warnings: E_WARNING: Lock::isLocked(): redis-lock: the MultiLock "%s" was found lost by the release that ended synchronized(), read after it returned (someone forced it, the server evicted or forgot it, or its clock jumped): part of that work ran unprotected
keys left: []
