<?php

namespace App\Command;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Semaphore\SemaphoreFactory;

/**
 * Takes a lock and a semaphore (limit 1) named NAME from the factories the framework
 * autowires, reports "lock: held|busy" and "semaphore: held|busy", and keeps what it
 * got until a line or the end of input arrives on stdin.
 */
final class HoldCommand extends Command
{
    public function __construct(
        private readonly LockFactory $locks,
        private readonly SemaphoreFactory $semaphores,
        private readonly string $prefix,
    ) {
        parent::__construct('app:hold');
    }

    protected function configure(): void
    {
        $this->addArgument('name', InputArgument::REQUIRED);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $name = $this->prefix . $input->getArgument('name');
        $lock = $this->locks->createLock($name, 30);
        $semaphore = $this->semaphores->createSemaphore($name . ':semaphore', 1, 1, 30);
        $locked = $lock->acquire();
        $entered = $semaphore->acquire();
        $output->writeln('lock: ' . ($locked ? 'held' : 'busy'));
        $output->writeln('semaphore: ' . ($entered ? 'held' : 'busy'));
        if (!$locked || !$entered) {
            return Command::FAILURE;
        }
        fgets(STDIN);
        $lock->release();
        $semaphore->release();
        $output->writeln('released');
        return Command::SUCCESS;
    }
}
