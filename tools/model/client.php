<?php
// One client process of the model test (tools/model/run.php starts 3 or 4 of them
// and an observer, with proc_open). It reads one JSON line per request on stdin and
// answers each with one JSON line on stdout:
//   {"op":"call","o":NAME,"spec":SPEC,"m":METHOD,"a":[ARGS]}  -> {"r":VALUE} | {"x":CLASS,"msg":TEXT}
//   {"op":"batch","calls":[{"o":..,"spec":..,"m":..,"a":..},...]} -> {"rs":[answer,...]}
//   {"op":"quit"}
// An object is made the first time its NAME is used, from SPEC:
//   ["Lock", key, timeOut, lockOut, options] | ["MultiLock", keys, timeOut, lockOut, options]
//   | ["Semaphore", key, permits, timeOut, lockOut, options]
// and kept until the process ends. Values travel as codec.php says. With
// `--async` (run.php --async), each wait (addLock, addReadLock, a semaphore's
// acquire) runs as its async twin, driven through its LockWait's stream as an event
// loop drives it: the model's answers are the blocking calls'.
declare(strict_types=1);

// Warnings (a release found lost) go to stderr: stdout carries only the answers.
ini_set('display_errors', 'stderr');
require_once __DIR__ . '/codec.php';

$objects = [];
// --async=FILE: a line is appended to FILE for each wait driven that way (run.php counts them).
$async = null;
foreach ($argv as $arg) { if (str_starts_with($arg, '--async=')) { $async = substr($arg, 8); } }

/** The async twin of a waiting method, if it has one. */
const TWINS = ['addLock' => 'addLockAsync', 'addReadLock' => 'addReadLockAsync', 'acquire' => 'acquireAsync'];

function make(array $spec): object {
    $spec = dec($spec);
    return match ($spec[0]) {
        'Lock' => new Lock($spec[1], $spec[2], $spec[3], $spec[4]),
        'MultiLock' => new MultiLock($spec[1], $spec[2], $spec[3], $spec[4]),
        'Semaphore' => new Semaphore($spec[1], $spec[2], $spec[3], $spec[4], $spec[5]),
    };
}

function call(array $req): array {
    global $objects, $async;
    try {
        $o = $objects[$req['o']] ??= make($req['spec']);
        $args = array_map('dec', $req['a'] ?? []);
        if ($async !== null && isset(TWINS[$req['m']])) {
            $w = $o->{TWINS[$req['m']]}(...$args);
            file_put_contents($async, ($w->isDone() ? "done\n" : "pending\n"), FILE_APPEND);
            while (!$w->poll()) {
                $r = [$w->stream()];
                $x = $y = null;
                stream_select($r, $x, $y, 1, 0);
            }
            return ['r' => enc($w->result())];
        }
        $r = $o->{$req['m']}(...$args);
        return ['r' => enc($r)];
    } catch (Throwable $e) {
        return ['x' => get_class($e), 'msg' => $e->getMessage()];
    }
}

while (($line = fgets(STDIN)) !== false) {
    $req = json_decode($line, true);
    if (!is_array($req) || ($req['op'] ?? '') === 'quit') { break; }
    $out = match ($req['op']) {
        'call' => call($req),
        'batch' => ['rs' => array_map('call', $req['calls'])],
        default => ['x' => 'Protocol', 'msg' => 'unknown op'],
    };
    fwrite(STDOUT, json_encode($out, JSON_PRESERVE_ZERO_FRACTION) . "\n");
}
