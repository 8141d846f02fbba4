<?php
// Usage: php tools/test/fault-proxy.php UPSTREAM_PORT [DELAY_MS]
//
// The project's network fault injector (these machines have no netem): a loopback
// TCP proxy in front of a server, driven by the tests. It prints one line when it
// listens, "proxy PORT control PORT", and then obeys one-line commands on the
// control port, answering each with one line:
//
//   delay MS      each direction waits MS ms (a round trip gains 2 × MS), in order
//   partition     stops forwarding, closing nothing: what is sent waits in the
//                 kernel's buffers, as TCP keeps retransmitting through a partition
//   heal          forwards again; what waited is delivered, in order
//   halfopen      the connections open now are dead without knowing it: nothing of
//                 theirs is forwarded ever again and they are never closed (a peer
//                 that vanished); new connections work
//   reset         closes every connection now (both sides see it end)
//   nohello       answers `HELLO 3` itself, as a server without RESP3 does (an
//                 error), instead of forwarding it (a Redis 5, a RESP2-only proxy)
//   stats         "conns N accepted M writes U turns T": open connections, all
//                 accepted so far, the chunks clients sent (a request written at
//                 once is one chunk), and the round trips: the chunks a client sent
//                 first or after it was answered (a command written without waiting
//                 for the previous one's reply is not a round trip of its own; with
//                 a delay, a client cannot have heard in between)
//
// It runs until the control connection that sent "quit" or its parent kills it.
// php-tests/_helper.inc's rl_fault_proxy() starts it.

$upstream = (int) ($argv[1] ?? 0);
if ($upstream <= 0) {
    fwrite(STDERR, "usage: fault-proxy.php UPSTREAM_PORT [DELAY_MS]\n");
    exit(2);
}
$delay = ((float) ($argv[2] ?? 0)) / 1000;

// No Nagle on either side (Redis sets TCP_NODELAY too): otherwise a second small
// write waits for the first one's delayed ACK, up to 40 ms, which no real network adds.
$nodelay = stream_context_create(['socket' => ['tcp_nodelay' => true]]);
$listen = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $nodelay) or exit("fault-proxy: $errstr\n");
$control = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr) or exit("fault-proxy: $errstr\n");
$port = fn($s) => (int) substr(strrchr(stream_socket_get_name($s, false), ':'), 1);
stream_set_blocking($listen, false);
fwrite(STDOUT, sprintf("proxy %d control %d\n", $port($listen), $port($control)));
fflush(STDOUT);

/**
 * One proxied connection: two sockets, and for each direction the chunks read but
 * not yet due, as [due time, bytes].
 */
final class Pair {
    public array $queue = ['up' => [], 'down' => []];
    public bool $dead = false;
    /** Whether the client was sent something since its last chunk. */
    public bool $answered = true;
    public function __construct(public $client, public $server) {}
}

$pairs = [];
$controls = [];
$partitioned = false;
$accepted = 0;
$writes = 0;
$turns = 0;
$noHello = false;

$closePair = function (int $id) use (&$pairs) {
    foreach ([$pairs[$id]->client, $pairs[$id]->server] as $s) {
        if (is_resource($s)) { fclose($s); }
    }
    unset($pairs[$id]);
};

while (true) {
    $read = [$listen, $control];
    foreach ($controls as $c) { $read[] = $c; }
    if (!$partitioned) {
        foreach ($pairs as $p) {
            if (!$p->dead) { $read[] = $p->client; $read[] = $p->server; }
        }
    }
    // Wake for the next chunk that falls due.
    $next = null;
    if (!$partitioned) {
        foreach ($pairs as $p) {
            foreach ($p->queue as $q) {
                if ($q && ($next === null || $q[0][0] < $next)) { $next = $q[0][0]; }
            }
        }
    }
    $wait = $next === null ? 1.0 : max(0.0, $next - microtime(true));
    $write = $except = null;
    $n = @stream_select($read, $write, $except, (int) $wait, (int) (($wait - (int) $wait) * 1e6));
    if ($n === false) { continue; }
    foreach ($read as $s) {
        if ($s === $listen) {
            $client = @stream_socket_accept($listen, 0);
            if (!$client) { continue; }
            $server = @stream_socket_client("tcp://127.0.0.1:$upstream", $errno, $errstr, 2, STREAM_CLIENT_CONNECT, $nodelay);
            if (!$server) { fclose($client); continue; }
            stream_set_blocking($client, false);
            stream_set_blocking($server, false);
            $pairs[++$accepted] = new Pair($client, $server);
            continue;
        }
        if ($s === $control) {
            $c = @stream_socket_accept($control, 0);
            if ($c) { $controls[(int) $c] = $c; }
            continue;
        }
        if (isset($controls[(int) $s])) {
            $line = fgets($s);
            if ($line === false) { fclose($s); unset($controls[(int) $s]); continue; }
            $words = preg_split('/\s+/', trim($line));
            $answer = 'ok';
            switch ($words[0]) {
                case 'delay': $delay = ((float) ($words[1] ?? 0)) / 1000; break;
                case 'partition': $partitioned = true; break;
                case 'heal': $partitioned = false; break;
                case 'halfopen':
                    foreach ($pairs as $p) { $p->dead = true; $p->queue = ['up' => [], 'down' => []]; }
                    break;
                case 'nohello': $noHello = true; break;
                case 'reset':
                    foreach (array_keys($pairs) as $id) { $closePair($id); }
                    break;
                case 'stats':
                    $open = count(array_filter($pairs, fn($p) => !$p->dead));
                    $answer = "conns $open accepted $accepted writes $writes turns $turns";
                    break;
                case 'quit': exit(0);
                default: $answer = "error: unknown command {$words[0]}";
            }
            fwrite($s, "$answer\n");
            continue;
        }
        foreach ($pairs as $id => $p) {
            if ($s !== $p->client && $s !== $p->server) { continue; }
            $data = fread($s, 65536);
            if ($data === '' || $data === false) {
                if (feof($s)) { $closePair($id); }
                break;
            }
            if ($s === $p->client && $noHello && $data === "*2\r\n\$5\r\nHELLO\r\n\$1\r\n3\r\n") {
                $p->queue['down'][] = [microtime(true) + $delay, "-ERR unknown command 'HELLO', with args beginning with: '3'\r\n"];
                break;
            }
            if ($s === $p->client) {
                $writes++;
                $turns += $p->answered ? 1 : 0;
                $p->answered = false;
            }
            $p->queue[$s === $p->client ? 'up' : 'down'][] = [microtime(true) + $delay, $data];
            break;
        }
    }
    if ($partitioned) { continue; }
    // Deliver what is due, in order, each direction on its own.
    $now = microtime(true);
    foreach ($pairs as $id => $p) {
        foreach (['up' => $p->server, 'down' => $p->client] as $dir => $to) {
            while ($p->queue[$dir] && $p->queue[$dir][0][0] <= $now) {
                [, $bytes] = array_shift($p->queue[$dir]);
                stream_set_blocking($to, true);
                $ok = @fwrite($to, $bytes) === strlen($bytes);
                stream_set_blocking($to, false);
                if (!$ok) { $closePair($id); continue 3; }
                if ($dir === 'down') { $p->answered = true; }
            }
        }
    }
}
