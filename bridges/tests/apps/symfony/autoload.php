<?php
// The application's classes and everything they use, without Composer: Debian's
// packages (see requirements.php), the bridges' own autoload.php, then App\ from src/.
$requirements = require __DIR__ . '/requirements.php';
foreach ($requirements['required'] as $file => $package) {
    if (!is_file($file = "/usr/share/php/$file")) {
        fwrite(STDERR, "$file is missing: install $package (see " . __DIR__ . "/packages)\n");
        exit(2);
    }
    require_once $file;
}
foreach ($requirements['optional'] as $file => $package) {
    if (is_file($file = "/usr/share/php/$file")) {
        require_once $file;
    }
}
require_once dirname(__DIR__, 3) . '/autoload.php';
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'App\\') && is_file($file = __DIR__ . '/src/' . strtr(substr($class, 4), '\\', '/') . '.php')) {
        require $file;
    }
});
