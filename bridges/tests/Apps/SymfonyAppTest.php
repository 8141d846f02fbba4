<?php

namespace RedisLock\Bridge\Tests\Apps;

use PHPUnit\Framework\TestCase;
use RedisLock\Bridge\Tests\Support;
use Symfony\Component\Console\Command\LockableTrait;
use Symfony\Component\Messenger\Stamp\DeduplicateStamp;
use Symfony\Component\Scheduler\Schedule;

/**
 * The Symfony application in apps/symfony (FrameworkBundle on Debian's packages, the
 * bridge's LockStore behind the framework's lock services), driven through real
 * `bin/console` processes on the test server.
 */
final class SymfonyAppTest extends TestCase
{
    private const APP = __DIR__ . '/../apps/symfony';

    /** The compiled container, shared by the tests of a run (it reads its settings from the environment). */
    private static ?string $cacheDir = null;

    /** This test's queue file and handlers' output, and the processes' output. */
    private string $varDir;
    /** Put before every lock name the application makes: this test's keys. */
    private string $prefix;
    /** @var list<array{proc: resource, stdin: resource|null, out: string, err: string, pid: int, code: int|null}> */
    private array $procs = [];

    protected function setUp(): void
    {
        $requirements = require self::APP . '/requirements.php';
        $missing = [];
        foreach ($requirements['required'] as $file => $package) {
            if (!is_file("/usr/share/php/$file")) {
                $missing[] = $package;
            }
        }
        if (!extension_loaded('pdo_sqlite')) {
            $missing[] = 'php' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . '-sqlite3';
        }
        if ($missing) {
            $this->markTestSkipped('the Symfony test application needs ' . implode(', ', $missing)
                . ' (bridges/tests/apps/symfony/packages; tools/env/deps.sh installs them)');
        }
        $this->varDir = self::tempDir('redis-lock-symfony-app-var');
        $this->prefix = Support::name('symfony-app') . ':';
        if (self::$cacheDir === null) {
            // Compiled once, before any test starts processes side by side.
            self::$cacheDir = self::tempDir('redis-lock-symfony-app-cache');
            $id = $this->start('list');
            $this->assertSame(0, $this->wait($id), 'the application does not start: ' . $this->outputOf($id));
        }
    }

    protected function tearDown(): void
    {
        foreach ($this->procs as $proc) {
            if (\is_resource($proc['stdin'])) {
                fclose($proc['stdin']);
            }
            if ($proc['code'] === null) {
                proc_terminate($proc['proc'], 9);
                proc_close($proc['proc']);
            }
        }
        $this->procs = [];
        if (isset($this->prefix)) {
            $redis = Support::redis();
            $keys = $redis->keys('*' . $this->prefix . '*');
            if ($keys) {
                $redis->del($keys);
            }
        }
        if (isset($this->varDir)) {
            Support::removeTree($this->varDir);
        }
    }

    public static function tearDownAfterClass(): void
    {
        if (self::$cacheDir !== null) {
            Support::removeTree(self::$cacheDir);
            self::$cacheDir = null;
        }
    }

    /**
     * The framework's LockFactory (autowired) and the application's SemaphoreFactory are the
     * bridge's, configured as docs/symfony.md says: the holds are keys on the test
     * server, exclude another process, and go with their release.
     */
    public function testFrameworkLockServicesAreTheBridges(): void
    {
        $holder = $this->start('app:hold', 'shared');
        $this->waitFor(fn() => str_contains($this->outputOf($holder), 'semaphore: held'), 'the first app:hold to take both', $holder);
        $this->assertStringContainsString('lock: held', $this->outputOf($holder));
        $redis = Support::redis();
        $lock = $this->prefix . 'shared';
        $this->assertSame(1, $redis->exists($lock), 'the lock is a key on the test server');
        $this->assertGreaterThan(25000, $redis->pttl($lock));
        $this->assertLessThanOrEqual(30000, $redis->pttl($lock), "the Lock's TTL (30 s)");
        $this->assertNotSame([], $redis->keys('*' . $lock . ':semaphore*'), 'the semaphore holds keys there too');

        $other = $this->start('app:hold', 'shared');
        $this->assertSame(1, $this->wait($other), $this->outputOf($other));
        $this->assertStringContainsString("lock: busy\nsemaphore: busy", $this->outputOf($other));

        $this->finish($holder);
        $this->assertSame(0, $this->wait($holder), $this->outputOf($holder));
        $this->assertStringContainsString('released', $this->outputOf($holder));
        $this->assertSame([], $redis->keys('*' . $lock . '*'), 'nothing left behind');
    }

