<?php

namespace App\Scheduler;

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Scheduler\RecurringMessage;
use Symfony\Component\Scheduler\Schedule;
use Symfony\Component\Scheduler\ScheduleProviderInterface;

/**
 * The schedule NAME: a Tick every second, on whole seconds (counted from the epoch,
 * so that every worker's ticks fall on the same instants), locked by the lock
 * "scheduler:NAME" when a lock factory is given.
 */
final class TickSchedule implements ScheduleProviderInterface
{
    private ?Schedule $schedule = null;

    public function __construct(private readonly string $name, private readonly ?LockFactory $locks, private readonly string $prefix)
    {
    }

    public function getSchedule(): Schedule
    {
        if ($this->schedule === null) {
            $this->schedule = (new Schedule())->add(RecurringMessage::every('1 second', new TickMessages(), new \DateTimeImmutable('@0')));
            if ($this->locks !== null) {
                $this->schedule->lock($this->locks->createLock($this->prefix . 'scheduler:' . $this->name));
            }
        }
        return $this->schedule;
    }
}
