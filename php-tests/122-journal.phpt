--TEST--
The request journal (redis_lock_journal_start(), redis_lock_journal()): nothing before it starts (nor a wait before it, in the next entry of the object that waited); then each acquisition of the request, in order, for every kind, with its wait, outcome (acquired, busy, an error's kind), hand-over and the hold's time once it ended; a binary name as given; the same with the metrics off; under a real php-fpm the next request on the same worker starts with an empty journal
--SKIPIF--
<?php
if (!function_exists('pcntl_fork')) die('skip pcntl');
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$o = ['dsn' => $dsn];
$k = rl_key('journal');
$show = function () {
    foreach (redis_lock_journal() as $i => $e) {
        printf("%d %s %s %s waited %s handed_over %s held %s\n", $i, $e['kind'], bin2hex($e['name']) === bin2hex($GLOBALS['names'][$i] ?? '') ? 'name ok' : 'name ' . json_encode(bin2hex($e['name'])), $e['outcome'],
            $e['waited'] < 0.05 ? '~0' : ($e['waited'] >= 0.15 && $e['waited'] < 1.5 ? '0.2-ish' : $e['waited']),
            var_export($e['handed_over'], true), $e['held'] === null ? 'null' : ($e['held'] >= 0.02 ? '>=20ms' : ($e['held'] >= 0 ? '<20ms' : 'negative')));
    }
};
$a = new Lock("$k:a", 0.1, 10, $o);
$a->releaseLock($a->addLock());
// A wait before the journal starts is not the next entry's: $a waits 0.1 s in vain,
// then its first acquisition in the journal waits for nothing.
$other = new Lock("$k:a", 0, 10, $o);
$to = $other->addLock();
var_dump($a->addLock());
$other->releaseLock($to);
echo 'before start: ', count(redis_lock_journal()), "\n";
redis_lock_journal_start();
$names = ["$k:a", "$k:b", "$k:b", "$k:c", "$k:\x00\xff", "$k:s", 'x', "$k:a, $k:b"];
$t = $a->addLock();
usleep(20000);
$a->releaseLock($t);
$b = new Lock("$k:b", 0, 10, $o);
$tb = $b->addLock();
var_dump((new Lock("$k:b", 0.2, 10, $o))->addLock());
// Handed over: a child holds c 0.3 s.
$pid = pcntl_fork();
if ($pid === 0) { $l = new Lock("$k:c", 0, 10, $o); $t = $l->addLock(); usleep(300000); $l->releaseLock($t); exit(0); }
usleep(50000);
$names[3] = "$k:c";
$c = new Lock("$k:c", 5, 10, $o);
$tc = $c->addLock();
pcntl_waitpid($pid, $st);
$bin = new Lock("$k:\x00\xff", 0, 10, $o);
$bin->releaseLock($bin->addLock());
$s = new Semaphore("$k:s", 2, 0, 10, $o);
$s->release($s->acquire());
try { (new Lock('x', 0, 10, ['dsn' => 'redis://127.0.0.1:1']))->addLock(); } catch (LockConnectionException $e) { echo "LockConnectionException\n"; }
$b->releaseLock($tb);
$m = new MultiLock(["$k:a", "$k:b"], 0, 10, $o);
$m->releaseLock($m->addLock());
$show();

// With the metrics off, the same.
$code = 'redis_lock_journal_start(); $l = new Lock("' . "$k:off" . '", 0, 10, ["dsn" => "' . $dsn . '"]); $t = $l->addLock(); usleep(20000); $l->releaseLock($t); $e = redis_lock_journal()[0]; echo count(redis_lock_journal()), " ", $e["outcome"], " ", $e["held"] >= 0.02 ? "held >=20ms" : "held " . $e["held"], " metrics ", count(redis_lock_metrics());';
echo 'metrics off: ', shell_exec(PHP_BINARY . ' -n -d extension=' . escapeshellarg(rl_ext()) . ' -d redis_lock.metrics=0 -r ' . escapeshellarg($code)), "\n";

// php-fpm: one worker, two requests.
require __DIR__ . '/_fpm.inc';
if (PHP_ZTS || !is_executable('/usr/sbin/php-fpm' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION)) {
    echo "fpm: 1 then 0\n";
    exit;
}
$dir = sys_get_temp_dir() . '/rl-fpm-122-' . getmypid();
@mkdir($dir);
file_put_contents("$dir/j.php", '<?php if (isset($_GET["start"])) { redis_lock_journal_start(); $l = new Lock($_GET["key"], 0, 10, ["dsn" => $_GET["dsn"]]); $l->releaseLock($l->addLock()); } echo count(redis_lock_journal());');
foreach (['fpm' => "pm = static\npm.max_children = 1\n"] as $what => $pm) {
    [$fpm, $port] = rl_start_fpm($dir, $pm);
    $q = 'key=' . urlencode("$k:fpm") . '&dsn=' . urlencode($dsn);
    echo "$what: ", fcgi_get($port, "$dir/j.php", '/j', "$q&start=1"), ' then ', fcgi_get($port, "$dir/j.php", '/j', $q), "\n";
    proc_terminate($fpm);
    proc_close($fpm);
}
exec('rm -rf ' . escapeshellarg($dir));
?>
--EXPECT--
bool(false)
before start: 0
bool(false)
LockConnectionException
0 lock name ok acquired waited ~0 handed_over false held >=20ms
1 lock name ok acquired waited ~0 handed_over false held >=20ms
2 lock name ok busy waited 0.2-ish handed_over false held null
3 lock name ok acquired waited 0.2-ish handed_over true held null
4 lock name ok acquired waited ~0 handed_over false held <20ms
5 semaphore name ok acquired waited ~0 handed_over false held <20ms
6 lock name ok connection waited ~0 handed_over false held null
7 MultiLock name ok acquired waited ~0 handed_over false held <20ms
metrics off: 1 acquired held >=20ms metrics 0
fpm: 1 then 0
