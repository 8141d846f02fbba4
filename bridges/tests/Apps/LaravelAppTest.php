<?php

namespace RedisLock\Bridge\Tests\Apps;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Tests\Support;

/**
 * The Laravel application under apps/laravel (Debian's php-laravel-framework, the
 * bridge's redis_lock cache store as the default, a SQLite database queue), driven by
 * real artisan processes: unique jobs, WithoutOverlapping across workers, a worker
 * dying or killed mid-job, schedule:run on two hosts, block() on a release, funnel().
 * Everything a run writes is under a temporary directory and one Redis key prefix,
 * both removed at the end.
 */
final class LaravelAppTest extends TestCase
{
    private const ARTISAN = __DIR__ . '/../apps/laravel/artisan';

    /** The run's directory: SQLite database, storage, the application's journals. */
    private static string $dir;
    /** The run's Redis key prefix (the application's Redis connections add it to every key). */
    private static string $prefix;

    /** @var list<resource> processes this test started, killed if still running at its end */
    private array $procs = [];

    public static function setUpBeforeClass(): void
    {
        Support::needsLaravel();
        self::$dir = sys_get_temp_dir() . '/laravel-app-test.' . bin2hex(random_bytes(6));
        mkdir(self::$dir);
        touch(self::$dir . '/database.sqlite');
        self::$prefix = 'laravel-app-test:' . bin2hex(random_bytes(6)) . ':';
        // The queue's jobs and failed_jobs tables, by the application's own migration.
        [$rc, $out, $err] = self::artisan(['migrate', '--force']);
        if ($rc !== 0) {
            throw new \RuntimeException("artisan migrate failed ($rc): $out$err");
        }
    }

    public static function tearDownAfterClass(): void
    {
        if (!isset(self::$dir)) {
            return;                                     // skipped: nothing was set up
        }
        $redis = Support::redis();
        foreach ([0, 1] as $db) {
            $redis->select($db);
            $keys = $redis->keys(self::$prefix . '*');
            if ($keys) {
                $redis->del($keys);
            }
        }
        Support::removeTree(self::$dir);
    }

    protected function tearDown(): void
    {
        foreach ($this->procs as $proc) {
            if (proc_get_status($proc)['running']) {
                proc_terminate($proc, 9);
            }
            proc_close($proc);
        }
        $this->procs = [];
    }

    public function testUniqueJobRunsOnceUntilDoneOrUniqueForEnds(): void
    {
        $dispatch = static fn(string $name, int $uniqueFor, int $times = 1): string => self::ok(['app:dispatch', 'unique',
            json_encode(array_fill(0, $times, ['job' => 'unique', 'journal' => 'unique', 'name' => $name, 'uniqueFor' => $uniqueFor]))]);
        $ran = fn(string $name): int => count(array_filter(self::journal('unique'), fn(array $r) => $r['name'] === $name));

        // A job still pending when its uniqueFor (2 s) runs out: the same job is accepted
        // again. Dispatched first, so that its 2 s pass while the rest runs; twice by one
        // process, so that the second comes within the 2 s however long a busy machine
        // takes to boot artisan (another process's dispatch is refused below, in 30 s).
        $expiring = 'expiring-' . bin2hex(random_bytes(4));
        $dispatch($expiring, 2, 2);
        $locked = microtime(true);   // its lock was taken before the dispatch returned
        $this->assertSame(1, self::pending('unique'), 'the second dispatch within uniqueFor was refused');

        $name = 'once-' . bin2hex(random_bytes(4));
        $t = microtime(true);
        $out = $dispatch($name, 30);
        $this->assertStringContainsString('lock: RedisLock\Bridge\Laravel\RedisLock', $out, 'the default store\'s locks are the bridge\'s');
        $dispatch($name, 30);
        $this->assertSame(2, self::pending('unique'), 'dispatched twice, queued once');
        // The unique lock: Laravel's key on the store's lock connection (database 0), the
        // owner as its value, uniqueFor as its lease; nothing on the cache connection.
        $keys = self::keys(0, 'laravel_unique_job:', $name);
        $this->assertCount(1, $keys, 'the unique lock\'s key while the job is pending');
        $redis = Support::redis();
        // 30 s less the time since the first dispatch started, measured (two artisan
        // processes booted meanwhile, seconds each on a busy machine).
        $pttl = $redis->pttl($keys[0]);
        $this->assertGreaterThanOrEqual(30000 - (microtime(true) - $t) * 1000 - 1, $pttl, 'uniqueFor as the lease');
        $this->assertLessThanOrEqual(30000, $pttl);
        $this->assertNotSame('', (string) $redis->get($keys[0]));
        $this->assertSame([], self::keys(1, 'laravel_unique_job:', $name));

        // Before the worker: the expiring job's 2 s have passed, so it is accepted again.
        usleep((int) max(0, ($locked + 2.1 - microtime(true)) * 1e6));
        $dispatch($expiring, 2);
        $this->assertSame(3, self::pending('unique'), 'accepted again once its uniqueFor ran out');

        self::work('unique');
        $this->assertSame(1, $ran($name), 'ran once');
        $this->assertSame(2, $ran($expiring), 'both dispatches of the expired unique job ran');
        $this->assertSame(0, self::pending('unique'));
        $this->assertSame([], self::keys(0, 'laravel_unique_job:', $name), 'released when the job finished');

        $dispatch($name, 30);
        $this->assertSame(1, self::pending('unique'), 'accepted again after it finished');
        self::work('unique');
        $this->assertSame(2, $ran($name));
    }

