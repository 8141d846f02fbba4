<?php

use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\HttpKernel\Kernel;

return static function (ContainerConfigurator $container): void {
    $container->extension('framework', [
        'secret' => 'redis-lock-test-app',
        // As later Symfony lines default them: 6.4 asks for both (deprecation notices otherwise).
        'http_method_override' => false,
    ] + (Kernel::VERSION_ID >= 60400 ? ['handle_all_throwables' => true] : []));
};
