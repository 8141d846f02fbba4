<?php
// The endpoints of tools/test/test-frankenphp.sh, shared by the classic script
// (index.php, one PHP request per HTTP request) and the worker script (worker.php,
// many HTTP requests inside one PHP request). The server is the INI's
// redis_lock.dsn; redis_lock_test.dir (a php.ini value of the test's) is where
// the counter files and the event log go.

function rl_dir(): string
{
    return (string) get_cfg_var('redis_lock_test.dir');
}

/** Appends a line to the event log (worker boots and ends), with this process's pid. */
function rl_log(string $line): void
{
    file_put_contents(rl_dir() . '/events', getmypid() . " $line\n", FILE_APPEND | LOCK_EX);
}

/** Keeps a Lock object alive past the function, as a script that forgets to release does. */
function rl_keep(Lock $l): void
{
    $GLOBALS['rl_kept'][] = $l;
}

/** Waits for $w as an event loop would: stream_select() on its stream, then poll(). */
function rl_wait_async(LockWait $w)
{
    while (!$w->poll()) {
        $r = [$w->stream()];
        $x = $y = null;
        stream_select($r, $x, $y, 1, 0);
    }
    return $w->result();
}

/** Answers one request: $q is its query ($_GET). */
function rl_route(array $q): void
{
    $key = (string) ($q['key'] ?? '');
    switch ($q['do'] ?? '') {
        case 'info':
            echo php_sapi_name(), ' ', PHP_VERSION, PHP_ZTS ? ' zts' : ' nts',
                extension_loaded('redis_lock') ? ' redis_lock' : ' -', ' ', getmypid(), "\n";
            return;
        case 'hello':
            echo "hello\n";
            return;
        case 'own':
            // An uncontended cycle on a key of this request's own.
            $l = new Lock('fp:own:' . bin2hex(random_bytes(8)), 0, 30);
            $t = $l->addLock();
            echo $t !== false && $l->releaseLock($t) ? "ok\n" : "failed\n";
            return;
        case 'counter':
            // A read-increment-write of a file that loses updates unless one lock
            // serializes it (nolock: the control; async: the lock waited for through
            // its LockWait's stream, as an event loop does).
            $locked = !isset($q['nolock']);
            $file = rl_dir() . ($locked ? '/counter' : '/counter-control');
            $l = new Lock('fp:counter', 10, 30);
            $t = !$locked ? 'none' : (isset($q['async']) ? rl_wait_async($l->addLockAsync()) : $l->addLock());
            if ($t === false) {
                http_response_code(503);
                echo "timeout\n";
                return;
            }
            $n = (int) file_get_contents($file);
            usleep(200);
            file_put_contents($file, (string) ($n + 1));
            if ($locked && !$l->releaseLock($t)) {
                http_response_code(500);
                echo "lost\n";
                return;
            }
            echo "ok\n";
            return;
        case 'take':
            // Taken and never released by the script (keep: auto_release => false).
            $l = new Lock($key, 0, 300, ['auto_release' => !isset($q['keep'])]);
            $t = $l->addLock();
            rl_keep($l);
            echo $t === false ? "busy\n" : "$t\n";
            return;
        case 'release':
            $l = new Lock($key, 0, 300);
            echo $l->releaseLock((string) ($q['token'] ?? '')) ? "released\n" : "not held\n";
            return;
        case 'long':
            // Held 2.5 s while other threads' requests start and end.
            $l = new Lock($key, 0, 30);
            $t = $l->addLock();
            if ($t === false) {
                echo "busy\n";
                return;
            }
            usleep(2500000);
            echo $l->isOwned($t) && $l->releaseLock($t) ? "kept\n" : "lost\n";
            return;
        case 'stale':
            // A Lock object kept from an earlier request of this PHP request (a
            // worker's earlier handled request): its hold ended with that request.
            static $previous = null;
            echo $previous === null ? 'first' : ($previous[0]->releaseLock($previous[1]) ? 'previous released' : 'previous gone'), "\n";
            $l = new Lock('fp:stale:' . bin2hex(random_bytes(8)), 0, 300);
            $previous = [$l, $l->addLock()];
            return;
        case 'fatal':
            $l = new Lock($key, 0, 300);
            $l->addLock();
            rl_keep($l);
            undefined_function_called_on_purpose();
            return;
        case 'timeout':
            // Past max_execution_time while holding: a fatal error from PHP's
            // per-thread timer (CPU time, so the loop spins).
            set_time_limit(1);
            $l = new Lock($key, 0, 300);
            $l->addLock();
            rl_keep($l);
            $x = '';
            $end = microtime(true) + 5;
            while (microtime(true) < $end) {
                $x = md5($x);
            }
            echo "finished\n";
            return;
        case 'stats':
            echo json_encode(redis_lock_stats(isset($q['reset']))), "\n";
            return;
        default:
            http_response_code(404);
            echo "no such endpoint\n";
    }
}
