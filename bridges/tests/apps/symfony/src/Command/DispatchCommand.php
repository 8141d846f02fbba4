<?php

namespace App\Command;

use App\Messenger\Job;
use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Messenger\MessageBusInterface;
use Symfony\Component\Messenger\Stamp\DeduplicateStamp;
use Symfony\Component\Messenger\Stamp\SentStamp;

/**
 * Dispatches Job(NAME) with a DeduplicateStamp (Messenger 7.3+) on the lock "job:NAME",
 * held for 60 s or until a worker has handled it; reports "queued" or "deduplicated".
 */
final class DispatchCommand extends Command
{
    public function __construct(private readonly MessageBusInterface $bus, private readonly string $prefix)
    {
        parent::__construct('app:dispatch');
    }

    protected function configure(): void
    {
        $this->addArgument('name', InputArgument::REQUIRED);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        if (!class_exists(DeduplicateStamp::class)) {
            $output->writeln('This Messenger has no DeduplicateStamp (Symfony 7.3+).');
            return Command::INVALID;
        }
        $name = $input->getArgument('name');
        $envelope = $this->bus->dispatch(new Job($name), [new DeduplicateStamp($this->prefix . 'job:' . $name, 60)]);
        // DeduplicateMiddleware returns the envelope unsent when the lock was taken.
        $output->writeln($envelope->last(SentStamp::class) ? 'queued' : 'deduplicated');
        return Command::SUCCESS;
    }
}
