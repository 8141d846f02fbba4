<?php
/**
 * Locks inside PHP Fibers, with no library: a scheduler of a few lines over
 * stream_select() (docs/async.md). A fiber suspends with ['read', $stream] (resumed
 * when it turns readable) or ['sleep', $seconds]; rl_run_fibers() runs them all to
 * their end. php-tests/113-async-fibers-ticker.phpt runs this file.
 */

/** Waits for $w (a LockWait) inside a fiber: the token, or false; throws as addLock() would. */
function rl_await(LockWait $w) {
    while (!$w->poll()) {
        Fiber::suspend(['read', $w->stream()]);
    }
    return $w->result();
}

/** Sleeps inside a fiber, letting the others run. */
function rl_fiber_sleep(float $s): void {
    Fiber::suspend(['sleep', $s]);
}

/** Runs the fibers (callables) until every one has returned; returns their results, by key. */
function rl_run_fibers(array $fns): array {
    $fibers = $waits = $results = [];
    $start = function ($k, Fiber $f, $value = null) use (&$waits, &$results) {
        $what = $f->isStarted() ? $f->resume($value) : $f->start();
        if ($f->isTerminated()) { $results[$k] = $f->getReturn(); unset($waits[$k]); return; }
        $waits[$k] = $what[0] === 'read' ? ['read', $what[1]] : ['sleep', microtime(true) + $what[1]];
    };
    foreach ($fns as $k => $fn) { $fibers[$k] = new Fiber($fn); $start($k, $fibers[$k]); }
    while ($waits) {
        $read = [];
        $next = INF;
        foreach ($waits as $k => [$kind, $x]) {
            if ($kind === 'read') { $read[$k] = $x; } else { $next = min($next, $x); }
        }
        $timeout = $next === INF ? 1.0 : max(0.0, $next - microtime(true));
        if ($read) {
            $r = $read; $w = $e = null;
            $n = stream_select($r, $w, $e, (int) $timeout, (int) (fmod($timeout, 1) * 1e6));
            if ($n === false) { throw new RuntimeException('stream_select failed'); }
            foreach ($r as $k => $_) { $start($k, $fibers[$k]); }
        } elseif ($timeout > 0) {
            usleep((int) ($timeout * 1e6));
        }
        $now = microtime(true);
        foreach ($waits as $k => [$kind, $x]) {
            if ($kind === 'sleep' && $x <= $now) { $start($k, $fibers[$k]); }
        }
    }
    return $results;
}

/** synchronized() for a fiber: $fn runs while $lock is held, and the lock is released whatever happens. */
function rl_fiber_synchronized(Lock $lock, callable $fn) {
    $token = rl_await($lock->addLockAsync());
    if ($token === false) {
        throw new LockTimeoutException('could not acquire the lock "' . $lock->getKey() . '" in time');
    }
    try {
        return $fn();
    } finally {
        $lock->releaseLock($token);
    }
}