    public function testWithoutOverlappingAcrossTwoWorkers(): void
    {
        $jobs = static fn(string $journal, ?string $key, int $ms): string => json_encode(array_map(
            static fn(int $i) => ['job' => 'slot', 'journal' => $journal, 'label' => "job$i", 'mode' => 'sleep', 'ms' => $ms,
                'key' => $key, 'expireAfter' => 10, 'releaseAfter' => 1],
            range(1, 4),
        ));
        // The control: the same jobs without the middleware do run at once on two workers.
        // Jobs of 1 s: two workers booting one after the other on a busy machine still overlap.
        self::ok(['app:dispatch', 'overlap-free', $jobs('overlap-free', null, 1000)]);
        $workers = [$this->start(['queue:work', '--queue=overlap-free', '--stop-when-empty', '--sleep=0.1']),
            $this->start(['queue:work', '--queue=overlap-free', '--stop-when-empty', '--sleep=0.1'])];
        $log = '';
        foreach ($workers as $w) {
            $this->assertSame(0, self::wait($w['proc'], 20), self::stderr($w));
            $log .= file_get_contents($w['out']) . self::stderr($w);
        }
        $free = self::intervals('overlap-free');
        $this->assertCount(4, $free);
        $this->assertGreaterThanOrEqual(2, self::concurrency($free), 'without the middleware, the two workers overlap: ' . json_encode($free) . $log);

        // Jobs of 1 s here too: four take 4 s or more, so that the second worker, however
        // late a busy machine boots it, still meets one holding the lock.
        self::ok(['app:dispatch', 'overlap', $jobs('overlap', 'shared', 1000)]);
        $workers = [$this->start(['queue:work', '--queue=overlap', '--sleep=0.1', '--max-time=30']),
            $this->start(['queue:work', '--queue=overlap', '--sleep=0.1', '--max-time=30'])];
        // Turned-away jobs come back a second later, so the workers cannot stop when empty.
        $this->until(fn() => count(self::records('overlap', 'end')) >= 4, 20, 'all four jobs ended');
        foreach ($workers as $w) {
            self::stop($w['proc']);
        }
        $serial = self::intervals('overlap');
        $this->assertCount(4, $serial, 'each job ran once');
        $this->assertSame(1, self::concurrency($serial), 'one at a time: ' . json_encode($serial));
        $this->assertGreaterThan(1, max(array_column(self::records('overlap', 'start'), 'attempts')),
            'the middleware turned a job away while another held the lock');
        $this->assertSame([], self::keys(0, 'laravel-queue-overlap:', ':shared'));
    }

