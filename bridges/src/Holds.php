<?php

namespace RedisLock\Bridge;

/**
 * The holds this process took through a bridge and still has, released if the
 * script dies of a fatal error.
 *
 * Frameworks let a lock outlive the objects that took it (Symfony's autoRelease =
 * false, a serialised key, Laravel's restoreLock()), so the bridges take every hold
 * with the extension's auto-release off. What the extension would still do, and the
 * frameworks' own stores do not, is free a lock whose script died of a fatal error,
 * an uncaught exception or a timeout midway: that is this table's job. A hold handed
 * to another process (a serialised key) leaves the table; so does a released one.
 * State is per request (php-fpm included) and a forked child never releases its
 * parent's holds.
 *
 * @internal
 */
final class Holds
{
    private const FATAL = \E_ERROR | \E_PARSE | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR | \E_RECOVERABLE_ERROR;
    /** Above this many holds, those whose lease has ended are swept out. */
    private const SWEEP_AT = 1024;

    /** @var array<string, array{\Closure(): mixed, float}> release and lease end, by hold id */
    private static array $holds = [];
    private static ?int $pid = null;
    /** The next sweep's size: twice what the last one left, so sweeps stay amortised. */
    private static int $sweepAt = self::SWEEP_AT;

    /** Records a hold; $lease in seconds (INF: none). */
    public static function add(string $id, float $lease, \Closure $release): void
    {
        if (self::$pid !== \getmypid()) {
            // First hold of this request, or of this forked child: its own table.
            self::$holds = [];
            self::$sweepAt = self::SWEEP_AT;
            self::$pid = \getmypid();
            \register_shutdown_function([self::class, 'atShutdown']);
        }
        unset(self::$holds[$id]);
        self::$holds[$id] = [$release, \microtime(true) + $lease];
        if (\count(self::$holds) > self::$sweepAt) {
            $now = \microtime(true);
            self::$holds = \array_filter(self::$holds, static fn(array $h): bool => $h[1] > $now);
            self::$sweepAt = \max(self::SWEEP_AT, 2 * \count(self::$holds));
        }
    }

    /** A recorded hold's new lease, in seconds from now (a hold not recorded stays so). */
    public static function extend(string $id, float $lease): void
    {
        if (isset(self::$holds[$id])) {
            self::$holds[$id][1] = \microtime(true) + $lease;
        }
    }

    /** Forgets a hold: released, or handed to another process. */
    public static function forget(string $id): void
    {
        unset(self::$holds[$id]);
    }

    /** @internal the shutdown function: releases what a fatal error left. */
    public static function atShutdown(): void
    {
        $error = \error_get_last();
        if ($error !== null && ($error['type'] & self::FATAL)) {
            self::releaseAll();
        }
    }

    /**
     * Releases every hold this process still has, as a fatal error does: for a process
     * about to die without running its shutdown functions (a queue worker killing
     * itself at a job's timeout). Redis being unreachable is ignored: the leases end them.
     */
    public static function releaseAll(): void
    {
        if (self::$pid !== \getmypid()) {
            return;   // a forked child's table is its own, and holds nothing yet
        }
        $holds = self::$holds;
        self::$holds = [];
        foreach ($holds as [$release]) {
            try {
                $release();
            } catch (\Throwable) {
                // Redis unreachable: the lease ends the hold.
            }
        }
    }
}
