<?php
// MultiLock under load, on a throwaway server:
//  1. 8 processes take random 3-key subsets of 10 keys (in shuffled order), SECTIONS
//     times each, a non-atomic GET/SET increment of each key's counter held inside:
//     sections/s, lost updates, waits that timed out (none may), keys left after.
//     Beside it, the same work with three Locks taken one after another in the
//     order given (the way PHP code does it today), which can wait on each other
//     in a circle until a timeout: 100 sections a process, waits of 0.5 s (each
//     circle costs a whole wait).
//  2. A stream of Lock holders on one key (3 processes, 20 ms holds, over and over):
//     how long a MultiLock for {a, b} waits, against a Lock for a alone in the same
//     stream. This is the fairness bound docs/multilock.md states.
// Usage: php -d extension=... bench/multilock.php [SECTIONS] (default 1000)
require __DIR__ . '/../php-tests/_helper.inc';

$sections = (int) ($argv[1] ?? 1000);
$srv = rl_start_redis();
$dsn = $srv['dsn'];
function pct(array $xs, float $p): float { sort($xs); return $xs ? $xs[min(count($xs) - 1, (int) floor($p * count($xs)))] : NAN; }

try {
    echo "| 8 processes, random 3 of 10 keys | sections a process | sections/s | lost updates | waits timed out | keys left |\n|---|---|---|---|---|---|\n";
    foreach (['MultiLock' => true, 'three Locks, one after another' => false] as $label => $multi) {
        $n = $multi ? $sections : min($sections, 100);
        $wait = $multi ? 2.0 : 0.5;
        $base = 'bench:ml:' . bin2hex(random_bytes(4));
        $keys = array_map(fn($i) => "$base:k$i", range(0, 9));
        $dir = sys_get_temp_dir() . '/rl-ml-' . getmypid();
        @mkdir($dir);
        $t0 = microtime(true);
        rl_fork(8, function ($w) use ($dsn, $keys, $n, $wait, $multi, $dir) {
            mt_srand(7000 + $w);
            $done = $timeouts = 0;
            $count = array_fill_keys($keys, 0);
            for ($i = 0; $i < $n; $i++) {
                $pick = array_rand(array_flip($keys), 3);
                shuffle($pick);
                if ($multi) {
                    $l = new MultiLock($pick, $wait, 5, ['dsn' => $dsn]);
                    if ($l->addLock() === false) { $timeouts++; continue; }
                    $held = [$l];
                } else {
                    $held = [];
                    foreach ($pick as $k) {
                        $one = new Lock($k, $wait, 5, ['dsn' => $dsn]);
                        if ($one->addLock() === false) { $timeouts++; break; }
                        $held[] = $one;
                    }
                    if (count($held) < 3) { foreach ($held as $h) { $h->releaseLock(); } continue; }
                }
                foreach ($pick as $k) {
                    rl_cmd($dsn, 'SET', "$k:n", (string) ((int) rl_cmd($dsn, 'GET', "$k:n") + 1));
                    $count[$k]++;
                }
                foreach ($held as $h) { $h->releaseLock(); }
                $done++;
            }
            file_put_contents("$dir/$w.json", json_encode(['done' => $done, 'timeouts' => $timeouts, 'count' => $count]));
            return 0;
        });
        $secs = microtime(true) - $t0;
        $done = $timeouts = 0;
        $want = array_fill_keys($keys, 0);
        foreach (glob("$dir/*.json") as $f) {
            $r = json_decode(file_get_contents($f), true);
            $done += $r['done'];
            $timeouts += $r['timeouts'];
            foreach ($r['count'] as $k => $c) { $want[$k] += $c; }
            unlink($f);
        }
        @rmdir($dir);
        $lost = 0;
        $left = 0;
        foreach ($keys as $k) {
            $lost += $want[$k] - (int) rl_cmd($dsn, 'GET', "$k:n");
            foreach ([$k, "{{$k}}:queue", "{{$k}}:readers", "{{$k}}:owner"] as $x) { $left += rl_cmd($dsn, 'EXISTS', $x); }
        }
        printf("| %s | %d | %.0f | %d | %d | %d |\n", $label, $n, $done / $secs, $lost, $timeouts, $left);
    }

    // 2. A stream of Lock holders on a.
    $a = 'bench:ml:a:' . bin2hex(random_bytes(4));
    $b = 'bench:ml:b:' . bin2hex(random_bytes(4));
    $stop = sys_get_temp_dir() . '/rl-ml-stop-' . getmypid();
    $pids = [];
    for ($w = 0; $w < 3; $w++) {
        $pid = pcntl_fork();
        if ($pid === 0) {
            $l = new Lock($a, 5, 5, ['dsn' => $dsn]);
            while (!file_exists($stop)) { if ($l->addLock() !== false) { usleep(20000); $l->releaseLock(); } }
            exit(0);
        }
        $pids[] = $pid;
    }
    usleep(200000);
    $waits = ['MultiLock for {a, b}' => [], 'Lock for a' => []];
    for ($i = 0; $i < 40; $i++) {
        foreach (array_keys($waits) as $label) {
            $l = $label === 'Lock for a' ? new Lock($a, 5, 5, ['dsn' => $dsn]) : new MultiLock([$a, $b], 5, 5, ['dsn' => $dsn]);
            $s = microtime(true);
            $t = $l->addLock();
            $waits[$label][] = $t === false ? INF : (microtime(true) - $s) * 1000;
            $l->releaseLock();
            usleep(30000);
        }
    }
    touch($stop);
    foreach ($pids as $pid) { pcntl_waitpid($pid, $st); }
    unlink($stop);
    echo "\n| beside 3 Lock holders of a (20 ms holds, over and over), 40 tries each | wait min | p50 | p99 | max |\n|---|---|---|---|---|\n";
    foreach ($waits as $label => $w) {
        printf("| %s | %.1f ms | %.1f ms | %.1f ms | %.1f ms |\n", $label, min($w), pct($w, 0.5), pct($w, 0.99), max($w));
    }
} finally {
    rl_stop_redis($srv);
}
