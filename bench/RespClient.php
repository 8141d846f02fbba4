<?php
// A minimal Redis client for the benches' own data (counters, gauges) where phpredis
// is not installed (Debian ships none for PHP 8.5 and 8.6): the few phpredis calls
// they make (connect, auth, get, set, del, incr), on one connection, RESP2.
// Never the thing measured: the lock under test is the extension's own.
final class RespClient
{
    /** @var resource|null */
    private $conn = null;

    public function connect(string $host, int $port, float $timeout = 2.0): bool
    {
        $c = @stream_socket_client("tcp://$host:$port", $errno, $errstr, $timeout);
        if ($c === false) { throw new RuntimeException("RespClient: cannot connect to $host:$port: $errstr"); }
        stream_set_timeout($c, 10);
        $this->conn = $c;
        return true;
    }

    /** A password, or [user, password]. */
    public function auth(string|array $credentials): bool { return $this->call('AUTH', ...(array) $credentials) === 'OK'; }
    public function get(string $key): string|false { return $this->call('GET', $key) ?? false; }
    public function set(string $key, string|int $value): bool { return $this->call('SET', $key, (string) $value) === 'OK'; }
    public function incr(string $key): int { return $this->call('INCR', $key); }
    public function del(string ...$keys): int { return $this->call('DEL', ...$keys); }

    /** Sends one command and returns its reply (a Redis error is thrown). */
    public function call(string ...$args): mixed
    {
        if ($this->conn === null) { throw new RuntimeException('RespClient: not connected'); }
        $msg = '*' . count($args) . "\r\n";
        foreach ($args as $a) { $msg .= '$' . strlen($a) . "\r\n" . $a . "\r\n"; }
        if (fwrite($this->conn, $msg) !== strlen($msg)) { throw new RuntimeException('RespClient: write failed'); }
        return $this->reply();
    }

    private function reply(): mixed
    {
        $line = fgets($this->conn);
        if ($line === false) { throw new RuntimeException('RespClient: the connection closed or timed out'); }
        $rest = substr(rtrim($line, "\r\n"), 1);
        switch ($line[0]) {
            case '+': return $rest;
            case ':': return (int) $rest;
            case '-': throw new RuntimeException("RespClient: Redis replied $rest");
            case '$':
                if ((int) $rest < 0) { return null; }
                $want = (int) $rest + 2;                  // the data and its CRLF
                $data = '';
                while (strlen($data) < $want) {
                    $chunk = fread($this->conn, $want - strlen($data));
                    if ($chunk === false || $chunk === '') { throw new RuntimeException('RespClient: short reply'); }
                    $data .= $chunk;
                }
                return substr($data, 0, -2);
            case '*':
                if ((int) $rest < 0) { return null; }
                $items = [];
                for ($i = 0; $i < (int) $rest; $i++) { $items[] = $this->reply(); }
                return $items;
        }
        throw new RuntimeException('RespClient: unexpected reply ' . trim($line));
    }
}
