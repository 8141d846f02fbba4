<?php

namespace App\Command;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Command\LockableTrait;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Input\InputOption;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Lock\LockFactory;

/** A command that must not run twice at once, locked with Symfony's LockableTrait. */
final class ReportCommand extends Command
{
    use LockableTrait;

    public function __construct(LockFactory $lockFactory, private readonly string $varDir, private readonly string $prefix)
    {
        parent::__construct('app:report');
        // Symfony 7's trait locks with the factory in this property (the framework's,
        // so the bridge's); 5.4's and 6.4's have none and make a SemaphoreStore of their own.
        if (property_exists($this, 'lockFactory')) {
            $this->lockFactory = $lockFactory;
        }
    }

    protected function configure(): void
    {
        $this->addOption('hold', null, InputOption::VALUE_NONE, 'run until a line (or the end of input) arrives on stdin');
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        if (!$this->lock($this->prefix . 'report')) {
            $output->writeln('The command is already running in another process.');
            return Command::FAILURE;
        }
        $output->writeln('running');
        if ($input->getOption('hold')) {
            fgets(STDIN);
        }
        file_put_contents($this->varDir . '/report.log', 'report ' . getmypid() . "\n", FILE_APPEND | LOCK_EX);
        $this->release();
        return Command::SUCCESS;
    }
}
