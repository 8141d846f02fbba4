<?php

namespace App\Console\Commands;

use Illuminate\Console\Command;
use Illuminate\Support\Facades\Cache;

/**
 * Takes, waits for and releases one cache lock as told on stdin, one word a line:
 * "take" (get(), answers "held" or "busy"), "wait" (answers "waiting", then block(5),
 * then "woke <microtime>"), "release" ("released <microtime of the call>").
 */
class LockAgent extends Command
{
    protected $signature = 'app:lock-agent {store} {name}';
    protected $description = 'Hold and wait for a cache lock';

    public function handle(): int
    {
        $store = Cache::store($this->argument('store'));
        $lock = null;
        while (($line = fgets(STDIN)) !== false) {
            switch (trim($line)) {
                case 'take':
                    $lock = $store->lock($this->argument('name'), 30);
                    $this->line($lock->get() ? 'held' : 'busy');
                    break;
                case 'wait':
                    $lock = $store->lock($this->argument('name'), 30);
                    $this->line('waiting');
                    $lock->block(5);
                    $this->line('woke ' . microtime(true));
                    break;
                case 'release':
                    $t = microtime(true);
                    $lock->release();
                    $this->line("released $t");
                    break;
            }
        }
        return 0;
    }
}
