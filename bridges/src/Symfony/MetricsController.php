<?php

namespace RedisLock\Bridge\Symfony;

use Symfony\Component\HttpFoundation\Response;

/**
 * The pool's lock metrics (every php-fpm worker's), in Prometheus's text format:
 * route a path only the scraper reaches to it (docs/symfony.md, "Metrics").
 */
final class MetricsController
{
    public function __invoke(): Response
    {
        return new Response(redis_lock_metrics_text(), 200, [
            'Content-Type' => 'text/plain; version=0.0.4; charset=utf-8',
            'Cache-Control' => 'no-store',
        ]);
    }
}