    /**
     * A command with Symfony's LockableTrait on the framework's LockFactory, started twice
     * at once: one runs, the other stops at once with the "already running" message, and
     * the lock is the bridge's key on the test server while the first runs.
     */
    /**
     * The bridge's MetricsController, routed as docs/symfony.md says, answers GET
     * /metrics through the framework's HTTP kernel with the Prometheus text, counting
     * the lock the same process took through the framework's LockFactory.
     */
    public function testMetricsControllerServesThePoolsCounts(): void
    {
        $id = $this->start('app:metrics-request', 'metrics:42');
        $this->assertSame(0, $this->wait($id), $this->outputOf($id));
        [$status, $type, $body] = explode("\n", file_get_contents($this->procs[$id]['out']), 3) + ['', '', ''];
        $this->assertSame('200', $status);
        $this->assertSame('text/plain; version=0.0.4; charset=utf-8', $type);
        $this->assertMatchesRegularExpression('/^redis_lock_acquisitions_total\{name="[^"]*:metrics:\*"\} 1$/m', $body);
        $this->assertMatchesRegularExpression('/^redis_lock_releases_total\{name="[^"]*:metrics:\*"\} 1$/m', $body);
        $this->assertMatchesRegularExpression('/^# TYPE redis_lock_wait_seconds histogram$/m', $body);
    }

    /**
     * The web profiler's Locks panel (the bridge's LockCollector, set up as
     * docs/symfony.md says), as a person opens it: a page takes one lock through the
     * LockFactory and waits 0.2 s for one the test holds, with the extension's class;
     * its profile's Locks panel lists both, with their outcome, wait and hold, and the
     * toolbar shows the count and links to the panel.
     */
    public function testProfilerPanelListsTheRequestsLocks(): void
    {
        if (!is_file('/usr/share/php/Symfony/Bundle/WebProfilerBundle/autoload.php')) {
            $this->markTestSkipped('the profiler panel needs php-symfony-web-profiler-bundle (bridges/tests/apps/symfony/packages; tools/env/deps.sh installs it)');
        }
        $held = new \Lock($this->prefix . 'busy:1', 0, 30, ['dsn' => Support::dsn()]);
        $this->assertIsString($held->addLock());
        putenv('APP_ENV=profile');
        try {
            $id = $this->start('app:profile-request', '/work?wait=0.2');
        } finally {
            putenv('APP_ENV');
        }
        $this->assertSame(0, $this->wait($id), $this->outputOf($id));
        $out = file_get_contents($this->procs[$id]['out']);
        $this->assertMatchesRegularExpression('/^token: [0-9a-f]+$/m', $out);
        [, $after] = explode("--- panel 200\n", $out, 2) + ['', ''];
        [$panel, $toolbar] = explode("--- toolbar 200\n", $after, 2) + ['', ''];
        $dom = new \DOMDocument();
        @$dom->loadHTML($panel);
        $xpath = new \DOMXPath($dom);
        $rows = [];
        foreach ($xpath->query('//table[contains(@class, "redis-lock-journal")]/tbody/tr') as $tr) {
            $rows[] = array_map(fn($td) => trim($td->textContent), iterator_to_array($xpath->query('td', $tr)));
        }
        $this->assertCount(2, $rows, $panel);
        [$work, $busy] = $rows;
        $this->assertSame(['1', $this->prefix . 'work:1', 'lock', 'acquired'], \array_slice($work, 0, 4));
        $this->assertSame(['2', $this->prefix . 'busy:1', 'lock', 'busy'], \array_slice($busy, 0, 4));
        $ms = fn(string $cell) => (float) $cell;
        $this->assertLessThan(100, $ms($work[4]), 'the first lock was free: ' . $work[4]);
        $this->assertGreaterThanOrEqual(18, $ms($work[5]), 'held 20 ms: ' . $work[5]);
        $this->assertLessThan(1000, $ms($work[5]), 'held 20 ms: ' . $work[5]);
        $this->assertGreaterThanOrEqual(190, $ms($busy[4]), 'waited 0.2 s: ' . $busy[4]);
        $this->assertLessThan(1500, $ms($busy[4]), 'waited 0.2 s: ' . $busy[4]);
        $this->assertSame('-', $busy[5]);
        $menu = trim($xpath->query('//strong[text()="Locks"]/following-sibling::span[contains(@class, "count")]')->item(0)?->textContent ?? '');
        $this->assertSame('2', $menu, 'the menu counts the request\'s acquisitions');
        $this->assertStringContainsString('<span class="sf-toolbar-label">Locks</span>', $toolbar);
        $this->assertMatchesRegularExpression('~href="[^"]*/_profiler/[0-9a-f]+\?panel=redis_lock"~', $toolbar);
        $held->releaseLock();
    }

