--TEST--
MultiLock on Redis Cluster: keys of one slot (a common hash tag) are taken all or none on the slot's master, a waiter is woken by the release through the slot's sharded channel, and keys in several slots are taken slot group by slot group in one order: a busy group gives back the groups taken before the wait, and opposite orders never deadlock
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

    // Keys in three slots: taken slot group by slot group, in order (slot, then key).
    $slot = fn($k) => (int) rl_cmd($seeds[0], 'CLUSTER', 'KEYSLOT', $k);
    $ks = [rl_key('x'), rl_key('y'), rl_key('z')];
    usort($ks, fn($p, $q) => [$slot($p), $p] <=> [$slot($q), $q]);
    $onMaster = fn($k) => rl_cmd(rl_cluster_master_of($seeds[0], $k), 'GET', $k);
    $m = new MultiLock(array_reverse($ks), 0, 5, $opts);
    echo "order: slot, then key: ", json_encode($m->getKeys() === $ks), "\n";
    $t = $m->addLock();
    echo "three slots, taken: ", json_encode(array_map(fn($k) => $onMaster($k) === $t, $ks)), ", owned ", json_encode($m->isOwned()),
        ", fencing tokens ", count(array_filter($m->getFencingToken() ?? [], 'rl_is_fence')), "\n";
    var_dump($m->releaseLock(), array_map($onMaster, $ks));

    // The last group busy: the groups before it are given back while it waits.
    $last = new Lock($ks[2], 0, 5, $opts);
    $tl = $last->addLock();
    $pid = pcntl_fork();
    if ($pid === 0) {
        usleep(400000);
        $seen = json_encode([$onMaster($ks[0]), $onMaster($ks[1])]);
        $ok = (new Lock($ks[2], 0, 5, ['cluster' => $seeds]))->releaseLock($tl);
        file_put_contents(sys_get_temp_dir() . '/084-seen-' . getmypid(), $seen);
        exit($ok ? 0 : 1);
    }
    $w = new MultiLock($ks, 3, 5, $opts);
    $s = microtime(true);
    $t = $w->addLock();
    $took = microtime(true) - $s;
    pcntl_waitpid($pid, $st);
    $seenFile = sys_get_temp_dir() . "/084-seen-$pid";
    echo "while it waited, the other groups' keys: ", file_get_contents($seenFile), "; taken after the release: ",
        json_encode(is_string($t) && $w->isOwned()), ", in ", $took >= 0.35 && $took < 1.5 ? 'well under its wait' : "$took s", "\n";
    unlink($seenFile);
    $w->releaseLock();

    // Opposite orders across slots, 2 processes x 100: no deadlock, no lost update.
    [$x, $y] = [$ks[0], $ks[2]];
    $codes = rl_fork(2, function ($i) use ($seeds, $x, $y, $onMaster) {
        $keys = $i ? [$y, $x] : [$x, $y];
        for ($r = 0; $r < 100; $r++) {
            $l = new MultiLock($keys, 10, 5, ['cluster' => $seeds] + RL_PATIENT);
            if ($l->addLock() === false) { return 2; }
            foreach ($keys as $k) {
                $master = rl_cluster_master_of($seeds[0], "{{$k}}:n");
                rl_cmd($master, 'SET', "{{$k}}:n", (string) ((int) rl_cmd($master, 'GET', "{{$k}}:n") + 1));
            }
            if (!$l->releaseLock()) { return 3; }
        }
        return 0;
    });
    echo "opposite orders: exits ", implode(',', $codes), ", counters ",
        implode(',', array_map(fn($k) => rl_cmd(rl_cluster_master_of($seeds[0], "{{$k}}:n"), 'GET', "{{$k}}:n"), [$x, $y])), "\n";
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
order: slot, then key: true
three slots, taken: [true,true,true], owned true, fencing tokens 3
bool(true)
array(3) {
  [0]=>
  NULL
  [1]=>
  NULL
  [2]=>
  NULL
}
while it waited, the other groups' keys: [null,null]; taken after the release: true, in well under its wait
opposite orders: exits 0,0, counters 200,200
