<?php
// The nemesis's watcher (run.php --watch, Sentinel topologies): every 50 ms it asks
// every node, at its own port (not its proxy), `INFO replication` and `INFO
// persistence`, and every sentinel `SENTINEL MASTER mymaster`, and writes each change
// to the history part it is given, until it is killed:
//   repl   {node, t0, dt (ms the answer took), state: role, master (the proxy port it
//          follows), link (master_link_status), sync (a full sync in progress),
//          loading, replicas ([proxy port, state, lag s] of each connected replica),
//          replid (its first 8 characters), offset; or down (refused, timed out: a
//          stopped server answers nothing)}
//   named  {sentinel, t0, master (the proxy port it names), flags, failover (its
//          failover state), epoch}
// A state is written when anything in it but the offsets and lags changed. The
// watcher runs beside the workers on the same cores: one connection per server, each
// read bounded by 40 ms, so that a stopped node delays a round by that much.
// Its argument is one JSON object: t0 (the run's hrtime origin, ns), out, nodes
// ([{port, proxy}]), sentinels ([port]).
declare(strict_types=1);

require_once __DIR__ . '/../lib/resp.php';

$cfg = json_decode($argv[1] ?? '', true);
if (!is_array($cfg)) {
    fwrite(STDERR, "watch.php is started by run.php --watch with one JSON argument\n");
    exit(2);
}
$out = fopen($cfg['out'], 'a');
$now = fn(): float => round((hrtime(true) - $cfg['t0']) / 1e6, 3);
const EVERY_MS = 50;
const READ_S = 0.04;

/** The fields of an INFO reply. */
function info_fields(string $text): array {
    $f = [];
    foreach (explode("\n", $text) as $l) {
        $l = trim($l);
        if ($l === '' || $l[0] === '#' || !str_contains($l, ':')) { continue; }
        [$k, $v] = explode(':', $l, 2);
        $f[$k] = $v;
    }
    return $f;
}

/** A node's state from its INFO replication and persistence. */
function node_state(array $f): array {
    $s = ['role' => $f['role'] ?? '?', 'loading' => ($f['loading'] ?? '0') === '1'];
    if (($f['role'] ?? '') === 'slave') {
        $s += ['master' => (int) ($f['master_port'] ?? 0), 'link' => $f['master_link_status'] ?? '?',
            'sync' => ($f['master_sync_in_progress'] ?? '0') === '1'];
    }
    $replicas = [];
    for ($i = 0; isset($f["slave$i"]); $i++) {
        parse_str(str_replace(',', '&', $f["slave$i"]), $r);
        $replicas[] = [(int) ($r['port'] ?? 0), $r['state'] ?? '?', (int) ($r['lag'] ?? -1)];
    }
    $s['replicas'] = $replicas;
    $s['replid'] = substr($f['master_replid'] ?? '', 0, 8);
    $s['offset'] = (int) ($f['master_repl_offset'] ?? 0);
    return $s;
}

/** What of a state counts as a change: all but the offsets and lags. */
function shape(array $s): string {
    unset($s['offset']);
    if (isset($s['replicas'])) { $s['replicas'] = array_map(fn($r) => [$r[0], $r[1]], $s['replicas']); }
    return json_encode($s);
}

$targets = [];
foreach ($cfg['nodes'] as $i => $n) { $targets[] = ['kind' => 'node', 'i' => $i, 'port' => $n['port'], 'cmds' => [['INFO', 'replication'], ['INFO', 'persistence']]]; }
foreach ($cfg['sentinels'] as $i => $port) { $targets[] = ['kind' => 'sentinel', 'i' => $i, 'port' => $port, 'cmds' => [['SENTINEL', 'MASTER', 'mymaster']]]; }
$conns = [];
$last = [];
while (true) {
    $round = $now();
    // Every question first, then every answer, each read bounded: a stopped server
    // costs one bound, not one per server.
    $sent = [];
    foreach ($targets as $k => $t) {
        try {
            $conns[$k] ??= Resp::at('127.0.0.1', $t['port'], 0.05, READ_S);
            $conns[$k]->send(...$t['cmds']);
            $sent[$k] = $now();
        } catch (RuntimeException $e) {
            unset($conns[$k]);
            $sent[$k] = $e->getMessage();
        }
    }
    foreach ($targets as $k => $t) {
        $t0 = is_float($sent[$k]) ? $sent[$k] : $now();
        $state = null;
        if (is_float($sent[$k])) {
            try {
                $replies = array_map(fn() => $conns[$k]->read(), $t['cmds']);
                if ($t['kind'] === 'node') {
                    $text = implode("\n", array_map(fn($r) => $r instanceof RuntimeException ? '' : (string) $r, $replies));
                    $state = node_state(info_fields($text));
                } else {
                    $r = $replies[0];
                    $m = [];
                    if (is_array($r)) { for ($j = 0; $j + 1 < count($r); $j += 2) { $m[$r[$j]] = $r[$j + 1]; } }
                    $state = ['master' => (int) ($m['port'] ?? 0), 'flags' => $m['flags'] ?? '?',
                        'failover' => $m['failover-state'] ?? '', 'epoch' => (int) ($m['config-epoch'] ?? 0)];
                }
            } catch (RuntimeException $e) {
                // A late answer must not be read as the next round's: a new connection.
                $timedOut = stream_get_meta_data($conns[$k]->stream())['timed_out'] ?? false;
                $conns[$k]->close();
                unset($conns[$k]);
                $state = ['down' => $timedOut ? 'no answer' : 'closed'];
            }
        } else {
            $state = ['down' => str_contains($sent[$k], 'refused') ? 'refused' : $sent[$k]];
        }
        $key = "{$t['kind']}{$t['i']}";
        $sh = shape($state);
        if (($last[$key] ?? null) === $sh) { continue; }
        $last[$key] = $sh;
        $ev = $t['kind'] === 'node'
            ? ['op' => 'repl', 'node' => $t['i'], 't0' => $t0, 'dt' => round($now() - $t0, 1), 'state' => $state]
            : ['op' => 'named', 'sentinel' => $t['i'], 't0' => $t0] + $state;
        fwrite($out, json_encode($ev, JSON_UNESCAPED_SLASHES) . "\n");
    }
    $left = EVERY_MS - ($now() - $round);
    if ($left > 0) { usleep((int) ($left * 1000)); }
}
