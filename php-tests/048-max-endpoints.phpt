--TEST--
redis_lock.max_endpoints bounds the idle connections a process keeps, which are also where its waits listen (RESP3): beyond it, the least recently used endpoint's are closed
--FILE--
<?php
require __DIR__ . '/_helper.inc';
// A server of its own: the counts below are of every client with a lock command last,
// and on the suite's shared server another test's processes may still hold some (seen:
// 047's workers, left running when run-tests timed it out).
$srv = rl_start_redis();
$dsn = $srv['dsn'];
try {
    $key = rl_key('endpoints');
    /**
     * This process's idle lock connections (told apart from rl_cmd's by their last
     * command: the release script, or the EXISTS of the queue that goes with the
     * server's own compare-and-delete of a lock taken with nobody queued,
     * docs/performance.md), how many of them listen for wake-ups, and subscribers of
     * their own.
     */
    $idle = function () use ($dsn): string {
        $list = rl_cmd($dsn, 'CLIENT', 'LIST');
        return sprintf('%d connections (%d listening), %d subscribers of their own', preg_match_all('/ cmd=(evalsha|exists) /', $list),
            preg_match_all('/ sub=1 .* cmd=(evalsha|exists) /', $list), preg_match_all('/ cmd=subscribe /', $list));
    };
    $accepted = fn() => (int) preg_replace('/.*total_connections_received:(\d+).*/s', '$1', rl_cmd($dsn, 'INFO', 'stats'));
    // Each read_timeout is a distinct endpoint (connection settings), as per-tenant options would make.
    $cycle = function (int $i) use ($dsn, $key) {
        $l = new Lock("$key:$i", 0, 10, ['dsn' => $dsn, 'read_timeout' => 1 + $i / 100]);
        $l->addLock();
        $l->releaseLock();
    };
    // A wait that queues (and so subscribes) on endpoint $i, behind a holder on another.
    $wait = function (int $i) use ($dsn, $key) {
        $h = new Lock("$key:busy", 0, 10, ['dsn' => $dsn]);
        $h->addLock();
        (new Lock("$key:busy", 0.05, 10, ['dsn' => $dsn, 'read_timeout' => 1 + $i / 100]))->addLock();
        $h->releaseLock();
    };

    ini_set('redis_lock.max_endpoints', '3');
    for ($i = 0; $i < 10; $i++) { $cycle($i); }
    echo "10 endpoints, cap 3: ", $idle(), "\n";
    $n = $accepted(); $cycle(9);
    // (Each INFO is a connection of its own: the second one's is subtracted.)
    echo "the most recent one reused: ", $accepted() - $n - 1, " new connections\n";
    $n = $accepted(); $cycle(0);
    echo "the oldest one reconnects: ", $accepted() - $n - 1, " new connections\n";
    // The holder's endpoint is one of the 3 kept: 2 waits' connections still listen.
    for ($i = 0; $i < 6; $i++) { $wait($i); }
    echo "6 waits, cap 3: ", $idle(), "\n";

    ini_set('redis_lock.max_endpoints', '16');
    for ($i = 20; $i < 30; $i++) { $cycle($i); }
    echo "10 more endpoints, cap 16: ", $idle(), "\n";

    foreach ([0, -1] as $bad) {
        try { new Lock($key, 0, 1, ['dsn' => $dsn, 'max_endpoints' => $bad]); echo "no error\n"; }
        catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
    }
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECT--
10 endpoints, cap 3: 3 connections (0 listening), 0 subscribers of their own
the most recent one reused: 0 new connections
the oldest one reconnects: 1 new connections
6 waits, cap 3: 3 connections (2 listening), 0 subscribers of their own
10 more endpoints, cap 16: 13 connections (2 listening), 0 subscribers of their own
ValueError: option "max_endpoints" must be between 1 and 1000, 0 given
ValueError: option "max_endpoints" must be between 1 and 1000, -1 given
