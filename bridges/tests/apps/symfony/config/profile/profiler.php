<?php

// The "profile" environment: the web profiler and the bridge's Locks panel, set up as
// docs/symfony.md ("The profiler panel") says.

use App\Command\ProfileRequestCommand;
use App\Controller\WorkController;
use RedisLock\Bridge\Symfony\Profiler\LockCollector;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;

return static function (ContainerConfigurator $container): void {
    $container->extension('framework', ['profiler' => ['collect' => true]]);
    $container->extension('web_profiler', ['toolbar' => true, 'intercept_redirects' => false]);
    $container->extension('twig', ['paths' => [LockCollector::VIEWS => 'RedisLock']]);
    $services = $container->services();
    $services->set(LockCollector::class)
        ->tag('data_collector', ['template' => '@RedisLock/Collector/redis_lock.html.twig', 'id' => 'redis_lock'])
        ->tag('kernel.event_subscriber');
    $services->set(WorkController::class)->autowire()->public()->tag('controller.service_arguments')
        ->arg('$prefix', '%app.lock_prefix%');
    $services->set(ProfileRequestCommand::class)->autowire()->tag('console.command', ['command' => 'app:profile-request']);
};
