<?php

namespace App\Command;

use Symfony\Component\Console\Command\Command;
use Symfony\Component\Console\Input\InputArgument;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpKernel\KernelInterface;

/**
 * As a person with the web profiler does, through the application's HTTP kernel: GET
 * PATH (the page's response ends with kernel.terminate, which saves its profile), then
 * GET the profile's Locks panel, /_profiler/TOKEN?panel=redis_lock, and its toolbar,
 * /_wdt/TOKEN. Prints "token: …", then the panel's HTML after a "--- panel" line and
 * the toolbar's after "--- toolbar".
 */
final class ProfileRequestCommand extends Command
{
    public function __construct(private readonly KernelInterface $kernel)
    {
        parent::__construct('app:profile-request');
    }

    protected function configure(): void
    {
        $this->addArgument('path', InputArgument::REQUIRED);
    }

    protected function execute(InputInterface $input, OutputInterface $output): int
    {
        $request = Request::create($input->getArgument('path'));
        $response = $this->kernel->handle($request);
        $this->kernel->terminate($request, $response);
        $token = (string) $response->headers->get('X-Debug-Token');
        $output->writeln("token: $token");
        foreach (['panel' => "/_profiler/$token?panel=redis_lock", 'toolbar' => "/_wdt/$token"] as $what => $path) {
            $page = $this->kernel->handle(Request::create($path));
            $output->writeln("--- $what " . $page->getStatusCode());
            $output->writeln((string) $page->getContent());
        }
        return Command::SUCCESS;
    }
}
