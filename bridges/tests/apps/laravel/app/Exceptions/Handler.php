<?php

namespace App\Exceptions;

use Illuminate\Foundation\Exceptions\Handler as ExceptionHandler;

/** The framework's handler: reports go to the log (stderr, config/logging.php). */
class Handler extends ExceptionHandler
{
}
