--TEST--
php.ini directives carry the same settings as the options array, which overrides them
--FILE--
<?php
require __DIR__ . '/_helper.inc';
// The engine's table and the core's defaults agree.
foreach (['dsn' => 'redis://127.0.0.1:6379', 'prefix' => '', 'connect_timeout' => '0.5',
          'read_timeout' => '0.5', 'retry_delay' => '0.002', 'retry_delay_max' => '0.05',
          'fair' => '0', 'auto_renew' => '0', 'max_hold' => '0', 'fencing' => '1', 'servers' => '',
          'sentinels' => '', 'service' => '', 'wait_replicas' => '0', 'cluster' => '',
          'tls_ca_file' => '', 'tls_cert_file' => '', 'tls_key_file' => ''] as $k => $v) {
    echo "redis_lock.$k=", var_export(ini_get("redis_lock.$k") === $v, true), "\n";
}
$key = rl_key('ini');
ini_set('redis_lock.dsn', rl_dsn());
ini_set('redis_lock.prefix', 'inipfx:');
$l = new Lock($key, 0, 5);
var_dump(is_string($l->addLock()));
var_dump(rl_cmd(rl_dsn(), 'EXISTS', "inipfx:$key"));
// The options array wins over the directive.
$o = new Lock($key, 0, 5, ['prefix' => 'optpfx:']);
var_dump(is_string($o->addLock()));
var_dump(rl_cmd(rl_dsn(), 'EXISTS', "optpfx:$key"));
var_dump($l->releaseLock(), $o->releaseLock());
// A bad directive is reported when an object is built.
ini_set('redis_lock.read_timeout', 'soon');
try { new Lock($key); } catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
ini_set('redis_lock.read_timeout', '0.5');
ini_set('redis_lock.max_hold', '-1');
try { new Lock($key); } catch (ValueError $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
ini_set('redis_lock.max_hold', '0');
ini_set('redis_lock.fencing', 'Off');
$f = new Lock($key, 0, 5);
var_dump(is_string($f->addLock()), $f->getFencingToken(), $f->releaseLock());
ini_set('redis_lock.dsn', 'redis://127.0.0.1:1');
try { (new Lock($key))->tryLock(); } catch (LockConnectionException $e) { echo get_class($e), "\n"; }
// ini_restore() is a change too, even right after a Lock was made with the old value.
ini_set('redis_lock.dsn', rl_dsn());
$g = new Lock($key, 0, 5);
var_dump(is_string($g->addLock()), $g->getFencingToken(), $g->releaseLock());
ini_restore('redis_lock.fencing');
$g = new Lock($key, 0, 5);
var_dump(is_string($g->addLock()), is_int($g->getFencingToken()), $g->releaseLock());
?>
--EXPECT--
redis_lock.dsn=true
redis_lock.prefix=true
redis_lock.connect_timeout=true
redis_lock.read_timeout=true
redis_lock.retry_delay=true
redis_lock.retry_delay_max=true
redis_lock.fair=true
redis_lock.auto_renew=true
redis_lock.max_hold=true
redis_lock.fencing=true
redis_lock.servers=true
redis_lock.sentinels=true
redis_lock.service=true
redis_lock.wait_replicas=true
redis_lock.cluster=true
redis_lock.tls_ca_file=true
redis_lock.tls_cert_file=true
redis_lock.tls_key_file=true
bool(true)
int(1)
bool(true)
int(1)
bool(true)
bool(true)
ValueError: redis_lock.read_timeout must be a number of seconds, "soon" given
ValueError: redis_lock.max_hold must be a finite number of seconds, 0 (no limit) or greater, -1 given
bool(true)
NULL
bool(true)
LockConnectionException
bool(true)
NULL
bool(true)
bool(true)
bool(true)
bool(true)
