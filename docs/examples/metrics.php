<?php
// The scrape endpoint for Prometheus: the lock metrics of the whole pool this request
// runs in (every php-fpm worker, every Apache child), in Prometheus's text format.
// Serve it on a path only the scraper reaches: lock names can say what the site does.
header('Content-Type: text/plain; version=0.0.4; charset=utf-8');
echo redis_lock_metrics_text();
