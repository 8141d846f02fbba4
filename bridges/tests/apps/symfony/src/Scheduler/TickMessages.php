<?php

namespace App\Scheduler;

use Symfony\Component\Scheduler\Generator\MessageContext;
use Symfony\Component\Scheduler\Trigger\MessageProviderInterface;

/** Each run's Tick carries its schedule and the instant it was due, to tell runs apart. */
final class TickMessages implements MessageProviderInterface
{
    public function getMessages(MessageContext $context): iterable
    {
        yield new Tick($context->name, $context->triggeredAt->format('U.u'));
    }

    public function getId(): string
    {
        return 'tick';
    }
}
