--TEST--
redis-lock CLI on Sentinel (a master, a replica, 3 sentinels): list and inspect find the master through the sentinels (the replica's copies not listed), release --force, both option forms; an unknown service and unreachable sentinels are reported with exit 1
--FILE--
<?php
require __DIR__ . '/_cli.inc';
$set = rl_start_sentinel_set();
try {
    $sentinels = array_column($set['sentinels'], 'dsn');
    $opts = ['sentinels' => $sentinels, 'service' => 'mymaster', 'owner_info' => true];
    $locks = [];
    foreach (['deploy', 'backup', 'report:1', 'report:2'] as $k) { ($locks[$k] = new Lock($k, 0, 60, $opts))->tryLock(); }
    $reader = new Lock('catalog', 0, 60, $opts);
    $reader->tryReadLock();
    $sem = new Semaphore('renderers', 4, 0, 60, $opts);
    $sem->tryAcquire(3);
    $deadline = microtime(true) + 10;
    while (rl_cmd($set['replica']['dsn'], 'DBSIZE') < rl_cmd($set['master']['dsn'], 'DBSIZE') && microtime(true) < $deadline) { usleep(20000); }
    echo "the replica holds copies: ", var_export(rl_cmd($set['replica']['dsn'], 'DBSIZE') >= 6, true), "\n";

    $sargs = ['--sentinels=' . implode(',', $sentinels), '--service=mymaster'];
    echo "== list\n";
    $r = rl_cli(array_merge($sargs, ['list']));
    echo "exit {$r['rc']}, stderr ", var_export($r['err'], true), "\n";
    foreach (array_slice(explode("\n", rtrim($r['out'], "\n")), 1, -1) as $line) { echo '  ', implode(' | ', array_slice(preg_split('/ {2,}/', $line), 0, 6)), "\n"; }
    echo "last: ", rl_cli_last($r), "\n";
    $doc = rl_cli_json(rl_cli(['--sentinels', $sentinels[2], '--service', 'mymaster', '--json', 'list', 'report:*']));
    echo "json, one sentinel, report:*: ", implode(',', array_column($doc['items'], 'key')), "\n";

    echo "== inspect\n";
    $j = rl_cli_json(rl_cli(array_merge($sargs, ['--json', 'inspect', 'renderers'])));
    echo "renderers: {$j['kind']} {$j['state']}, {$j['used']}/{$j['permits']} used, available {$j['available']}\n";
    $j = rl_cli_json(rl_cli(array_merge($sargs, ['--json', 'inspect', 'catalog'])));
    echo "catalog: {$j['state']}, readers {$j['readers']}, owner pid is this process: ", var_export(($j['owners'][0]['pid'] ?? null) === getmypid(), true), "\n";

    echo "== release --force\n";
    $r = rl_cli(array_merge($sargs, ['release', '--force', 'deploy']));
    echo "exit {$r['rc']}: ", $r['out'];
    echo "deploy held: ", var_export($locks['deploy']->isOwned(), true), ", backup held: ", var_export($locks['backup']->isOwned(), true), "\n";

    echo "== errors\n";
    $r = rl_cli(['--sentinels=' . implode(',', $sentinels), '--service=nosuchmaster', 'list']);
    echo "an unknown service: exit {$r['rc']}, stdout ", var_export($r['out'], true), ", names it: ", var_export(str_contains($r['err'], 'nosuchmaster'), true),
        ", one line: ", var_export(substr_count(rtrim($r['err']), "\n") === 0, true), ", clean: ", var_export(rl_cli_clean($r), true), "\n";
    $closed = rl_free_port();
    $r = rl_cli(["--sentinels=redis://127.0.0.1:$closed", '--service=mymaster', 'inspect', 'deploy']);
    echo "unreachable sentinels: exit {$r['rc']}, stdout ", var_export($r['out'], true), ", names the address: ", var_export(str_contains($r['err'], "127.0.0.1:$closed"), true),
        ", clean: ", var_export(rl_cli_clean($r), true), "\n";
} finally {
    rl_stop_sentinel_set($set);
}
?>
--EXPECTF--
the replica holds copies: true
== list
exit 0, stderr ''
  backup | lock | write | %fs | 1 | 0
  catalog | lock | read | %fs | 1 | 0
  deploy | lock | write | %fs | 1 | 0
  renderers | semaphore | held | %fs | 3/4 | 0
  report:1 | lock | write | %fs | 1 | 0
  report:2 | lock | write | %fs | 1 | 0
last: 6 keys (5 locks, 1 semaphore)
json, one sentinel, report:*: report:1,report:2
== inspect
renderers: semaphore held, 3/4 used, available 1
catalog: read, readers 1, owner pid is this process: true
== release --force
exit 0: released deploy: its holder was removed; the first waiter, if any, has it now
deploy held: false, backup held: true
== errors
an unknown service: exit 1, stdout '', names it: true, one line: true, clean: true
unreachable sentinels: exit 1, stdout '', names the address: true, clean: true
