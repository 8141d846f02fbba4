<?php

namespace App\Command;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpKernel\KernelInterface;
use Symfony\Component\Lock\LockFactory;

/**
 * Takes and releases the lock NAME through the factory the framework autowires, then
 * sends GET /metrics through the application's HTTP kernel (its routing, the bridge's
 * MetricsController) in this same process, and prints the response's status, its
 * Content-Type and its body.
 */
final class MetricsRequestCommand extends Command
{
    public function __construct(
        private readonly LockFactory $locks,
        private readonly KernelInterface $kernel,
        private readonly string $prefix,
    ) {
        parent::__construct('app:metrics-request');
    }

    protected function configure(): void
    {
        $this->addArgument('name', InputArgument::REQUIRED);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $lock = $this->locks->createLock($this->prefix . $input->getArgument('name'), 30);
        $lock->acquire();
        $lock->release();
        $response = $this->kernel->handle(Request::create('/metrics'));
        $output->writeln((string) $response->getStatusCode());
        $output->writeln((string) $response->headers->get('Content-Type'));
        $output->write((string) $response->getContent());
        return Command::SUCCESS;
    }
}
