<?php
// FrankenPHP's worker mode: this script boots once per run and answers requests
// in a loop of frankenphp_handle_request(), as FrankenPHP's docs write a worker.
// With MAX_REQUESTS it ends after that many and FrankenPHP starts it again.
require __DIR__ . '/_lib.php';
ignore_user_abort(true);
$id = bin2hex(random_bytes(6));
// Held for the run's life, as asked: auto_release => false.
$life = new Lock("fp:life:$id", 0, 300, ['auto_release' => false]);
$lifeToken = $life->addLock();
// Taken at boot without asking: released when the boot ends, at the first
// frankenphp_handle_request().
$boot = new Lock("fp:boot:$id", 0, 300);
$boot->addLock();
rl_log("start $id");

$max = (int) ($_SERVER['MAX_REQUESTS'] ?? 0);
$between = null;
$handler = static function () use (&$between): void {
    // The loop's lock (below) must still be held in every later request.
    if ($between !== null && !$between[0]->isOwned($between[1])) {
        http_response_code(500);
        echo "the loop's lock was lost\n";
        return;
    }
    rl_route($_GET);
};
for ($n = 0; !$max || $n < $max; ++$n) {
    $more = frankenphp_handle_request($handler);
    // Taken in the loop, between handled requests: held until the script ends.
    if ($n === 0 && $max) {
        $b = new Lock("fp:between:$id", 0, 300);
        $between = [$b, $b->addLock()];
    }
    if (!$more) {
        break;
    }
}
$life->releaseLock($lifeToken);
rl_log("end $id");
