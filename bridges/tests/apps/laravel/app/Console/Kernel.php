<?php

namespace App\Console;

use App\Journal;
use Illuminate\Console\Scheduling\Schedule;
use Illuminate\Foundation\Console\Kernel as ConsoleKernel;

class Kernel extends ConsoleKernel
{
    /** Listed: Kernel::load() would need Composer to find the application's namespace. */
    protected $commands = [
        Commands\DispatchJobs::class,
        Commands\Funnel::class,
        Commands\LockAgent::class,
        Commands\MetricsRequest::class,
    ];

    protected function schedule(Schedule $schedule)
    {
        // Each task journals the host it ran on and, for the one-server task, the mutex
        // name the scheduler took for it (the test looks for that key in Redis).
        $one = $schedule->call(function () use (&$one) {
            Journal::add('schedule', ['task' => 'one-server', 'host' => gethostname(), 'mutex' => $one->mutexName()]);
        })->name('one-server')->everyMinute()->onOneServer();
        $schedule->call(function () {
            Journal::add('schedule', ['task' => 'every-server', 'host' => gethostname()]);
        })->name('every-server')->everyMinute();
    }
}
