<?php
// The article's Lock class (seeds/000), written out on phpredis as the baseline the
// benchmarks measure against. Kept as the article has it: a new connection per
// object, mt_rand tokens, SET NX EX, a 5 ms sleep between tries, whole-second
// timeouts, and the Lua release sent with EVAL. Only the address is a parameter.
final class ArticleLock
{
    public Redis $redis;

    public function __construct(public string $key, public int $timeOut, public int $lockOut,
                                string $host = '127.0.0.1', int $port = 6379)
    {
        $this->redis = new Redis();
        $this->redis->connect($host, $port);
    }

    public function addLock(): int|false
    {
        $endTime = time() + $this->timeOut;
        $value = mt_rand(1000, 10000);
        do {
            if ($this->redis->set($this->key, $value, ['nx', 'ex' => $this->lockOut])) {
                return $value;
            }
            usleep(5000);
        } while (time() < $endTime);
        return false;
    }

    /** The article's atomic release (releaseLock1): the script text sent with every EVAL. */
    public function releaseLock1($value)
    {
        $script = <<<'LUA'
if redis.call("GET",KEYS[1]) == ARGV[1]
then
    return redis.call("DEL",KEYS[1])
else
    return 0
end
LUA;
        return $this->redis->eval($script, [$this->key, $value], 1);
    }
}
