--TEST--
The module loads, names itself redis_lock, and declares the classes of the API (LockWait, the handle of a wait an event loop drives, included: final, made only by the async methods)
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
$w = new ReflectionClass('LockWait');
$methods = array_map(fn($m) => $m->getName(), $w->getMethods());
sort($methods);
echo 'LockWait: ', $w->isFinal() ? 'final' : 'not final', ': ', implode(',', $methods), "\n";
try { new LockWait(); } catch (Error $e) { echo get_class($e), ': ', $e->getMessage(), "\n"; }
foreach (['Lock' => ['addLockAsync', 'addReadLockAsync'], 'Semaphore' => ['acquireAsync'], 'MultiLock' => ['addLockAsync']] as $class => $names) {
    foreach ($names as $name) {
        $m = new ReflectionMethod($class, $name);
        $params = array_map(fn($p) => $p->getType() . ' $' . $p->getName() . ($p->isOptional() ? ' = ' . var_export($p->getDefaultValue(), true) : ''), $m->getParameters());
        echo "$class::$name(", implode(', ', $params), '): ', $m->getReturnType(), "\n";
    }
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
__construct,addLock,addLockAsync,addReadLock,addReadLockAsync,extendLock,forceReleaseLock,getFencingToken,getKey,getRemainingLifetime,getTtl,inspect,isLocked,isOwned,releaseLock,releaseLock1,releaseLock2,synchronized,tryLock,tryReadLock
1
extendLock(?string $token = NULL, ?float $lockOut = NULL): bool
isOwned(?string $token = NULL): bool
getTtl(): ?float
getRemainingLifetime(): float
getFencingToken(): ?int
synchronized(callable $fn): mixed
LockWait: final: __construct,cancel,isDone,poll,result,stream
Error: LockWait cannot be made with new: use Lock::addLockAsync() and the like
Lock::addLockAsync(?string $token = NULL): LockWait
Lock::addReadLockAsync(): LockWait
Semaphore::acquireAsync(int $weight = 1): LockWait
MultiLock::addLockAsync(?string $token = NULL): LockWait
bool(true)
bool(true)
bool(true)
