<?php
// Uncontended acquire+release: this extension against the article's class on
// phpredis, interleaved in one run so both see the same machine.
// Usage: php ... bench/uncontended.php [cycles]   (REDIS_LOCK_TEST_DSN or REDIS_LOCK_DSN picks Redis)
require __DIR__ . '/ArticleLock.php';

$dsn = getenv('REDIS_LOCK_DSN') ?: getenv('REDIS_LOCK_TEST_DSN') ?: 'redis://127.0.0.1:6379';
$u = parse_url($dsn);
$cycles = (int) ($argv[1] ?? 20000);
$rounds = 5;

function cpu_us(): float {
    $r = getrusage();
    return $r['ru_utime.tv_sec'] * 1e6 + $r['ru_utime.tv_usec'] + $r['ru_stime.tv_sec'] * 1e6 + $r['ru_stime.tv_usec'];
}

function measure(callable $cycle, int $n): array {
    $c0 = cpu_us(); $t0 = hrtime(true);
    for ($i = 0; $i < $n; $i++) { $cycle(); }
    return [(hrtime(true) - $t0) / 1e3 / $n, (cpu_us() - $c0) / $n];
}

$native = new Lock('bench:native', 0, 10, ['dsn' => $dsn]);
$plain = new Lock('bench:plain', 0, 10, ['dsn' => $dsn, 'fencing' => false]);
$renewed = new Lock('bench:renewed', 0, 10, ['dsn' => $dsn, 'auto_renew' => true]);
$article = new ArticleLock('bench:article', 0, 10, $u['host'], $u['port']);
// One acquire+release on a Lock kept across cycles.
$cycle = fn(Lock $l) => function () use ($l) {
    $t = $l->addLock();
    if ($t === false || !$l->releaseLock($t)) { throw new Exception('native cycle failed'); }
};
$cases = [
    'native: one object' => $cycle($native),
    'native, fencing off' => $cycle($plain),
    'native, auto_renew' => $cycle($renewed),
    'article: one object' => function () use ($article) {
        $t = $article->addLock();
        if ($t === false || !$article->releaseLock1($t)) { throw new Exception('article cycle failed'); }
    },
    'native: new object per cycle' => function () use ($dsn) {
        $l = new Lock('bench:native2', 0, 10, ['dsn' => $dsn]);
        $t = $l->addLock();
        if ($t === false || !$l->releaseLock($t)) { throw new Exception('native cycle failed'); }
    },
    'article: new object per cycle' => function () use ($u) {
        $l = new ArticleLock('bench:article2', 0, 10, $u['host'], $u['port']);
        $t = $l->addLock();
        if ($t === false || !$l->releaseLock1($t)) { throw new Exception('article cycle failed'); }
    },
];
$results = [];
foreach ($cases as $name => $fn) { measure($fn, 500); }           // warm up
for ($r = 0; $r < $rounds; $r++) {                                 // interleave the cases
    foreach ($cases as $name => $fn) {
        $n = str_contains($name, 'new object') ? intdiv($cycles, 4) : $cycles;
        [$wall, $cpu] = measure($fn, $n);
        $results[$name]['wall'][] = $wall;
        $results[$name]['cpu'][] = $cpu;
    }
}
$median = function (array $xs) { sort($xs); return $xs[intdiv(count($xs), 2)]; };
printf("%-32s %14s %16s\n", 'uncontended acquire+release', 'wall µs/cycle', 'client CPU µs/cycle');
foreach ($results as $name => $r) {
    $results[$name] = ['wall' => $median($r['wall']), 'cpu' => $median($r['cpu'])];
    printf("%-32s %14.1f %16.1f\n", $name, $results[$name]['wall'], $results[$name]['cpu']);
}
foreach (['one object', 'new object per cycle'] as $shape) {
    $n = $results["native: $shape"]; $a = $results["article: $shape"];
    printf("ratio native/article, %-22s wall %.2fx   CPU %.2fx\n", "$shape:", $n['wall'] / $a['wall'], $n['cpu'] / $a['cpu']);
}
foreach (['native, fencing off', 'native, auto_renew'] as $variant) {
    $n = $results[$variant]; $a = $results['article: one object'];
    printf("ratio %s/article, %-9s wall %.2fx   CPU %.2fx\n", $variant, 'one object:', $n['wall'] / $a['wall'], $n['cpu'] / $a['cpu']);
}
printf("(median of %d interleaved rounds of %d cycles; Redis at %s)\n", $rounds, $cycles, $dsn);
