<?php
// A classic Laravel application (Laravel 8 to 13 accept it) on Debian's
// php-laravel-framework, without Composer: the framework's autoloader, the bridges'
// own, and one for this application's App\ classes.
require_once '/usr/share/php/Illuminate/autoload.php';
require_once dirname(__DIR__, 4) . '/autoload.php';
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'App\\')) {
        $file = dirname(__DIR__) . '/app/' . strtr(substr($class, 4), '\\', '/') . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

// Everything a run writes (SQLite database, storage, the framework's manifests,
// the jobs' journals) goes to the directory the caller gives, never into the repository.
$dir = getenv('REDIS_LOCK_APP_DIR');
if (!$dir || !is_dir($dir) || !getenv('REDIS_LOCK_TEST_DSN') || !getenv('REDIS_LOCK_APP_PREFIX')) {
    fwrite(STDERR, "laravel test app: set REDIS_LOCK_APP_DIR (an existing directory), REDIS_LOCK_APP_PREFIX and REDIS_LOCK_TEST_DSN\n");
    exit(2);
}
foreach (['APP_SERVICES_CACHE' => 'services.php', 'APP_PACKAGES_CACHE' => 'packages.php', 'APP_CONFIG_CACHE' => 'config.php',
          'APP_ROUTES_CACHE' => 'routes.php', 'APP_EVENTS_CACHE' => 'events.php'] as $variable => $file) {
    putenv("$variable=$dir/bootstrap-cache/$file");
    $_ENV[$variable] = $_SERVER[$variable] = "$dir/bootstrap-cache/$file";
}
is_dir("$dir/bootstrap-cache") || @mkdir("$dir/bootstrap-cache", 0777, true);
is_dir("$dir/storage") || @mkdir("$dir/storage", 0777, true);

$app = new Illuminate\Foundation\Application(dirname(__DIR__));
$app->useStoragePath("$dir/storage");
// Laravel 11+ merges the framework's default config files into config/, read from a
// path Debian's package does not ship; this application's config/ is complete.
if (method_exists($app, 'dontMergeFrameworkConfiguration')) {
    $app->dontMergeFrameworkConfiguration();
}
$app->singleton(Illuminate\Contracts\Console\Kernel::class, App\Console\Kernel::class);
// The framework's own HTTP kernel, for the metrics route (no middleware of the application's).
$app->singleton(Illuminate\Contracts\Http\Kernel::class, Illuminate\Foundation\Http\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, App\Exceptions\Handler::class);

return $app;