    public function testLockableCommandRunsOnce(): void
    {
        self::load('Symfony/Component/Console/autoload.php');
        if (!(new \ReflectionClass(LockableTrait::class))->hasProperty('lockFactory')) {
            $this->markTestSkipped("this Symfony's LockableTrait has no \$lockFactory property (Symfony 7 adds it): "
                . 'it locks on a SemaphoreStore of its own and cannot be pointed at the bridge');
        }
        $a = $this->start('app:report', '--hold');
        $b = $this->start('app:report', '--hold');
        // The one that did not get the lock ends by itself; the other holds it until told.
        $both = fn() => str_contains($this->outputOf($a), "running\n") && str_contains($this->outputOf($b), "running\n");
        $this->waitFor(fn() => !$this->running($a) || !$this->running($b) || $both(), 'one app:report to end', $a, $b);
        $this->assertFalse($both(), 'both ran at once');
        [$loser, $winner] = $this->running($a) ? [$b, $a] : [$a, $b];
        $this->assertTrue($this->running($winner), 'both ended: ' . $this->outputOf($a) . $this->outputOf($b));
        $this->assertSame(1, $this->wait($loser), $this->outputOf($loser));
        $this->assertStringContainsString('The command is already running in another process.', $this->outputOf($loser));
        $this->assertStringNotContainsString('running' . "\n", $this->outputOf($loser));

        $this->waitFor(fn() => str_contains($this->outputOf($winner), 'running'), 'the other app:report to run', $winner);
        $redis = Support::redis();
        $this->assertSame(1, $redis->exists($this->prefix . 'report'), "the trait's lock is the bridge's key");
        $this->assertFileDoesNotExist($this->varDir . '/report.log');

        $this->finish($winner);
        $this->assertSame(0, $this->wait($winner), $this->outputOf($winner));
        $this->assertSame('report ' . $this->procs[$winner]['pid'] . "\n", file_get_contents($this->varDir . '/report.log'));
        $this->assertSame(0, $redis->exists($this->prefix . 'report'), 'released at the end');
    }

