<?php

namespace App\Messenger;

/** Appends "NAME PID" to APP_VAR_DIR/jobs.log for each job handled. */
final class JobHandler
{
    public function __construct(private readonly string $varDir)
    {
    }

    public function __invoke(Job $job): void
    {
        file_put_contents($this->varDir . '/jobs.log', $job->name . ' ' . getmypid() . "\n", FILE_APPEND | LOCK_EX);
    }
}
