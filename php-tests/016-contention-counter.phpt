--TEST--
Contention: 12 processes do non-atomic increments under the lock, with no lost update, in the default and the fair mode
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
foreach ([false, true] as $fair) {
    $key = rl_key('contention');
    $counter = "$key:counter";
    rl_cmd($dsn, 'SET', $counter, '0');
    $codes = rl_fork(12, function () use ($dsn, $key, $counter, $fair) {
        $l = new Lock($key, 20, 5, ['dsn' => $dsn, 'fair' => $fair] + RL_PATIENT);
        for ($i = 0; $i < 25; $i++) {
            if ($l->addLock() === false) { return 2; }
            $v = (int) rl_cmd($dsn, 'GET', $counter);
            usleep($i % 2 ? 0 : 300);      // short and longer holds: both release paths
            rl_cmd($dsn, 'SET', $counter, (string) ($v + 1));
            if (!$l->releaseLock()) { return 3; }
        }
        return 0;
    });
    printf("%s: exits %s, counter %s, lock left %d, queue left %d\n", $fair ? 'fair' : 'default',
        json_encode(array_unique($codes)), rl_cmd($dsn, 'GET', $counter),
        rl_cmd($dsn, 'EXISTS', $key), rl_cmd($dsn, 'EXISTS', "{{$key}}:queue"));
}
?>
--EXPECT--
default: exits [0], counter 300, lock left 0, queue left 0
fair: exits [0], counter 300, lock left 0, queue left 0
