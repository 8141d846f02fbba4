<?php

use App\Command\DispatchCommand;
use App\Command\HoldCommand;
use App\Command\MetricsRequestCommand;
use App\Command\ReportCommand;
use App\Messenger\JobHandler;
use App\Scheduler\TickHandler;
use App\Scheduler\TickSchedule;
use RedisLock\Bridge\Symfony\MetricsController;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Scheduler\ScheduleProviderInterface;

use function Symfony\Component\DependencyInjection\Loader\Configurator\service;

return static function (ContainerConfigurator $container): void {
    $container->parameters()
        ->set('app.var_dir', '%env(APP_VAR_DIR)%')
        ->set('app.lock_prefix', '%env(APP_LOCK_PREFIX)%');

    $services = $container->services()->defaults()->autowire()
        ->bind('string $varDir', '%app.var_dir%')
        ->bind('string $prefix', '%app.lock_prefix%');

    $services->set(HoldCommand::class)->tag('console.command', ['command' => 'app:hold']);
    $services->set(ReportCommand::class)->tag('console.command', ['command' => 'app:report']);
    $services->set(DispatchCommand::class)->tag('console.command', ['command' => 'app:dispatch']);
    $services->set(MetricsRequestCommand::class)->tag('console.command', ['command' => 'app:metrics-request']);
    $services->set(JobHandler::class)->tag('messenger.message_handler');
    $services->set(MetricsController::class)->public()->tag('controller.service_arguments');

    if (interface_exists(ScheduleProviderInterface::class)) {
        // Two schedules alike but for the lock: scheduler_locked and, as the test's
        // control, scheduler_unlocked.
        $services->set('app.schedule.locked', TickSchedule::class)
            ->args(['locked', service(LockFactory::class)])
            ->tag('scheduler.schedule_provider', ['name' => 'locked']);
        $services->set('app.schedule.unlocked', TickSchedule::class)
            ->args(['unlocked', null])
            ->tag('scheduler.schedule_provider', ['name' => 'unlocked']);
        $services->set(TickHandler::class)->tag('messenger.message_handler');
    }
};
