<?php

namespace App\Scheduler;

/** Appends "DUE-AT PID" to APP_VAR_DIR/ticks-SCHEDULE.log for each tick handled. */
final class TickHandler
{
    public function __construct(private readonly string $varDir)
    {
    }

    public function __invoke(Tick $tick): void
    {
        file_put_contents($this->varDir . "/ticks-{$tick->schedule}.log", $tick->dueAt . ' ' . getmypid() . "\n", FILE_APPEND | LOCK_EX);
    }
}
