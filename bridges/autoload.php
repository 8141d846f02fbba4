<?php
// Loads the bridges without Composer, the way Debian's PHP packages load:
// require '/path/to/bridges/autoload.php'. The framework's own classes come from its
// package (for Debian's: /usr/share/php/Symfony/Component/Lock/autoload.php, …).
spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'RedisLock\\Bridge\\')) {
        $file = __DIR__ . '/src/' . strtr(substr($class, 17), '\\', '/') . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
