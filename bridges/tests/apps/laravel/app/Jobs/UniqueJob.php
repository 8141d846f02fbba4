<?php

namespace App\Jobs;

use App\Journal;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeUnique;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;

/** A unique job: one pending or running per name, for at most $uniqueFor seconds. */
class UniqueJob implements ShouldQueue, ShouldBeUnique
{
    use Dispatchable, InteractsWithQueue, Queueable;

    /** Read by Laravel's UniqueLock as the lock's lease (a property on every version). */
    public $uniqueFor;

    public function __construct(public string $journal, public string $name, int $uniqueFor)
    {
        $this->uniqueFor = $uniqueFor;
    }

    public function uniqueId()
    {
        return $this->name;
    }

    public function handle(): void
    {
        Journal::add($this->journal, ['event' => 'ran', 'name' => $this->name]);
    }
}
