<?php

namespace RedisLock\Bridge\Laravel;

use Illuminate\Contracts\Events\Dispatcher;
use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\Events\JobProcessing;
use Illuminate\Queue\Events\WorkerStopping;
use RedisLock\Bridge\Holds;

/**
 * A queued job past `queue:work --timeout` frees its locks, as a fatal error does.
 *
 * At a job's timeout Laravel's worker fires WorkerStopping and then SIGKILLs itself,
 * so no shutdown function runs and the job's locks (its WithoutOverlapping lock
 * first) would wait for their leases, or forever without `expireAfter()`
 * (laravel/framework#37060). WorkerStopping with a job still running can only be
 * that kill: a worker stopping for any other reason (--stop-when-empty, --max-jobs,
 * memory, a signal) stops between jobs, and leaves locks handed on as they are.
 *
 * @internal
 */
final class TimedOutJobs
{
    /** Whether this process is running a job: between JobProcessing and its end. */
    private static bool $running = false;

    public static function listen(Dispatcher $events): void
    {
        $events->listen(JobProcessing::class, static function (): void {
            self::$running = true;
        });
        $events->listen([JobProcessed::class, JobExceptionOccurred::class], static function (): void {
            self::$running = false;
        });
        $events->listen(WorkerStopping::class, static function (WorkerStopping $event): void {
            if (self::$running && $event->status !== 0) {
                self::$running = false;
                Holds::releaseAll();
            }
        });
    }
}
