<?php

namespace RedisLock\Bridge\Symfony\Profiler;

use Symfony\Component\EventDispatcher\EventSubscriberInterface;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\HttpKernel\DataCollector\DataCollector;
use Symfony\Component\HttpKernel\DataCollector\LateDataCollectorInterface;
use Symfony\Component\HttpKernel\Event\RequestEvent;
use Symfony\Component\HttpKernel\KernelEvents;

/**
 * The web profiler's "Locks" panel: every acquisition of the request (through the
 * bridge's stores or the extension's classes directly), with how long it waited, how
 * it ended and how long the hold lasted, from the extension's request journal
 * (redis_lock_journal()). Set up in docs/symfony.md ("The profiler panel").
 */
final class LockCollector extends DataCollector implements LateDataCollectorInterface, EventSubscriberInterface
{
    /** The panel's templates, for Twig's `paths` under the RedisLock namespace. */
    public const VIEWS = __DIR__ . '/../Resources/views';

    public static function getSubscribedEvents(): array
    {
        // Before the firewall and the controllers, which may take locks.
        return [KernelEvents::REQUEST => ['start', 4096]];
    }

    public function start(RequestEvent $event): void
    {
        if ($event->isMainRequest()) {
            redis_lock_journal_start();
        }
    }

    public function collect(Request $request, Response $response, ?\Throwable $exception = null): void
    {
        $this->lateCollect();
    }

    /** At the profile's save (kernel.terminate): holds released after the response count too. */
    public function lateCollect(): void
    {
        $entries = [];
        foreach (redis_lock_journal() as $e) {
            $e['name'] = preg_match('//u', $e['name']) ? $e['name'] : 'hex:' . bin2hex($e['name']);
            $entries[] = $e;
        }
        $this->data = ['entries' => $entries];
    }

    public function getName(): string
    {
        return 'redis_lock';
    }

    public function reset(): void
    {
        $this->data = [];
    }

    /** @return list<array<string, mixed>> */
    public function getEntries(): array
    {
        return $this->data['entries'] ?? [];
    }

    public function getCount(): int
    {
        return \count($this->getEntries());
    }

    public function getAcquired(): int
    {
        return \count(array_filter($this->getEntries(), fn($e) => $e['outcome'] === 'acquired'));
    }

    /** Seconds all acquisitions waited. */
    public function getWaited(): float
    {
        return array_sum(array_column($this->getEntries(), 'waited'));
    }

    /** Seconds all ended holds lasted. */
    public function getHeld(): float
    {
        return array_sum(array_filter(array_column($this->getEntries(), 'held'), 'is_float'));
    }

    /** Acquisitions that did not get the lock: busy at their deadline, or an error. */
    public function getFailed(): int
    {
        return $this->getCount() - $this->getAcquired();
    }
}
