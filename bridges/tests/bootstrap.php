<?php
// The framework packages as Debian installs them (/usr/share/php), then the bridges.
foreach (['Symfony/Component/Lock', 'Symfony/Component/Semaphore', 'Illuminate'] as $package) {
    $autoload = "/usr/share/php/$package/autoload.php";
    if (!is_file($autoload)) {
        fwrite(STDERR, "bridges tests: $autoload is missing (php-symfony-lock, php-symfony-semaphore, php-laravel-framework: tools/deps.sh installs them)\n");
        exit(2);
    }
    require_once $autoload;
}
require_once __DIR__ . '/../autoload.php';
require_once __DIR__ . '/Support.php';
if (!extension_loaded('redis_lock') || !getenv('REDIS_LOCK_TEST_DSN') || !getenv('REDIS_LOCK_EXT')) {
    fwrite(STDERR, "bridges tests: run them with the extension loaded, REDIS_LOCK_EXT and REDIS_LOCK_TEST_DSN set (make test-bridges does)\n");
    exit(2);
}
