<?php

namespace App\Console\Commands;

use App\Jobs\SlotJob;
use App\Jobs\UniqueJob;
use Illuminate\Console\Command;
use Illuminate\Contracts\Cache\Repository;

/** Dispatches jobs onto a queue: a JSON list of {"job": "unique"|"slot", constructor arguments by name}. */
class DispatchJobs extends Command
{
    protected $signature = 'app:dispatch {queue} {jobs}';
    protected $description = 'Dispatch test jobs';

    public function handle(): int
    {
        // The lock class behind the default store, which UniqueLock and WithoutOverlapping use.
        $this->line('lock: ' . get_class(app(Repository::class)->lock('probe')));
        foreach (json_decode($this->argument('jobs'), true, 8, JSON_THROW_ON_ERROR) as $spec) {
            $class = ['unique' => UniqueJob::class, 'slot' => SlotJob::class][$spec['job']];
            unset($spec['job']);
            // The PendingDispatch goes at once: unique jobs are checked then.
            dispatch((new $class(...$spec))->onQueue($this->argument('queue')));
        }
        return 0;
    }
}