    public function testFatalErrorInAJobReleasesWithoutOverlapping(): void
    {
        $jobs = static fn(string $name): string => json_encode([
            ['job' => 'slot', 'journal' => $name, 'label' => 'dies', 'mode' => 'fatal', 'key' => $name, 'expireAfter' => 30, 'releaseAfter' => 1],
            ['job' => 'slot', 'journal' => $name, 'label' => 'next', 'mode' => 'sleep', 'ms' => 10, 'key' => $name, 'expireAfter' => 30, 'releaseAfter' => 1],
        ]);
        // With the bridge: the lock (expireAfter 30 s) is released when its worker dies,
        // and the next job with the same key runs at its first attempt.
        self::ok(['app:dispatch', 'fatal', $jobs('fatal')]);
        [$rc, , $err] = self::artisan(['queue:work', '--queue=fatal', '--once']);
        $died = microtime(true);
        $this->assertSame(255, $rc, $err);
        $this->assertStringContainsString('Allowed memory size', $err);
        $this->assertSame([], self::keys(0, 'laravel-queue-overlap:', ':fatal'), 'released at the fatal error');
        self::ok(['queue:work', '--queue=fatal', '--once']);
        $next = self::records('fatal', 'start', 'next');
        $this->assertCount(1, $next, 'the next job ran');
        $this->assertSame(1, $next[0]['attempts'], 'at its first attempt, not turned away');
        // Before the lock's expireAfter (30 s) would have let it: booting the next
        // worker takes seconds on a busy machine, a lock left behind 30.
        $this->assertLessThan(30.0, $next[0]['t'] - $died, 'before expireAfter');

        // The control, on Laravel's own Redis store: the dead worker's lock stays for its
        // 30 s and the next job is turned away.
        $control = ['REDIS_LOCK_APP_STORE' => 'redis'];
        self::ok(['app:dispatch', 'laravel-fatal', $jobs('laravel-fatal')], $control);
        [$rc, , $err] = self::artisan(['queue:work', '--queue=laravel-fatal', '--once'], $control);
        $this->assertSame(255, $rc, $err);
        $keys = self::keys(0, 'laravel-queue-overlap:', ':laravel-fatal');
        $this->assertCount(1, $keys, 'Laravel\'s own store leaves the lock');
        $this->assertGreaterThan(25000, Support::redis()->pttl($keys[0]));
        self::ok(['queue:work', '--queue=laravel-fatal', '--once'], $control);
        $this->assertSame([], self::records('laravel-fatal', 'start', 'next'), 'turned away while the dead worker\'s lock stays');
    }

    public function testKilledWorkerHoldsWithoutOverlappingUntilExpireAfter(): void
    {
        // laravel/framework#37060: a worker killed mid-job cannot release the lock; with
        // expireAfter (8 s) the next job runs once it ends, not before, and not never.
        // Both jobs are queued first, and the second worker started as soon as the first
        // job hangs, so that it tries the next job while the lock stands however long
        // a busy machine takes to boot it (with 3 s, a worker still booting when the
        // lock ended ran it at once).
        $job = static fn(string $label, string $mode) => ['job' => 'slot', 'journal' => 'killed', 'label' => $label, 'mode' => $mode,
            'ms' => 10, 'key' => 'killed', 'expireAfter' => 8, 'releaseAfter' => 1];
        self::ok(['app:dispatch', 'killed', json_encode([$job('hangs', 'hang'), $job('next', 'sleep')])]);
        $first = $this->start(['queue:work', '--queue=killed', '--sleep=0.1']);
        $this->until(fn() => self::records('killed', 'start', 'hangs') !== [], 20, 'the first job started');
        $second = $this->start(['queue:work', '--queue=killed', '--sleep=0.1', '--max-time=30']);
        proc_terminate($first['proc'], 9);
        $this->assertSame(128 + 9, self::wait($first['proc'], 5), 'the worker died of SIGKILL');
        $keys = self::keys(0, 'laravel-queue-overlap:', ':killed');
        $this->assertCount(1, $keys, 'the killed worker\'s lock is still there');
        $pttl = Support::redis()->pttl($keys[0]);
        $expires = microtime(true) + $pttl / 1000;
        $this->assertGreaterThan(0, $pttl);
        $this->assertLessThanOrEqual(8000, $pttl);

        $this->until(fn() => self::records('killed', 'end', 'next') !== [], 20, 'the next job ran');
        self::stop($second['proc']);
        $next = self::records('killed', 'start', 'next')[0];
        $this->assertGreaterThanOrEqual($expires - 0.05, $next['t'], 'not before the lock\'s expireAfter ended');
        // Turned away and put back for 1 s (releaseAfter) at a time: its next try comes
        // about 1 s after the lock ends; 4 s leaves room for a busy machine.
        $this->assertLessThan($expires + 4.0, $next['t'], 'soon after it (released for 1 s at a time)');
        $this->assertGreaterThan(1, $next['attempts'], 'turned away while the lock stood');
    }

