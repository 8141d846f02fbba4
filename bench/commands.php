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

/**
 * Per command, from INFO commandstats: [calls, µs], the bench's own left out as in
 * command_count(). A script's µs include the commands it ran, which have their own
 * rows too: summing every row counts those twice, so time_in_commands() does not.
 *
 * @return array<string, array{0: int, 1: int}>
 */
function command_detail(string $info): array
{
    preg_match_all('/^cmdstat_([a-z|]+):calls=(\d+),usec=(\d+)/m', $info, $m);
    $out = [];
    foreach ($m[1] as $i => $name) {
        if ($name === 'config|resetstat' || $name === 'info' || $name === 'script|flush') { continue; }
        $out[$name] = [(int) $m[2][$i], (int) $m[3][$i]];
    }
    return $out;
}

/**
 * The µs a server spent running what clients sent: the scripts (their commands
 * included) and every command that no script of the bench's runs. $inScripts names
 * the commands that only scripts send in this bench; commandstats cannot tell a
 * script's SET from a client's, so a command both send is counted whole.
 */
function time_in_commands(array $detail, array $inScripts): int
{
    $us = 0;
    foreach ($detail as $name => [$calls, $usec]) {
        if (!in_array($name, $inScripts, true)) { $us += $usec; }
    }
    return $us;
}
