<?php

namespace App\Providers;

use App\Database\SQLiteConnector;
use Illuminate\Support\Facades\Route;
use Illuminate\Support\ServiceProvider;
use RedisLock\Bridge\Laravel\MetricsController;

class AppServiceProvider extends ServiceProvider
{
    public function register()
    {
        // Two queue workers on one SQLite database (see SQLiteConnector).
        $this->app->bind('db.connector.sqlite', SQLiteConnector::class);
    }

    public function boot()
    {
        // The metrics endpoint, as docs/laravel.md ("Metrics") routes it.
        Route::get('/metrics', MetricsController::class);
    }
}
