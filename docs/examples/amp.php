<?php
/**
 * Locks inside AMPHP v2 coroutines (Debian's php-amphp-amp): a LockWait becomes a
 * promise, resolved when its stream turns readable and poll() says it has ended
 * (docs/async.md). php-tests/114-async-amphp.phpt runs this file.
 */

// Debian's package: its autoloader loads classes; its functions are files of their own.
require_once '/usr/share/php/Amp/Internal/functions.php';
require_once '/usr/share/php/Amp/functions.php';
require_once '/usr/share/php/Amp/autoload.php';

use Amp\Deferred;
use Amp\Loop;
use Amp\Promise;

/** A promise of what $w's blocking call would return: the token, or false; it fails as that call would throw. */
function rl_amp_wait(LockWait $w): Promise {
    $deferred = new Deferred();
    $settle = function () use ($w, $deferred): bool {
        try {
            if (!$w->poll()) {
                return false;
            }
            $deferred->resolve($w->result());
        } catch (Throwable $e) {
            $deferred->fail($e);
        }
        return true;
    };
    if (!$settle()) {
        Loop::onReadable($w->stream(), function (string $watcher) use ($settle): void {
            if ($settle()) {
                Loop::cancel($watcher);
            }
        });
    }
    return $deferred->promise();
}

/** synchronized() for a coroutine: $fn runs (a generator is a coroutine) while $lock is held. */
function rl_amp_synchronized(Lock $lock, callable $fn): Promise {
    return Amp\call(function () use ($lock, $fn) {
        $token = yield rl_amp_wait($lock->addLockAsync());
        if ($token === false) {
            throw new LockTimeoutException('could not acquire the lock "' . $lock->getKey() . '" in time');
        }
        try {
            return yield Amp\call($fn);
        } finally {
            $lock->releaseLock($token);
        }
    });
}
