<?php

namespace App\Providers;

use App\Database\SQLiteConnector;
use Illuminate\Support\ServiceProvider;

class AppServiceProvider extends ServiceProvider
{
    public function register()
    {
        // Two queue workers on one SQLite database (see SQLiteConnector).
        $this->app->bind('db.connector.sqlite', SQLiteConnector::class);
    }
}