    public function testJobPastItsTimeoutReleasesWithoutOverlapping(): void
    {
        // laravel/framework#37060: at --timeout the worker SIGKILLs itself, so no shutdown
        // function runs. The bridge releases on the WorkerStopping it fires first; the
        // next job runs at its first attempt, not after expireAfter (30 s).
        $jobs = static fn(string $name): string => json_encode([
            ['job' => 'slot', 'journal' => $name, 'label' => 'hangs', 'mode' => 'hang', 'key' => $name, 'expireAfter' => 30, 'releaseAfter' => 1],
            ['job' => 'slot', 'journal' => $name, 'label' => 'next', 'mode' => 'sleep', 'ms' => 10, 'key' => $name, 'expireAfter' => 30, 'releaseAfter' => 1],
        ]);
        $timedOut = static function (string $queue, array $env = []): float {
            [$rc, , $err] = self::artisan(['queue:work', "--queue=$queue", '--max-jobs=1', '--sleep=0.1', '--timeout=1'], $env);
            if ($rc !== 128 + 9) {
                throw new \RuntimeException("the worker was not killed at its timeout (exit $rc): $err");
            }
            return microtime(true);
        };
        self::ok(['app:dispatch', 'timeout', $jobs('timeout')]);
        $killed = $timedOut('timeout');
        $this->assertCount(1, self::records('timeout', 'start', 'hangs'), 'the job ran until its timeout');
        $this->assertSame([], self::keys(0, 'laravel-queue-overlap:', ':timeout'), 'released before the worker killed itself');
        self::ok(['queue:work', '--queue=timeout', '--once']);
        $next = self::records('timeout', 'start', 'next');
        $this->assertCount(1, $next, 'the next job ran');
        $this->assertSame(1, $next[0]['attempts'], 'at its first attempt, not turned away');
        $this->assertLessThan(30.0, $next[0]['t'] - $killed, 'before expireAfter (30 s)');

        // The control, on Laravel's own Redis store: the lock outlives the killed worker.
        $control = ['REDIS_LOCK_APP_STORE' => 'redis'];
        self::ok(['app:dispatch', 'laravel-timeout', $jobs('laravel-timeout')], $control);
        $timedOut('laravel-timeout', $control);
        $keys = self::keys(0, 'laravel-queue-overlap:', ':laravel-timeout');
        $this->assertCount(1, $keys, 'Laravel\'s own store leaves the timed-out job\'s lock');
        $this->assertGreaterThan(25000, Support::redis()->pttl($keys[0]));
    }

    public function testScheduleRunsAnOnOneServerTaskOnce(): void
    {
        if (function_exists('posix_geteuid') && posix_geteuid() !== 0) {
            $this->markTestSkipped('two hostnames need unshare --uts, which needs root');
        }
        exec('unshare --uts true 2>&1', $output, $rc);
        if ($rc !== 0) {
            $this->markTestSkipped('unshare --uts does not work here: ' . implode(' ', $output));
        }
        // The scheduler's mutex names the minute: keep both runs inside one, with room
        // for two artisan processes booting on a busy machine (seconds each).
        if ((int) gmdate('s') >= 40) {
            usleep((int) ((60 - fmod(microtime(true), 60) + 0.1) * 1e6));
        }
        $servers = [];
        foreach (['server-a', 'server-b'] as $host) {
            $servers[] = $this->start(['schedule:run'], [], ['unshare', '--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', $host]);
        }
        foreach ($servers as $s) {
            $this->assertSame(0, self::wait($s['proc'], 20), self::stderr($s));
        }
        $runs = self::journal('schedule');
        $every = array_values(array_filter($runs, fn(array $r) => $r['task'] === 'every-server'));
        $one = array_values(array_filter($runs, fn(array $r) => $r['task'] === 'one-server'));
        $hosts = array_column($every, 'host');
        sort($hosts);
        $this->assertSame(['server-a', 'server-b'], $hosts, 'both servers ran the schedule, under their own hostnames');
        $this->assertCount(1, $one, 'the onOneServer() task ran once: ' . json_encode($runs));
        $this->assertContains($one[0]['host'], ['server-a', 'server-b']);

        // Where the mutex is: Laravel 12 (and 11.x since laravel/framework#56614) takes the
        // store's lock(), the bridge's, on the lock connection; Laravel 8 and 10 add() a
        // cached value on the cache connection, past the bridge.
        $mutex = $one[0]['mutex'] . gmdate('Hi', (int) $one[0]['t']);
        $locks = self::keys(0, $mutex);
        $values = self::keys(1, $mutex);
        $where = ' (lock connection: ' . json_encode($locks) . ', cache connection: ' . json_encode($values) . ')';
        $redis = Support::redis();
        if (method_exists(\Illuminate\Console\Scheduling\CacheSchedulingMutex::class, 'shouldUseLocks')) {
            $this->assertCount(1, $locks, 'the scheduling mutex is a lock' . $where);
            $this->assertSame([], $values);
            $this->assertNotSame('b:1;', $redis->get($locks[0]), 'a lock owner, not a cached value');
            $this->assertGreaterThan(3500000, $redis->pttl($locks[0]), 'held for an hour');
        } else {
            $this->assertCount(1, $values, 'the scheduling mutex is a cached value' . $where);
            $this->assertSame([], $locks);
            $redis->select(1);
            $this->assertSame('b:1;', $redis->get($values[0]), 'add(true), serialised');
            $this->assertGreaterThan(3500000, $redis->pttl($values[0]));
        }
    }

