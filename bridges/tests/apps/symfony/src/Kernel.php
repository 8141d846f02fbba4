<?php

namespace App;

use RedisLock\Bridge\Symfony\MetricsController;
use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Bundle\FrameworkBundle\Kernel\MicroKernelTrait;
use Symfony\Component\DependencyInjection\Loader\Configurator\ContainerConfigurator;
use Symfony\Component\HttpKernel\Kernel as BaseKernel;
use Symfony\Component\Routing\Loader\Configurator\RoutingConfigurator;

final class Kernel extends BaseKernel
{
    use MicroKernelTrait;

    public function registerBundles(): iterable
    {
        yield new FrameworkBundle();
    }

    /** This directory: Symfony would look for a composer.json and find the bridges' one. */
    public function getProjectDir(): string
    {
        return \dirname(__DIR__);
    }

    /** Never inside the repository: from APP_CACHE_DIR, else under the system's temporary directory. */
    public function getCacheDir(): string
    {
        return self::outside('APP_CACHE_DIR') . '/' . $this->environment;
    }

    public function getLogDir(): string
    {
        return self::outside('APP_LOG_DIR');
    }

    /** The configuration is PHP, on every Symfony line (5.4's trait would only import YAML packages). */
    private function configureContainer(ContainerConfigurator $container): void
    {
        $container->import($this->getProjectDir() . '/config/packages/*.php');
        $container->import($this->getProjectDir() . '/config/services.php');
    }

    /** The metrics endpoint, as docs/symfony.md ("Metrics") routes it. */
    private function configureRoutes(RoutingConfigurator $routes): void
    {
        $routes->add('redis_lock_metrics', '/metrics')->controller(MetricsController::class)->methods(['GET']);
    }

    private static function outside(string $variable): string
    {
        return getenv($variable) ?: sys_get_temp_dir() . '/redis-lock-symfony-app/' . strtolower($variable);
    }
}
