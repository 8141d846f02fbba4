<?php
// FrankenPHP's classic mode: each HTTP request is a PHP request.
require __DIR__ . '/_lib.php';
rl_route($_GET);
