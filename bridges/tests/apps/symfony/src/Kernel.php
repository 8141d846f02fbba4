<?php

namespace App;

use App\Controller\WorkController;
use RedisLock\Bridge\Symfony\MetricsController;
use Symfony\Bundle\FrameworkBundle\FrameworkBundle;
use Symfony\Bundle\TwigBundle\TwigBundle;
use Symfony\Bundle\WebProfilerBundle\WebProfilerBundle;
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
        // The "profile" environment: the web profiler, with the bridge's Locks panel.
        if ($this->environment === 'profile') {
            yield new TwigBundle();
            yield new WebProfilerBundle();
        }
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
        if ($this->environment === 'profile') {
            $container->import($this->getProjectDir() . '/config/profile/*.php');
        }
    }

    /** The metrics endpoint, as docs/symfony.md ("Metrics") routes it. */
    private function configureRoutes(RoutingConfigurator $routes): void
    {
        $routes->add('redis_lock_metrics', '/metrics')->controller(MetricsController::class)->methods(['GET']);
        if ($this->environment === 'profile') {
            // The profiler's own routes, in the format this WebProfilerBundle ships.
            $dir = (new \ReflectionClass(WebProfilerBundle::class))->getFileName();
            foreach (['wdt' => '/_wdt', 'profiler' => '/_profiler'] as $file => $prefix) {
                $php = \dirname($dir) . "/Resources/config/routing/$file.php";
                $routes->import(is_file($php) ? $php : "@WebProfilerBundle/Resources/config/routing/$file.xml")->prefix($prefix);
            }
            $routes->add('app_work', '/work')->controller(WorkController::class)->methods(['GET']);
        }
    }

    private static function outside(string $variable): string
    {
        return getenv($variable) ?: sys_get_temp_dir() . '/redis-lock-symfony-app/' . strtolower($variable);
    }
}