    /**
     * Messenger's DeduplicateStamp, whose middleware takes the framework's LockFactory: a
     * second dispatch while the first waits in the queue is dropped; the worker releases
     * the lock (the key travelled in the message) once it has handled it, and the same
     * message is queued again after that.
     */
    public function testMessengerDeduplicatesUntilHandled(): void
    {
        self::load('Symfony/Component/Messenger/autoload.php');
        if (!class_exists(DeduplicateStamp::class)) {
            $this->markTestSkipped("this Symfony's Messenger has no DeduplicateStamp (Symfony 7.3 adds it)");
        }
        $redis = Support::redis();
        $key = $this->prefix . 'job:report';

        $this->assertSame("queued\n", $this->console('app:dispatch', 'report'));
        $this->assertSame(1, $redis->exists($key), 'the deduplication lock is the bridge\'s key');
        $this->assertGreaterThan(50000, $redis->pttl($key));
        $this->assertLessThanOrEqual(60000, $redis->pttl($key), "the stamp's TTL (60 s)");
        $this->assertSame("deduplicated\n", $this->console('app:dispatch', 'report'));
        $this->assertSame("queued\n", $this->console('app:dispatch', 'other'), 'another key is not held back');
        $this->assertSame(2, $this->queued());

        $this->console('messenger:consume', 'async', '--limit=2', '--time-limit=20');
        $handled = file($this->varDir . '/jobs.log', FILE_IGNORE_NEW_LINES);
        $this->assertSame(['report', 'other'], array_map(fn($line) => explode(' ', $line)[0], $handled));
        $this->assertSame(0, $this->queued());
        $this->assertSame(0, $redis->exists($key), 'released by the worker that handled it');

        $this->assertSame("queued\n", $this->console('app:dispatch', 'report'), 'queued again once handled');
        $this->assertSame(1, $this->queued());
        $this->assertSame(1, $redis->exists($key));
    }

    /**
     * The Scheduler with Schedule::lock() on the framework's LockFactory: two workers on
     * one schedule for 5 s handle each per-second tick once, while the lock is the
     * bridge's key. The control: two workers on the same schedule without the lock, at
     * the same time, handle ticks twice.
     */
    public function testScheduleLockRunsEachTickOnce(): void
    {
        if (!self::load('Symfony/Component/Scheduler/autoload.php') || !method_exists(Schedule::class, 'lock')) {
            $this->markTestSkipped('no Symfony Scheduler here (Symfony 6.3 adds it; php-symfony-scheduler)');
        }
        $workers = [];
        foreach (['locked', 'locked', 'unlocked', 'unlocked'] as $schedule) {
            // 5 s each: the two workers of a schedule share ticks even when a busy
            // machine boots one of them seconds after the other (the control needs that).
            $workers[] = $this->start('messenger:consume', "scheduler_$schedule", '--time-limit=5', '--sleep=0.05');
        }
        $redis = Support::redis();
        $lock = $this->prefix . 'scheduler:locked';
        $seen = false;
        $this->waitFor(function () use ($workers, $redis, $lock, &$seen): bool {
            $seen = $seen || $redis->exists($lock) === 1;
            return !array_filter($workers, fn($id) => $this->running($id));
        }, 'the workers to stop', ...$workers);
        foreach ($workers as $id) {
            $this->assertSame(0, $this->wait($id), $this->outputOf($id));
        }
        $this->assertTrue($seen, "the schedule's lock was the bridge's key while the workers ran");
        $this->assertSame(0, $redis->exists($lock), 'released when its holder stopped');

        $locked = $this->ticks('locked');
        $this->assertGreaterThanOrEqual(2, \count($locked), 'ticks handled: ' . json_encode($locked));
        $this->assertSame(array_unique(array_column($locked, 0)), array_column($locked, 0), 'a tick handled twice: ' . json_encode($locked));

        $unlocked = $this->ticks('unlocked');
        $twice = array_filter(array_count_values(array_column($unlocked, 0)), fn($n) => $n > 1);
        $this->assertNotSame([], $twice, 'without the lock both workers run the ticks: ' . json_encode($unlocked));
        $this->assertCount(2, array_unique(array_column($unlocked, 1)));
    }

    /** @return list<array{0: string, 1: string}> the ticks schedule $name handled: [due at, worker's pid] */
    private function ticks(string $name): array
    {
        $file = $this->varDir . "/ticks-$name.log";
        $lines = is_file($file) ? file($file, FILE_IGNORE_NEW_LINES) : [];
        return array_map(fn($line) => explode(' ', $line, 2), $lines);
    }

