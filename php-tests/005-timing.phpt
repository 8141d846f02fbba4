--TEST--
$timeOut and $lockOut are seconds, int or float, honoured to the millisecond; the wait never overshoots
--CONFLICTS--
all # deadlines checked to 40 ms: alone, as under make test-stress before the suite ran side by side (beside two others under the hog a 0.3 s wait ended 65 ms late)
--FILE--
<?php
require __DIR__ . '/_helper.inc';
$dsn = rl_dsn();
$key = rl_key('timing');
$holder = new Lock($key, 0, 0.75, ['dsn' => $dsn]);
$t = $holder->addLock();
$pttl = rl_cmd($dsn, 'PTTL', $key);
echo "fractional lockOut: ", ($pttl > 650 && $pttl <= 750) ? "ok" : "bad $pttl", "\n";

// One try when $timeOut is 0.
$w = new Lock($key, 0, 5, ['dsn' => $dsn]);
$s = hrtime(true); $r = $w->addLock(); $ms = (hrtime(true) - $s) / 1e6;
echo "timeOut 0: ", var_export($r, true), $ms < 50 ? " at once" : " slow $ms ms", "\n";

// A fractional deadline is honoured within tens of milliseconds, never early, never late.
foreach ([0.15, 0.3] as $to) {
    $w = new Lock($key, $to, 5, ['dsn' => $dsn]);
    $s = hrtime(true); $r = $w->addLock(); $ms = (hrtime(true) - $s) / 1e6;
    $ok = $r === false && $ms >= $to * 1000 - 1 && $ms < $to * 1000 + 40;
    echo "timeOut $to: ", $ok ? "ok" : sprintf("bad %.1f ms %s", $ms, var_export($r, true)), "\n";
}
// Even with long retry pauses, the last pause is cut at the deadline.
$w = new Lock($key, 0.12, 5, ['dsn' => $dsn, 'retry_delay' => 0.1, 'retry_delay_max' => 1]);
$s = hrtime(true); $r = $w->addLock(); $ms = (hrtime(true) - $s) / 1e6;
echo "long pauses: ", ($r === false && $ms >= 119 && $ms < 160) ? "ok" : sprintf("bad %.1f ms", $ms), "\n";

// A waiter gets the lock once it expires, well within its own deadline.
$w = new Lock($key, 2, 5, ['dsn' => $dsn]);
$s = hrtime(true); $r = $w->addLock(); $ms = (hrtime(true) - $s) / 1e6;
echo "acquired after expiry: ", is_string($r) ? "yes" : "no", ($ms < 1500 ? "" : " late $ms"), "\n";
var_dump($holder->releaseLock($t));   // expired, now someone else's
var_dump($w->releaseLock());
// Integer seconds work too.
$i = new Lock($key, 1, 2, ['dsn' => $dsn]);
$i->addLock();
$pttl = rl_cmd($dsn, 'PTTL', $key);
echo "int lockOut: ", ($pttl > 1900 && $pttl <= 2000) ? "ok" : "bad $pttl", "\n";
$i->releaseLock();
?>
--EXPECT--
fractional lockOut: ok
timeOut 0: false at once
timeOut 0.15: ok
timeOut 0.3: ok
long pauses: ok
acquired after expiry: yes
bool(false)
bool(true)
int lockOut: ok
