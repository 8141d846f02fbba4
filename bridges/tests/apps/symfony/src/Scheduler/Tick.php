<?php

namespace App\Scheduler;

final class Tick
{
    public function __construct(public readonly string $schedule, public readonly string $dueAt)
    {
    }
}
