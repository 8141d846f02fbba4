<?php

namespace App\Console\Commands;

use App\Journal;
use Illuminate\Console\Command;
use Illuminate\Support\Facades\Cache;

/**
 * Runs a section of {ms} milliseconds through Cache::store('redis_lock')->funnel({name})
 * limited to {limit} at once, waiting up to {wait} seconds, and journals it.
 */
class Funnel extends Command
{
    protected $signature = 'app:funnel {journal} {name} {limit} {ms} {wait}';
    protected $description = 'Run a section through a cache funnel';

    public function handle(): int
    {
        $cache = Cache::store('redis_lock');
        // The bridge's repository has funnel() on every Laravel line (Laravel's own since 13):
        // a store without one says so, and the test skips.
        if (!method_exists($cache, 'funnel') && !(method_exists($cache, 'hasMacro') && $cache::hasMacro('funnel'))) {
            $this->line('no funnel');
            return 0;
        }
        $journal = $this->argument('journal');
        $cache->funnel($this->argument('name'))
            ->limit((int) $this->argument('limit'))
            ->block((int) $this->argument('wait'))
            ->then(function () use ($journal) {
                Journal::add($journal, ['event' => 'start']);
                usleep((int) $this->argument('ms') * 1000);
                Journal::add($journal, ['event' => 'end']);
            }, function ($e) use ($journal) {
                Journal::add($journal, ['event' => 'failed', 'error' => get_class($e)]);
            });
        $this->line('done');
        return 0;
    }
}
