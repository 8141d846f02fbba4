--TEST--
redis-lock CLI, bad input: an unknown command or option, a missing KEY, release without --force, bad option values, an unreachable server (password masked), no extension; each a clear message on stderr, nothing on stdout, a non-zero exit (2 for the command line, 1 for Redis), no PHP error; the server unchanged. --help.
--FILE--
<?php
require __DIR__ . '/_cli.inc';
$srv = rl_start_redis();
$dsn = $srv['dsn'];
$closed = rl_free_port();                                // nobody listens there
try {
    $held = new Lock('jobs:nightly', 0, 60, ['dsn' => $dsn]);
    $held->tryLock();
    $sem = new Semaphore('pool', 3, 0, 60, ['dsn' => $dsn]);
    $sem->tryAcquire(2);
    $before = rl_snapshot($dsn);
    echo "set up: ", count($before), " keys\n";
    $d = "--dsn=$dsn";
    $cases = [
        'unknown command' => [$d, 'frobnicate'],
        'no command' => [$d],
        'inspect, missing KEY' => [$d, 'inspect'],
        'release, missing KEY' => [$d, 'release', '--force'],
        'release without --force' => [$d, 'release', 'jobs:nightly'],
        'inspect, two keys' => [$d, 'inspect', 'a', 'b'],
        'list, two patterns' => [$d, 'list', 'a*', 'b*'],
        'unknown option' => [$d, '--frobnicate', 'list'],
        'unknown short option' => [$d, '-x', 'list'],
        '--force with list' => [$d, '--force', 'list'],
        '--dsn without a value' => ['list', '--dsn'],
        '--prefix followed by an option' => [$d, '--prefix', '--json', 'list'],
        '--json with a value' => [$d, '--json=yes', 'list'],
        '--limit=0' => [$d, '--limit=0', 'list'],
        '--limit=ten' => [$d, '--limit', 'ten', 'list'],
        '--read-timeout=soon' => [$d, '--read-timeout=soon', 'list'],
        'a malformed dsn' => ['--dsn=http://127.0.0.1:1', 'list'],
        'a negative timeout' => [$d, '--connect_timeout=-1', 'list'],
        'sentinels without a service' => ['--sentinels=redis://127.0.0.1:1', 'list'],
        'cluster and servers' => ['--cluster=redis://127.0.0.1:1', '--servers=redis://127.0.0.1:2', 'list'],
        'an empty key' => [$d, 'inspect', ''],
        'unreachable: list' => ["--dsn=redis://127.0.0.1:$closed", 'list'],
        'unreachable: inspect' => ["--dsn=redis://:secret@127.0.0.1:$closed", 'inspect', 'jobs:nightly'],
        'unreachable: release --force' => ['release', '--force', 'jobs:nightly', '--dsn', "redis://127.0.0.1:$closed", '--connect-timeout', '0.2'],
        'unreachable, JSON asked' => ["--dsn=redis://127.0.0.1:$closed", '--json', 'list'],
    ];
    foreach ($cases as $name => $args) {
        $r = rl_cli($args);
        $err = str_replace((string) $closed, 'CLOSED', $r['err']);
        $usage = str_contains($r['err'], "\nusage: redis-lock [OPTIONS] list [PATTERN]\n");
        echo "$name: exit {$r['rc']}, stdout ", var_export($r['out'], true), ", usage ", var_export($usage, true),
            ", clean ", var_export(rl_cli_clean($r), true), "\n  ", strtok($err, "\n"), "\n";
    }
    echo "the password is masked: ", var_export(!str_contains(rl_cli(["--dsn=redis://:secret@127.0.0.1:$closed", 'list'])['err'], 'secret'), true), "\n";

    echo "== without the extension\n";
    $r = rl_cli([$d, 'list'], [], false);
    echo "exit {$r['rc']}, stdout ", var_export($r['out'], true), ", clean ", var_export(rl_cli_clean($r), true), "\n",
        str_replace(PHP_BINARY, 'PHP', $r['err']);

    echo "== --help\n";
    foreach ([['--help'], ['help'], ['-h'], [$d, 'inspect', '--help']] as $args) {
        $r = rl_cli($args);
        echo implode(' ', $args), ": exit {$r['rc']}, stderr ", var_export($r['err'], true), ", first line: ", strtok($r['out'], "\n"), "\n";
    }
    $help = rl_cli(['--help'])['out'];
    $missing = array_filter(['--dsn', '--prefix', '--connect-timeout', '--read-timeout', '--sentinels', '--service', '--cluster',
        '--servers', '--tls-ca-file', '--tls-cert-file', '--tls-key-file', '--limit', '--json', 'list [PATTERN]', 'inspect KEY',
        'release --force KEY'], fn($o) => !str_contains($help, $o));
    echo "every option and command in it: ", var_export(array_values($missing), true), "\n";
    $first = fgets(fopen(rl_cli_path(), 'r'));
    echo "the script is executable: ", var_export(is_executable(rl_cli_path()), true), ", ", $first;

    echo "== nothing changed\n";
    echo "the server as before: ", var_export(rl_snapshot($dsn) === $before, true), ", the lock still held: ", var_export($held->isOwned(), true), "\n";
} finally {
    rl_stop_redis($srv);
}
?>
--EXPECTF--
set up: %d keys
unknown command: exit 2, stdout '', usage true, clean true
  redis-lock: unknown command: frobnicate
