<?php

namespace App\Jobs;

use App\Journal;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\Middleware\WithoutOverlapping;

/**
 * A job that journals its start and end, behind WithoutOverlapping($key) unless $key is
 * null. $mode: 'sleep' ($ms milliseconds), 'fatal' (dies of exhausted memory), 'hang'
 * (sleeps until its worker is killed).
 */
class SlotJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable;

    /** Turned-away attempts come back (releaseAfter) and count as tries. */
    public $tries = 100;

    public function __construct(
        public string $journal,
        public string $label,
        public string $mode,
        public int $ms = 0,
        public ?string $key = null,
        public int $expireAfter = 0,
        public int $releaseAfter = 1,
    ) {
    }

    public function middleware()
    {
        if ($this->key === null) {
            return [];
        }
        return [(new WithoutOverlapping($this->key))->releaseAfter($this->releaseAfter)->expireAfter($this->expireAfter)];
    }

    public function handle(): void
    {
        Journal::add($this->journal, ['event' => 'start', 'label' => $this->label, 'attempts' => $this->attempts()]);
        switch ($this->mode) {
            case 'sleep':
                usleep($this->ms * 1000);
                break;
            case 'fatal':
                ini_set('memory_limit', (string) (memory_get_usage() + (16 << 20)));
                $waste = str_repeat('x', 64 << 20);
                break;
            case 'hang':
                sleep(60);
                break;
        }
        Journal::add($this->journal, ['event' => 'end', 'label' => $this->label]);
    }
}
