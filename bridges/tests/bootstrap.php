<?php
// The framework packages as Debian installs them (/usr/share/php), then the bridges.
// Laravel may be missing: on Debian sid's PHP 8.5 it would bring in PHP 8.4, so
// tools/env/deps.sh leaves it out, and its tests skip (Support::needsLaravel()).
foreach (['Symfony/Component/Lock' => true, 'Symfony/Component/Semaphore' => true, 'Illuminate' => false] as $package => $required) {
    $autoload = "/usr/share/php/$package/autoload.php";
    if (is_file($autoload)) {
        require_once $autoload;
    } elseif ($required) {
        fwrite(STDERR, "bridges tests: $autoload is missing (php-symfony-lock, php-symfony-semaphore: tools/env/deps.sh installs them)\n");
        exit(2);
    }
}
require_once __DIR__ . '/../autoload.php';
require_once __DIR__ . '/Support.php';
// The repository's RESP client, for RespRedis where there is no phpredis (Support::redis()):
// the tests run inside the repository (TopologiesTest starts its servers with php-tests/_helper.inc).
require_once __DIR__ . '/../../tools/lib/resp.php';
if (!extension_loaded('redis_lock') || !getenv('REDIS_LOCK_TEST_DSN') || !getenv('REDIS_LOCK_EXT')) {
    fwrite(STDERR, "bridges tests: run them with the extension loaded, REDIS_LOCK_EXT and REDIS_LOCK_TEST_DSN set (make test-bridges does)\n");
    exit(2);
}
