--TEST--
The module loads, names itself redis_lock, and declares the classes of the API
--FILE--
<?php
var_dump(extension_loaded('redis_lock'));
foreach (['LockException' => 'RuntimeException', 'LockConnectionException' => 'LockException',
          'LockTimeoutException' => 'LockException', 'LockLostException' => 'LockException'] as $class => $parent) {
    echo $class, ' extends ', get_parent_class($class), "\n";
    var_dump(get_parent_class($class) === $parent);
}
$r = new ReflectionClass('Lock');
var_dump($r->isFinal());
$methods = array_map(fn($m) => $m->getName(), $r->getMethods());
sort($methods);
echo implode(',', $methods), "\n";
echo $r->getConstructor()->getNumberOfRequiredParameters(), "\n";
foreach (['extendLock', 'isOwned', 'getTtl', 'getRemainingLifetime', 'getFencingToken', 'synchronized'] as $name) {
    $m = $r->getMethod($name);
    $params = array_map(fn($p) => $p->getType() . ' $' . $p->getName() . ($p->isOptional() ? ' = ' . var_export($p->getDefaultValue(), true) : ''), $m->getParameters());
    echo $name, '(', implode(', ', $params), '): ', $m->getReturnType(), "\n";
}
$ri = shell_exec(escapeshellarg(PHP_BINARY) . ' -n -d extension=' . escapeshellarg(getenv('REDIS_LOCK_EXT')) . ' --ri redis_lock');
var_dump(str_contains($ri, 'version => ' . phpversion('redis_lock')));
var_dump(str_contains($ri, 'redis_lock.dsn => redis://127.0.0.1:6379'));
var_dump(preg_match('/^\d+\.\d+\.\d+/', phpversion('redis_lock')) === 1);
?>
--EXPECT--
bool(true)
LockException extends RuntimeException
bool(true)
LockConnectionException extends LockException
bool(true)
LockTimeoutException extends LockException
bool(true)
LockLostException extends LockException
bool(true)
bool(true)
__construct,addLock,addReadLock,extendLock,forceReleaseLock,getFencingToken,getKey,getRemainingLifetime,getTtl,inspect,isLocked,isOwned,releaseLock,releaseLock1,releaseLock2,synchronized,tryLock,tryReadLock
1
extendLock(?string $token = NULL, ?float $lockOut = NULL): bool
isOwned(?string $token = NULL): bool
getTtl(): ?float
getRemainingLifetime(): float
getFencingToken(): ?int
synchronized(callable $fn): mixed
bool(true)
bool(true)
bool(true)
