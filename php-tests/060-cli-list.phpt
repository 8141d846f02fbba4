--TEST--
redis-lock CLI, list: a table and JSON of 1,000 locks and semaphores (write, read, no expiry, waiters, an odd key) under a prefix, sorted, with owners and no token; --limit bounds it and says so; a PATTERN; php.ini's directives; the server unchanged
--CONFLICTS--
cpu # keeps a core busy for 2.5 s (the tool over many keys)
--EXTENSIONS--
pcntl
posix
--FILE--
<?php
require __DIR__ . '/_cli.inc';
$srv = rl_start_redis();                                 // a server of its own, for exact counts
$dsn = $srv['dsn'];
$opts = ['dsn' => $dsn, 'prefix' => 'app:', 'auto_release' => false, 'owner_info' => true];
$pids = [];
try {
    // 1,000 under the prefix: 959 write locks, an odd key, 5 with no expiry, 20 read
    // locks (10 with two readers), 15 semaphores of 3 permits.
    $tokens = [];
    $expected = [];
    $keep = [];
    for ($i = 0; $i < 959; $i++) {
        $k = sprintf('lock:%04d', $i);
        $l = new Lock($k, 0, 600, $opts);
        $tokens[] = $l->tryLock();
        // Asked here, a number is issued; from then on every write acquisition of this
        // process issues its own as it takes the lock (inf:00 has one too), each counter's
        // first: the server's clock in µs then.
        if ($i < 10) { $fences[$k] = $l->getFencingToken(); }
        $expected[$k] = 'lock';
    }
    $odd = "odd key\n\u{2713}";
    $tokens[] = (new Lock($odd, 0, 600, $opts))->tryLock();
    $expected[$odd] = 'lock';
    for ($i = 0; $i < 5; $i++) {
        $tokens[] = ($l = new Lock("inf:0$i", 0, INF, ['owner_info' => false] + $opts))->tryLock();   // no owner recorded
        $fences["inf:0$i"] = $l->getFencingToken();
        $expected["inf:0$i"] = 'lock';
    }
    for ($i = 0; $i < 20; $i++) {
        $k = sprintf('read:%02d', $i);
        for ($r = 0; $r < ($i < 10 ? 2 : 1); $r++) { $tokens[] = ($keep[] = new Lock($k, 0, 600, $opts))->tryReadLock(); }
        $expected[$k] = 'lock';
    }
    for ($i = 0; $i < 15; $i++) {
        $k = sprintf('sem:%02d', $i);
        $tokens[] = (new Semaphore($k, 3, 0, 600, $opts))->tryAcquire(2);
        if ($i < 5) { $tokens[] = (new Semaphore($k, 3, 0, 300, $opts))->tryAcquire(1); }   // full
        $expected[$k] = 'semaphore';
    }
    $held = count(array_filter($tokens, 'is_string'));
    // Waiters: two on lock:0001, one on the full sem:00 (forked, killed at the end).
    foreach ([['lock', 'lock:0001'], ['lock', 'lock:0001'], ['semaphore', 'sem:00']] as [$kind, $k]) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $kind === 'lock' ? (new Lock($k, 120, 600, $opts))->addLock() : (new Semaphore($k, 3, 120, 600, $opts))->acquire();
            exit(0);
        }
        $pids[] = $pid;
    }
    $deadline = microtime(true) + 10;
    while ((rl_cmd($dsn, 'LLEN', '{app:lock:0001}:queue') < 2 || rl_cmd($dsn, 'LLEN', '{app:sem:00}:queue') < 1) && microtime(true) < $deadline) { usleep(10000); }
    // Outside the prefix: plain keys and another prefix's lock, which list must not show.
    for ($i = 0; $i < 50; $i++) { rl_cmd($dsn, 'SET', "other:$i", 'x'); }
    (new Lock('lock:0000', 0, 600, ['prefix' => 'zzz:'] + $opts))->tryLock();
    ksort($expected, SORT_STRING);
    $keys = array_map('strval', array_keys($expected));
    $before = rl_snapshot($dsn);
    echo "set up: $held holds taken, ", count($keys), " keys under the prefix\n";

    echo "== the table\n";
    $r = rl_cli(['--dsn=' . $dsn, '--prefix', 'app:', 'list']);
    echo "exit {$r['rc']}, stderr ", var_export($r['err'], true), ", clean ", var_export(rl_cli_clean($r), true), "\n";
    $lines = explode("\n", rtrim($r['out'], "\n"));
    echo "lines: ", count($lines), "\n";
    echo "header: ", preg_replace('/ +/', ' ', $lines[0]), "\n";
    echo "last: ", end($lines), "\n";
    $rows = [];
    foreach (array_slice($lines, 1, -1) as $line) {
        if (str_starts_with($line, 'odd key')) { $rows[$odd] = $line; continue; }
        $rows[explode(' ', $line, 2)[0]] = $line;
    }
    echo "the keys, sorted as expected: ", var_export(array_map('strval', array_keys($rows)) === $keys, true), "\n";
    $me = gethostname() . ':' . getmypid() . ' cli ' . $_SERVER['SCRIPT_FILENAME'];
    $cells = fn(string $k) => preg_split('/ {2,}/', $rows[$k]);
    $c = $cells('lock:0042');
    echo "lock:0042: ", implode(' | ', [$c[0], $c[1], $c[2], $c[4], $c[5]]), ", ttl ", var_export((bool) preg_match('/^5\d\d\.\d\ds$/', $c[3]), true), ", owner is this process: ", var_export($c[6] === $me, true), "\n";
    $c = $cells('lock:0001');
    echo "lock:0001: ", implode(' | ', [$c[2], $c[4], $c[5]]), ", owner is this process: ", var_export($c[6] === $me, true), "\n";
    $c = $cells('inf:03');
    echo "inf:03: ", implode(' | ', array_slice($c, 1, 6)), "\n";
    $c = $cells('read:04');
    echo "read:04: ", implode(' | ', array_slice($c, 1, 5)), ", owners: ", var_export($c[6] === "$me (+1 more)", true), "\n";
    $c = $cells('read:15');
    echo "read:15: ", implode(' | ', array_slice($c, 1, 5)), ", owner: ", var_export($c[6] === $me, true), "\n";
    $c = $cells('sem:00');
    echo "sem:00: ", implode(' | ', array_slice($c, 1, 5)), ", owners: ", var_export($c[6] === "$me (+1 more)", true), "\n";
    $c = $cells('sem:09');
    echo "sem:09: ", implode(' | ', array_slice($c, 1, 5)), "\n";
    echo "the odd key, escaped: ", var_export((bool) preg_match("/^odd key\\\\x0a\u{2713} {2,}lock {2,}write /", $rows[$odd]), true), "\n";
    $leaked = array_filter($tokens, fn($t) => is_string($t) && str_contains($r['out'] . $r['err'], $t));
    echo "tokens in the output: ", count($leaked), "\n";

    echo "== JSON\n";
    $r = rl_cli(['--dsn', $dsn, '--prefix=app:', '--json', 'list']);
    $doc = rl_cli_json($r);
    echo "exit {$r['rc']}, stderr ", var_export($r['err'], true), "\n";
    echo "top: ", json_encode(array_diff_key($doc, ['items' => 1])), "\n";
    $items = array_column($doc['items'], null, 'key');
    echo "the keys, sorted as expected: ", var_export(array_map('strval', array_column($doc['items'], 'key')) === $keys, true),
        ", kinds: ", var_export(array_column($doc['items'], 'kind', 'key') == $expected, true), "\n";
    $owner = ['host' => gethostname(), 'pid' => getmypid(), 'sapi' => 'cli', 'script' => $_SERVER['SCRIPT_FILENAME']];
    $mine = fn(?array $o) => $o !== null && array_diff_key($o, ['since' => 1]) === $owner && abs($o['since'] - time()) < 60;
    $it = $items['lock:0003'];
    // A fence shows as "<issued>" once it is found to be the number issued for the key.
    $issued = fn(array $it) => rl_is_fence($it['fence']) && $it['fence'] === $fences[$it['key']] ? array_replace($it, ['fence' => '<issued>']) : $it;
    echo "lock:0003: ", json_encode($issued(array_diff_key($it, ['ttl' => 1, 'owners' => 1]))), ", fence as issued: ", var_export($it['fence'] === $fences['lock:0003'], true),
        ", ttl in (590, 600]: ", var_export($it['ttl'] > 590 && $it['ttl'] <= 600, true), ", owner: ", var_export(count($it['owners']) === 1 && $mine($it['owners'][0]), true), "\n";
    $it = $items['lock:0001'];
    echo "lock:0001: waiters ", $it['waiters'], "\n";
    $it = $items['inf:00'];
    echo "inf:00 (no owner recorded): ", json_encode($issued($it)), ", after lock:0009's: ", var_export($it['fence'] > $fences['lock:0009'], true), "\n";
    $it = $items['read:07'];
    echo "read:07: ", json_encode(array_diff_key($it, ['ttl' => 1, 'owners' => 1])), ", owners: ", var_export(count($it['owners']) === 2 && $mine($it['owners'][0]) && $mine($it['owners'][1]), true), "\n";
    $it = $items['sem:00'];
    $weights = array_column($it['holds'], 'weight');
    sort($weights);
    echo "sem:00: ", json_encode(array_diff_key($it, ['ttl' => 1, 'owners' => 1, 'holds' => 1])), ", weights ", json_encode($weights),
        ", ttl is the longest hold's: ", var_export($it['ttl'] > 590 && $it['expires'] === true, true),
        ", holds: ", var_export(count(array_filter($it['holds'], fn($h) => $h['expires'] === true && $h['ttl'] > 290 && $mine($h['owner']))) === 2, true), "\n";
    $it = $items[$odd];
    echo "the odd key, as is: ", var_export($it['key'] === $odd && !isset($it['key_hex']), true), "\n";
    $leaked = array_filter($tokens, fn($t) => is_string($t) && str_contains($r['out'] . $r['err'], $t));
    echo "tokens in the output: ", count($leaked), "\n";

    echo "== --limit\n";
    $r = rl_cli(['--dsn', $dsn, '--prefix=app:', 'list', '--limit=100']);
    $lines = explode("\n", rtrim($r['out'], "\n"));
    // The first 100 the SCAN came upon, sorted: not the first 100 in order (that would take a whole SCAN).
    $listed = array_map(fn($l) => str_starts_with($l, 'odd key') ? $odd : explode(' ', $l, 2)[0], array_slice($lines, 1, -1));
    $sorted = $listed;
    sort($sorted, SORT_STRING);
    echo "exit {$r['rc']}, rows ", count($listed), ", distinct keys of the 1000, sorted: ",
        var_export(count(array_unique($listed)) === 100 && !array_diff($listed, $keys) && $sorted === $listed, true), "\n";
    echo "last: ", end($lines), "\n";
    foreach ([999, 1000] as $limit) {
        $doc = rl_cli_json(rl_cli(['--dsn', $dsn, '--prefix=app:', '--json', "--limit=$limit", 'list']));
        echo "--limit=$limit --json: count {$doc['count']}, truncated ", var_export($doc['truncated'], true), ", items ", count($doc['items']), "\n";
    }

    echo "== PATTERN\n";
    $r = rl_cli(['--dsn', $dsn, '--prefix=app:', 'list', 'sem:*']);
    echo "sem:* -> ", rl_cli_last($r), "\n";
    $doc = rl_cli_json(rl_cli(['--dsn', $dsn, '--prefix=app:', '--json', 'list', 'read:0?']));
    echo "read:0? -> ", implode(',', array_column($doc['items'], 'key')), "\n";
    $r = rl_cli(['--dsn', $dsn, '--prefix=app:', 'list', 'nothing:*']);
    echo "nothing:* -> exit {$r['rc']}: ", $r['out'];

    echo "== php.ini's directives\n";
    $r = rl_cli(['list', 'inf:*'], ['-d', "redis_lock.dsn=$dsn", '-d', 'redis_lock.prefix=app:']);
    echo "exit {$r['rc']}: ", implode(',', array_map(fn($l) => explode(' ', $l, 2)[0], array_slice(explode("\n", rtrim($r['out'])), 1, -1))), "\n";
    $r = rl_cli(['list', 'lock:*'], ['-d', "redis_lock.dsn=$dsn", '-d', 'redis_lock.prefix=zzz:']);
    echo "another prefix: ", rl_cli_last($r), "\n";

    echo "== nothing changed\n";
    echo "the server's keys, values and expiries as before: ", var_export(rl_snapshot($dsn) === $before, true), "\n";
} finally {
    foreach ($pids as $pid) { posix_kill($pid, SIGKILL); pcntl_waitpid($pid, $st); }
    rl_stop_redis($srv);
}
?>
--EXPECTF--
set up: 1015 holds taken, 1000 keys under the prefix
== the table
exit 0, stderr '', clean true
lines: 1002
header: KEY KIND STATE TTL HOLDERS WAITERS OWNER
last: 1000 keys (985 locks, 15 semaphores)
the keys, sorted as expected: true
lock:0042: lock:0042 | lock | write | 1 | 0, ttl true, owner is this process: true
lock:0001: write | 1 | 2, owner is this process: true
inf:03: lock | write | inf | 1 | 0 | -
read:04: lock | read | 5%s | 2 | 0, owners: true
read:15: lock | read | 5%s | 1 | 0, owner: true
sem:00: semaphore | held | 5%s | 3/3 | 1, owners: true
sem:09: semaphore | held | 5%s | 2/3 | 0
the odd key, escaped: true
tokens in the output: 0
== JSON
exit 0, stderr ''
top: {"pattern":"*","count":1000,"locks":985,"semaphores":15,"limit":10000,"truncated":false}
the keys, sorted as expected: true, kinds: true
lock:0003: {"key":"lock:0003","kind":"lock","state":"write","expires":true,"holders":1,"waiters":0,"readers":0,"fence":"<issued>"}, fence as issued: true, ttl in (590, 600]: true, owner: true
lock:0001: waiters 2
inf:00 (no owner recorded): {"key":"inf:00","kind":"lock","state":"write","ttl":null,"expires":false,"holders":1,"waiters":0,"owners":[null],"readers":0,"fence":"<issued>"}, after lock:0009's: true
read:07: {"key":"read:07","kind":"lock","state":"read","expires":true,"holders":2,"waiters":0,"readers":2,"fence":null}, owners: true
sem:00: {"key":"sem:00","kind":"semaphore","state":"held","expires":true,"holders":2,"waiters":1,"permits":3,"available":0,"used":3}, weights [1,2], ttl is the longest hold's: true, holds: true
the odd key, as is: true
tokens in the output: 0
== --limit
exit 0, rows 100, distinct keys of the 1000, sorted: true
last: 100 keys (100 locks, 0 semaphores); stopped at --limit=100: there are more
--limit=999 --json: count 999, truncated true, items 999
--limit=1000 --json: count 1000, truncated false, items 1000
== PATTERN
sem:* -> 15 keys (0 locks, 15 semaphores)
read:0? -> read:00,read:01,read:02,read:03,read:04,read:05,read:06,read:07,read:08,read:09
nothing:* -> exit 0: 0 keys (0 locks, 0 semaphores)
== php.ini's directives
exit 0: inf:00,inf:01,inf:02,inf:03,inf:04
another prefix: 1 key (1 lock, 0 semaphores)
== nothing changed
the server's keys, values and expiries as before: true
