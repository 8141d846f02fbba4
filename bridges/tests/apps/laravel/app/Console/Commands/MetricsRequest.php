<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Contracts\Http\Kernel as HttpKernel;
use Illuminate\Http\Request;
use Illuminate\Support\Facades\Cache;

/**
 * Takes and releases the lock NAME of the redis_lock cache store, then sends GET
 * /metrics through the application's HTTP kernel (its router, the route
 * AppServiceProvider declares to the bridge's MetricsController) in this same
 * process, and prints the response's status, its Content-Type and its body.
 */
class MetricsRequest extends Command
{
    protected $signature = 'app:metrics-request {name}';

    public function handle(): int
    {
        $lock = Cache::store('redis_lock')->lock($this->argument('name'), 30);
        $lock->get();
        $lock->release();
        $response = $this->laravel->make(HttpKernel::class)->handle(Request::create('/metrics'));
        $this->line((string) $response->getStatusCode());
        $this->line((string) $response->headers->get('Content-Type'));
        $this->getOutput()->write((string) $response->getContent());
        return 0;
    }
}
