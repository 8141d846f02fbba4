<?php
// What the benches count on a server: the commands it ran.

/**
 * The commands a server ran, from its INFO commandstats: those run inside scripts
 * included (commandstats does not tell them apart), the bench's own INFO, CONFIG
 * RESETSTAT and SCRIPT FLUSH left out.
 */
function command_count(string $info): int
{
    preg_match_all('/^cmdstat_([a-z|]+):calls=(\d+)/m', $info, $m);
    $server = 0;
    foreach ($m[1] as $i => $name) {
        if ($name === 'config|resetstat' || $name === 'info' || $name === 'script|flush') { continue; }
        $server += (int) $m[2][$i];
    }
    return $server;
}

/** The scripts a server ran (EVAL, EVALSHA): each one a round trip of a client's. */
function script_count(string $info): int
{
    preg_match_all('/^cmdstat_(eval|evalsha|eval_ro|evalsha_ro):calls=(\d+)/m', $info, $m);
    return array_sum(array_map('intval', $m[2]));
}

/** The CPU seconds a server has used (INFO cpu: user and system, its main thread's included). */
function server_cpu(string $info): float
{
    preg_match_all('/^used_cpu_(?:user|sys):([0-9.]+)/m', $info, $m);
    return array_sum(array_map('floatval', $m[1]));
}
