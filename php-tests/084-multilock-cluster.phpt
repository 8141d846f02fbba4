--TEST--
MultiLock on Redis Cluster: keys of one slot (a common hash tag) are taken all or none on the slot's master, a waiter is woken by the release through the slot's sharded channel, and keys in several slots are refused with a ValueError that says what to do
--SKIPIF--
<?php if (!function_exists('pcntl_fork')) die('skip pcntl needed'); ?>
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$c = rl_start_cluster();
try {
    $seeds = $c['seeds'];
    $opts = ['cluster' => $seeds];
    $tag = '{' . rl_key('order') . '}';
    [$a, $b] = ["$tag:stock", "$tag:payment"];
    $master = rl_cluster_master_of($seeds[0], $a);

    $m = new MultiLock([$a, $b], 0, 5, $opts);
    $t = $m->addLock();
    echo "taken on the slot's master: ", json_encode([rl_cmd($master, 'GET', $a) === $t, rl_cmd($master, 'GET', $b) === $t]), "\n";
    $l = new Lock($b, 0, 5, $opts);
    echo "a Lock on one of its keys: ", var_export($l->tryLock(), true), "\n";
    var_dump($m->releaseLock());

    // Woken by a Lock's release on the slot's master.
    $tb = $l->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) { usleep(300000); exit((new Lock($b, 0, 5, ['cluster' => $seeds]))->releaseLock($tb) ? 0 : 1); }
    $w = new MultiLock([$b, $a], 3, 5, $opts);
    $s = microtime(true);
    $t = $w->addLock();
    $took = microtime(true) - $s;
    pcntl_waitpid($pid, $st);
    echo "woken by the release: ", json_encode(is_string($t)), ", after ", $took >= 0.25 && $took < 0.8 ? '0.3 s' : "$took s", "\n";
    var_dump($w->releaseLock(), rl_cmd($master, 'EXISTS', $a) + rl_cmd($master, 'EXISTS', $b));

    try {
        new MultiLock([rl_key('x'), rl_key('y'), rl_key('z')], 0, 5, $opts);
        echo "no error\n";
    } catch (ValueError $e) {
        echo "several slots: ValueError, ", str_contains($e->getMessage(), 'hash tag') ? 'says to use a hash tag' : $e->getMessage(), "\n";
    }
} finally {
    rl_stop_cluster($c);
}
?>
--EXPECT--
taken on the slot's master: [true,true]
a Lock on one of its keys: false
bool(true)
woken by the release: true, after 0.3 s
bool(true)
int(0)
several slots: ValueError, says to use a hash tag
