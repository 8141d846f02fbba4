--TEST--
Memory stays flat over 100k acquire/release cycles
--CONFLICTS--
cpu # keeps a core busy for 12 s (100,000 cycles)
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
function rss_kb(): int {
    preg_match('/VmRSS:\s+(\d+)/', file_get_contents('/proc/self/status'), $m);
    return (int) $m[1];
}
$key = rl_key('memory');
$run = function (int $n) use ($dsn, $key) {
    for ($i = 0; $i < $n; $i++) {
        $l = new Lock($key, 0, 5, ['dsn' => $dsn]);   // a new object each time, as per request
        $t = $l->addLock();
        if ($t === false || !$l->releaseLock($t)) { throw new Exception("cycle $i failed"); }
    }
};
$run(5000);
$rss0 = rss_kb(); $zend0 = memory_get_usage();
$run(100000);
$rss1 = rss_kb(); $zend1 = memory_get_usage();
echo "rss growth: ", ($rss1 - $rss0) < 1024 ? "flat" : ($rss1 - $rss0) . " KiB", "\n";
echo "zend heap growth: ", ($zend1 - $zend0) < 4096 ? "flat" : ($zend1 - $zend0) . " bytes", "\n";
?>
--EXPECT--
rss growth: flat
zend heap growth: flat
