<?php

use App\Doctrine\SqliteConnections;
use App\Messenger\Job;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\Messenger\Bridge\Doctrine\Transport\DoctrineTransportFactory;

use function Symfony\Component\DependencyInjection\Loader\Configurator\service;

return static function (ContainerConfigurator $container): void {
    $container->extension('framework', [
        'messenger' => [
            // A Doctrine queue in a SQLite file of APP_VAR_DIR: each test has its own.
            'transports' => ['async' => 'doctrine://default?queue_name=jobs'],
            'routing' => [Job::class => 'async'],
        ],
    ]);

    // DoctrineBundle registers the doctrine:// transport; Debian has no DoctrineBundle,
    // so the factory is registered here, on a one-connection registry.
    $container->services()
        ->set('app.doctrine', SqliteConnections::class)->args(['%env(APP_VAR_DIR)%/queue.sqlite'])
        ->set('messenger.transport.doctrine.factory', DoctrineTransportFactory::class)
            ->args([service('app.doctrine')])
            ->tag('messenger.transport_factory');
};
