--TEST--
Bad arguments and options are ValueError or TypeError at construction, before any connection
--FILE--
<?php
// An address where nothing listens: were anything sent, it would be a LockConnectionException.
$dead = ['dsn' => 'redis://127.0.0.1:1'];
$cases = [
    'empty key'          => fn() => new Lock('', 1, 1, $dead),
    'negative timeOut'   => fn() => new Lock('k', -0.001, 1, $dead),
    'NaN timeOut'        => fn() => new Lock('k', NAN, 1, $dead),
    'INF timeOut'        => fn() => new Lock('k', INF, 1, $dead),
    'zero lockOut'       => fn() => new Lock('k', 1, 0, $dead),
    'negative lockOut'   => fn() => new Lock('k', 1, -5, $dead),
    'NaN lockOut'        => fn() => new Lock('k', 1, NAN, $dead),
    '-INF lockOut'       => fn() => new Lock('k', 1, -INF, $dead),
    'sub-ms lockOut'     => fn() => new Lock('k', 1, 0.0001, $dead),
    'unknown option'     => fn() => new Lock('k', 1, 1, ['dsn' => 'redis://127.0.0.1:1', 'colour' => 'red']),
    'int option key'     => fn() => new Lock('k', 1, 1, [5]),
    'dsn scheme'         => fn() => new Lock('k', 1, 1, ['dsn' => 'http://127.0.0.1:6379']),
    'dsn no scheme'      => fn() => new Lock('k', 1, 1, ['dsn' => '127.0.0.1:6379']),
    'dsn bad port'       => fn() => new Lock('k', 1, 1, ['dsn' => 'redis://:s3cret@127.0.0.1:99999']),
    'dsn bad db'         => fn() => new Lock('k', 1, 1, ['dsn' => 'redis://:s3cret@127.0.0.1:6379/x']),
    'dsn empty'          => fn() => new Lock('k', 1, 1, ['dsn' => '']),
    'zero read_timeout'  => fn() => new Lock('k', 1, 1, $dead + ['read_timeout' => 0]),
    'NaN connect_timeout'=> fn() => new Lock('k', 1, 1, $dead + ['connect_timeout' => NAN]),
    'retry max < min'    => fn() => new Lock('k', 1, 1, $dead + ['retry_delay' => 0.5, 'retry_delay_max' => 0.1]),
    'key array'          => fn() => new Lock([], 1, 1, $dead),
    'timeOut string'     => fn() => new Lock('k', 'soon', 1, $dead),
    'lockOut null'       => fn() => new Lock('k', 1, null, $dead),
    'options string'     => fn() => new Lock('k', 1, 1, 'redis://127.0.0.1'),
    'dsn int'            => fn() => new Lock('k', 1, 1, ['dsn' => 6379]),
    'timeout string'     => fn() => new Lock('k', 1, 1, $dead + ['read_timeout' => '1']),
    'prefix array'       => fn() => new Lock('k', 1, 1, $dead + ['prefix' => []]),
    'token type'         => fn() => (new Lock('k', 1, 1, $dead))->releaseLock([]),
];
foreach ($cases as $name => $fn) {
    try {
        $fn();
        echo "$name: no error\n";
    } catch (Throwable $e) {
        $leak = str_contains($e->getMessage(), 's3cret') ? ' PASSWORD LEAKED' : '';
        echo "$name: ", get_class($e), $leak, "\n";
    }
}
// Valid edge values are accepted, still without connecting.
$l = new Lock('k', 0, 0.001, $dead + ['connect_timeout' => 1, 'read_timeout' => 0.25, 'prefix' => '']);
echo get_class($l), ' ', $l->getKey(), "\n";
$l = new Lock('k', 2.5, 30);
echo "defaults ok\n";
?>
--EXPECT--
empty key: ValueError
negative timeOut: ValueError
NaN timeOut: ValueError
INF timeOut: ValueError
zero lockOut: ValueError
negative lockOut: ValueError
NaN lockOut: ValueError
-INF lockOut: ValueError
sub-ms lockOut: ValueError
unknown option: ValueError
int option key: ValueError
dsn scheme: ValueError
dsn no scheme: ValueError
dsn bad port: ValueError
dsn bad db: ValueError
dsn empty: ValueError
zero read_timeout: ValueError
NaN connect_timeout: ValueError
retry max < min: ValueError
key array: TypeError
timeOut string: TypeError
lockOut null: TypeError
options string: TypeError
dsn int: TypeError
timeout string: TypeError
prefix array: TypeError
token type: TypeError
Lock k
defaults ok
