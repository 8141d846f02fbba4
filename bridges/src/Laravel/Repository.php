<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Cache\Repository as LaravelRepository;

/**
 * The cache repository of a `redis_lock` store: Laravel's, with `funnel()` on the
 * extension's Semaphore (see Funnel), on every Laravel line.
 */
class Repository extends LaravelRepository
{
    /**
     * At most N callbacks at once under $name: `Cache::funnel('pdf')->limit(4)->then(...)`.
     *
     * @param \UnitEnum|string $name
     * @return Funnel
     */
    public function funnel($name)
    {
        return new Funnel($this->store, (string) ($name instanceof \BackedEnum ? $name->value : ($name instanceof \UnitEnum ? $name->name : $name)));
    }
}