no command: exit 2, stdout '', usage true, clean true
  redis-lock: no command given
inspect, missing KEY: exit 2, stdout '', usage true, clean true
  redis-lock: inspect: missing KEY
release, missing KEY: exit 2, stdout '', usage true, clean true
  redis-lock: release: missing KEY
release without --force: exit 2, stdout '', usage true, clean true
  redis-lock: release frees the lock whoever holds it: say so with --force
inspect, two keys: exit 2, stdout '', usage true, clean true
  redis-lock: inspect takes one KEY
list, two patterns: exit 2, stdout '', usage true, clean true
  redis-lock: list takes at most one PATTERN
unknown option: exit 2, stdout '', usage true, clean true
  redis-lock: unknown option: --frobnicate
unknown short option: exit 2, stdout '', usage true, clean true
  redis-lock: unknown option: -x
--force with list: exit 2, stdout '', usage true, clean true
  redis-lock: --force is for release only
--dsn without a value: exit 2, stdout '', usage true, clean true
  redis-lock: --dsn needs a value (--dsn=VALUE)
--prefix followed by an option: exit 2, stdout '', usage true, clean true
  redis-lock: --prefix needs a value (--prefix=VALUE)
--json with a value: exit 2, stdout '', usage true, clean true
  redis-lock: --json takes no value
--limit=0: exit 2, stdout '', usage true, clean true
  redis-lock: --limit must be a whole number from 1, not "0"
--limit=ten: exit 2, stdout '', usage true, clean true
  redis-lock: --limit must be a whole number from 1, not "ten"
--read-timeout=soon: exit 2, stdout '', usage true, clean true
  redis-lock: --read-timeout must be a number of seconds, not "soon"
a malformed dsn: exit 2, stdout '', usage false, clean true
  redis-lock: invalid dsn "http://127.0.0.1:1": expected redis://[user:pass@]host[:port][/db], rediss://... or unix:///path/to.sock
a negative timeout: exit 2, stdout '', usage false, clean true
  redis-lock: option "connect_timeout" must be a finite number of seconds greater than 0, -1 given
sentinels without a service: exit 2, stdout '', usage false, clean true
  redis-lock: option "sentinels" needs option "service", the name of the master they monitor
cluster and servers: exit 2, stdout '', usage false, clean true
  redis-lock: options "servers" and "cluster" each choose a topology (servers: Redlock, sentinels: Sentinel, cluster: Redis Cluster) and cannot be combined
an empty key: exit 2, stdout '', usage true, clean true
  redis-lock: inspect: the KEY is empty
unreachable: list: exit 1, stdout '', usage false, clean true
  redis-lock: cannot talk to Redis at redis://127.0.0.1:CLOSED: connection refused
unreachable: inspect: exit 1, stdout '', usage false, clean true
  redis-lock: cannot talk to Redis at redis://127.0.0.1:CLOSED: connection refused
unreachable: release --force: exit 1, stdout '', usage false, clean true
  redis-lock: cannot talk to Redis at redis://127.0.0.1:CLOSED: connection refused
unreachable, JSON asked: exit 1, stdout '', usage false, clean true
  redis-lock: cannot talk to Redis at redis://127.0.0.1:CLOSED: connection refused
the password is masked: true
== without the extension
exit 1, stdout '', clean true
redis-lock: the redis_lock extension is not loaded in this PHP (%s, PHP).
Enable it (phpenmod redis_lock, or extension=redis_lock.so in php.ini), or run:
  PHP -d extension=redis_lock.so %s/bin/redis-lock ...
== --help
--help: exit 0, stderr '', first line: usage: redis-lock [OPTIONS] list [PATTERN]
help: exit 0, stderr '', first line: usage: redis-lock [OPTIONS] list [PATTERN]
-h: exit 0, stderr '', first line: usage: redis-lock [OPTIONS] list [PATTERN]
--dsn=%s inspect --help: exit 0, stderr '', first line: usage: redis-lock [OPTIONS] list [PATTERN]
every option and command in it: array (
)
the script is executable: true, #!/usr/bin/env php
== nothing changed
the server as before: true, the lock still held: true
