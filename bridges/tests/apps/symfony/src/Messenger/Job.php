<?php

namespace App\Messenger;

final class Job
{
    public function __construct(public readonly string $name)
    {
    }
}