    /** How many messages the Doctrine queue (the application's SQLite file) holds. */
    private function queued(): int
    {
        $db = new \PDO('sqlite:' . $this->varDir . '/queue.sqlite');
        return (int) $db->query('SELECT COUNT(*) FROM messenger_messages')->fetchColumn();
    }

    /** Runs bin/console to its end, successfully: its stdout. */
    private function console(string ...$args): string
    {
        $id = $this->start(...$args);
        $this->finish($id);
        $this->assertSame(0, $this->wait($id), implode(' ', $args) . ': ' . $this->outputOf($id));
        return $this->outputOf($id, false);
    }

    /**
     * Starts `php bin/console ARGS` with the extension, as the application is run, on this
     * test's directories and lock names. Its stdin is a pipe (see finish()); its output
     * goes to files, read by output().
     */
    private function start(string ...$args): int
    {
        $id = \count($this->procs);
        $out = "{$this->varDir}/console-$id.out";
        $err = "{$this->varDir}/console-$id.err";
        $cmd = array_merge([PHP_BINARY, '-d', 'extension=' . getenv('REDIS_LOCK_EXT'), '-d', 'display_errors=stderr',
            self::APP . '/bin/console'], $args, ['--no-interaction']);
        $env = array_merge(getenv(), [
            'APP_CACHE_DIR' => self::$cacheDir,
            'APP_LOG_DIR' => self::$cacheDir . '/log',
            'APP_VAR_DIR' => $this->varDir,
            'APP_LOCK_PREFIX' => $this->prefix,
        ]);
        $proc = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['file', $out, 'w'], 2 => ['file', $err, 'w']], $pipes, null, $env);
        $this->assertIsResource($proc);
        $this->procs[] = ['proc' => $proc, 'stdin' => $pipes[0], 'out' => $out, 'err' => $err,
            'pid' => proc_get_status($proc)['pid'], 'code' => null];
        return $id;
    }

    /** Ends the process's input: a command holding something until then goes on. */
    private function finish(int $id): void
    {
        if (\is_resource($this->procs[$id]['stdin'])) {
            fclose($this->procs[$id]['stdin']);
        }
    }

    private function running(int $id): bool
    {
        $proc = &$this->procs[$id];
        if ($proc['code'] !== null) {
            return false;
        }
        $status = proc_get_status($proc['proc']);
        if ($status['running']) {
            return true;
        }
        $proc['code'] = $status['exitcode'];   // given once only, before PHP 8.3
        proc_close($proc['proc']);
        return false;
    }

    /** The exit code, once the process has ended (20 s at most). */
    private function wait(int $id): int
    {
        $this->waitFor(fn() => !$this->running($id), 'bin/console to end', $id);
        return $this->procs[$id]['code'];
    }

    /** Polls $done until it holds, or fails after 20 s showing the processes' output. */
    private function waitFor(\Closure $done, string $what, int ...$ids): void
    {
        $deadline = microtime(true) + 20;
        while (!$done()) {
            if (microtime(true) > $deadline) {
                $this->fail("timed out waiting for $what: " . implode("\n", array_map(fn($id) => $this->outputOf($id), $ids)));
            }
            usleep(10000);
        }
    }

    /** The process's stdout, and with $stderr its stderr after it. */
    private function outputOf(int $id, bool $stderr = true): string
    {
        $read = fn(string $file) => is_file($file) ? (string) file_get_contents($file) : '';
        return $read($this->procs[$id]['out']) . ($stderr ? $read($this->procs[$id]['err']) : '');
    }

    /** Requires a Debian package's file from /usr/share/php, if it is there. */
    private static function load(string $file): bool
    {
        if (!is_file($file = "/usr/share/php/$file")) {
            return false;
        }
        require_once $file;
        return true;
    }

    private static function tempDir(string $name): string
    {
        $dir = sys_get_temp_dir() . "/$name." . bin2hex(random_bytes(6));
        mkdir($dir, 0700);
        return $dir;
    }
}