    public function testBlockIsWokenByTheRelease(): void
    {
        $lags = [];
        foreach (['redis_lock', 'redis'] as $store) {
            $name = "wake-$store";
            $holder = $this->start(['app:lock-agent', $store, $name], [], [], true);
            $waiter = $this->start(['app:lock-agent', $store, $name], [], [], true);
            for ($round = 0; $round < 5; $round++) {
                $this->assertSame('held', self::ask($holder, 'take'));
                $this->assertSame('waiting', self::ask($waiter, 'wait'));
                $started = microtime(true);
                // The waiter is in block() by now; Laravel's own block() is in its
                // second 250 ms sleep when the release comes, 300 ms in, so its
                // wake-up comes about 200 ms after the release.
                usleep(300000);
                [, $released] = explode(' ', self::ask($holder, 'release'));
                [, $woke] = explode(' ', self::line($waiter));
                $lags[$store][] = [(float) $woke - (float) $released, (float) $released - $started];
                self::ask($waiter, 'release');
            }
            foreach ([$holder, $waiter] as $agent) {
                fclose($agent['in']);
                $this->assertSame(0, self::wait($agent['proc'], 10), self::stderr($agent));
            }
        }
        // Each judged against a waiter polling every 250 ms (Laravel's block()), per
        // round from the phase measured in it (Support::pollerLags()): the bridge's
        // under half of that poller's lag, Laravel's own (the control) at least half
        // of it, so that the test can tell the two apart on this machine.
        $poll = (new \ReflectionProperty(\Illuminate\Cache\Lock::class, 'sleepMilliseconds'))->getDefaultValue() / 1000;
        Support::assertWoken($lags['redis_lock'], $poll, 'the bridge\'s block() is woken by the release');
        [$theirs, $polled, $what] = Support::pollerLags($lags['redis'], $poll);
        $this->assertGreaterThanOrEqual($polled / 2, $theirs, 'Laravel\'s own block() polls: ' . $what);
    }

    /**
     * The bridge's MetricsController, routed as docs/laravel.md says, answers GET
     * /metrics through the framework's HTTP kernel with the Prometheus text, counting
     * the lock the same process took through the redis_lock cache store.
     */
    public function testMetricsControllerServesThePoolsCounts(): void
    {
        [$status, $type, $body] = explode("\n", self::ok(['app:metrics-request', 'metrics:42']), 3) + ['', '', ''];
        $this->assertSame('200', $status);
        $this->assertSame('text/plain; version=0.0.4; charset=utf-8', $type);
        $this->assertMatchesRegularExpression('/^redis_lock_acquisitions_total\{name="[^"]*metrics:\*"\} 1$/m', $body);
        $this->assertMatchesRegularExpression('/^redis_lock_releases_total\{name="[^"]*metrics:\*"\} 1$/m', $body);
        $this->assertMatchesRegularExpression('/^# TYPE redis_lock_hold_seconds histogram$/m', $body);
    }

    public function testFunnelLimitsConcurrency(): void
    {
        // Sections of 1 s: 8 applications booting one after another on a busy machine
        // still meet in the funnel, so that it has more than one to let in at once.
        $section = function (string $journal, int $limit, int $ms = 1000): array {
            $procs = [];
            for ($i = 0; $i < 8; $i++) {
                $procs[] = $this->start(['app:funnel', $journal, $journal, (string) $limit, (string) $ms, '10']);
            }
            $outs = [];
            foreach ($procs as $p) {
                $this->assertSame(0, self::wait($p['proc'], 30), self::stderr($p));
                $outs[] = trim((string) file_get_contents($p['out']));
            }
            return $outs;
        };
        $outs = $section('funnel', 3);
        if (in_array('no funnel', $outs, true)) {
            $this->markTestSkipped('Cache::store(\'redis_lock\') has no funnel() on this Laravel');
        }
        $this->assertSame(array_fill(0, 8, 'done'), $outs);
        $this->assertSame([], self::records('funnel', 'failed'), 'every process had its turn within 10 s');
        $runs = self::intervals('funnel');
        $this->assertCount(8, $runs);
        $this->assertLessThanOrEqual(3, self::concurrency($runs), 'never more than 3 at once: ' . json_encode($runs));
        $this->assertGreaterThan(1, self::concurrency($runs), 'the funnel lets 3 run side by side');
        // The control: with room for all 8, more than 3 do run at once here. Its
        // sections last 2 s, so that 8 applications booting one after another on a
        // busy machine still overlap.
        $section('funnel-control', 8, 2000);
        $this->assertGreaterThan(3, self::concurrency(self::intervals('funnel-control')));
    }

    /**
     * Starts artisan $args; $wrap runs it under another command (unshare); $interactive:
     * stdin and stdout as pipes, else stdout to a file. stderr always goes to a file.
     *
     * @return array{proc: resource, in: resource|null, out: resource|string, err: string}
     */
    private function start(array $args, array $env = [], array $wrap = [], bool $interactive = false): array
    {
        $p = self::open($args, $env, $wrap, $interactive);
        $this->procs[] = $p['proc'];
        return $p;
    }

    private static function open(array $args, array $env, array $wrap, bool $interactive): array
    {
        $files = self::$dir . '/proc-' . bin2hex(random_bytes(4));
        $cmd = array_merge($wrap, [PHP_BINARY, '-d', 'extension=' . getenv('REDIS_LOCK_EXT'), self::ARTISAN], $args);
        $spec = [0 => $interactive ? ['pipe', 'r'] : ['file', '/dev/null', 'r'],
            1 => $interactive ? ['pipe', 'w'] : ['file', "$files.out", 'w'], 2 => ['file', "$files.err", 'w']];
        $env = array_merge(getenv(), ['REDIS_LOCK_TEST_DSN' => Support::dsn(), 'REDIS_LOCK_APP_DIR' => self::$dir,
            'REDIS_LOCK_APP_PREFIX' => self::$prefix], $env);
        $proc = proc_open($cmd, $spec, $pipes, null, $env);
        if (!is_resource($proc)) {
            throw new \RuntimeException('cannot start ' . implode(' ', $cmd));
        }
        return ['proc' => $proc, 'in' => $pipes[0] ?? null, 'out' => $pipes[1] ?? "$files.out", 'err' => "$files.err"];
    }

    /** Runs artisan $args to its end: [exit code, stdout, stderr]. */
    private static function artisan(array $args, array $env = []): array
    {
        $p = self::open($args, $env, [], false);
        try {
            $rc = self::wait($p['proc'], 30);
        } finally {
            proc_close($p['proc']);
        }
        return [$rc, (string) file_get_contents($p['out']), self::stderr($p)];
    }

    /** Runs artisan $args, which must succeed: its stdout. */
    private static function ok(array $args, array $env = []): string
    {
        [$rc, $out, $err] = self::artisan($args, $env);
        if ($rc !== 0) {
            throw new \RuntimeException('artisan ' . implode(' ', $args) . " exited with $rc: $out$err");
        }
        return $out;
    }

    /** Works the queue until it is empty. */
    private static function work(string $queue): void
    {
        self::ok(['queue:work', "--queue=$queue", '--stop-when-empty', '--sleep=0.1']);
    }

    /** Waits up to $timeout seconds for the process to end (then kills it): its exit code. */
    private static function wait($proc, float $timeout): int
    {
        $deadline = microtime(true) + $timeout;
        while (($status = proc_get_status($proc))['running']) {
            if (microtime(true) > $deadline) {
                proc_terminate($proc, 9);
                throw new \RuntimeException("a process ran longer than $timeout s");
            }
            usleep(10000);
        }
        return $status['signaled'] ? 128 + $status['termsig'] : $status['exitcode'];
    }

    /** Stops a queue worker as a supervisor would (SIGTERM: it ends after its current job). */
    private static function stop($proc): void
    {
        proc_terminate($proc, 15);
        self::wait($proc, 10);
    }

    private static function stderr(array $p): string
    {
        return (string) @file_get_contents($p['err']);
    }

    /** Sends an agent a word and reads its answer. */
    private static function ask(array $agent, string $word): string
    {
        fwrite($agent['in'], "$word\n");
        return self::line($agent);
    }

    /** The agent's next line of output (within 10 s). */
    private static function line(array $agent): string
    {
        $read = [$agent['out']];
        $none = [];
        if (!stream_select($read, $none, $none, 10)) {
            throw new \RuntimeException('no answer within 10 s: ' . self::stderr($agent));
        }
        $line = fgets($agent['out']);
        if ($line === false) {
            throw new \RuntimeException('the agent ended: ' . self::stderr($agent));
        }
        return rtrim($line, "\n");
    }

    /** Polls $done() every 50 ms for up to $timeout seconds. */
    private function until(\Closure $done, float $timeout, string $what): void
    {
        $deadline = microtime(true) + $timeout;
        while (!$done()) {
            if (microtime(true) > $deadline) {
                $this->fail("timed out after $timeout s waiting until $what");
            }
            usleep(50000);
        }
    }

    /** @return list<array<string, mixed>> the records the application wrote to journal $name */
    private static function journal(string $name): array
    {
        $file = self::$dir . "/$name.jsonl";
        if (!is_file($file)) {
            return [];
        }
        return array_map(static fn(string $l) => json_decode($l, true), file($file, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES));
    }

    /** @return list<array<string, mixed>> journal $name's $event records (of job $label) */
    private static function records(string $name, string $event, ?string $label = null): array
    {
        return array_values(array_filter(self::journal($name),
            static fn(array $r) => $r['event'] === $event && ($label === null || $r['label'] === $label)));
    }

    /** @return list<array{0: float, 1: float}> [start, end] of each section, from start and end records in order per process */
    private static function intervals(string $name): array
    {
        $open = [];
        $done = [];
        foreach (self::journal($name) as $r) {
            if ($r['event'] === 'start') {
                $open[$r['pid']] = $r['t'];
            } elseif ($r['event'] === 'end') {
                $done[] = [$open[$r['pid']], $r['t']];
                unset($open[$r['pid']]);
            }
        }
        return $done;
    }

    /** The most sections running at one moment (an end before a start at the same instant). */
    private static function concurrency(array $intervals): int
    {
        $events = [];
        foreach ($intervals as [$start, $end]) {
            $events[] = [$start, 1];
            $events[] = [$end, -1];
        }
        usort($events, static fn(array $a, array $b) => [$a[0], $a[1]] <=> [$b[0], $b[1]]);
        $now = $max = 0;
        foreach ($events as [, $delta]) {
            $max = max($max, $now += $delta);
        }
        return $max;
    }

    /** Jobs waiting or running on $queue, read from the application's SQLite database. */
    private static function pending(string $queue): int
    {
        $db = new \PDO('sqlite:' . self::$dir . '/database.sqlite');
        $count = $db->prepare('SELECT COUNT(*) FROM jobs WHERE queue = ?');
        $count->execute([$queue]);
        return (int) $count->fetchColumn();
    }

    /** @return list<string> the run's keys in database $db that contain every one of $parts */
    private static function keys(int $db, string ...$parts): array
    {
        $redis = Support::redis();
        $redis->select($db);
        return array_values(array_filter($redis->keys(self::$prefix . '*'), static function (string $key) use ($parts): bool {
            foreach ($parts as $part) {
                if (!str_contains($key, $part)) {
                    return false;
                }
            }
            return true;
        }));
    }
}
