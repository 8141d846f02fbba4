<?php
// The one RESP client of the PHP tools, tests and benches: a connection to a server
// behind the extension's back, to set up or look at what the lock wrote. Never the
// thing measured or tested: the lock under test is the extension's own.
//
//   Resp          a connection: new Resp('redis://[user:pass@]host:port[/db]');
//                 call() (an error reply thrown), ask() (an error reply returned as a
//                 RuntimeException), send() and read() apart, pipeline().
//   Resp::once()  one command on a connection of its own (the phpt helpers' rl_cmd()),
//   Resp::poll()  the same for a wait loop: null where the server refuses or drops.
//   RespRedis     the phpredis methods the benches and the bridges' tests call, where
//                 phpredis is not installed (Debian ships none for PHP 8.5 and 8.6).
//
// RESP2 only: no caller asks for RESP3 (HELLO without a version answers in RESP2).
// Replies: a simple string or bulk as a string, an integer as an int, nil (a nil bulk
// or array) as null, an array as a list, an error as a RuntimeException object with
// the server's text (ask(), read(), pipeline(); inside arrays too).

final class Resp
{
    /** @var resource */
    private $conn;

    /**
     * Connects to $dsn within $timeout seconds and gives each read $readTimeout; sends
     * AUTH when the dsn has a password (and a user), SELECT when it names a database.
     * A connection refused, or an AUTH or SELECT refused, is thrown (RuntimeException).
     */
    public function __construct(private string $dsn, float $timeout = 2.0, float $readTimeout = 5.0)
    {
        $u = parse_url($dsn);
        if (!isset($u['host'], $u['port'])) { throw new RuntimeException("Resp: not a redis://host:port dsn: $dsn"); }
        $c = @stream_socket_client("tcp://{$u['host']}:{$u['port']}", $errno, $errstr, $timeout);
        if ($c === false) { throw new RuntimeException("connect $dsn: $errstr"); }
        stream_set_timeout($c, (int) $readTimeout, (int) (fmod($readTimeout, 1) * 1e6));
        $this->conn = $c;
        if (isset($u['pass'])) {
            // As the extension reads a dsn: the user and password as written, not decoded.
            $user = $u['user'] ?? '';
            $this->call(...($user !== '' ? ['AUTH', $user, $u['pass']] : ['AUTH', $u['pass']]));
        }
        $db = trim($u['path'] ?? '', '/');
        if ($db !== '') { $this->call('SELECT', $db); }
    }

    /** A connection to host:port, no password. */
    public static function at(string $host, int $port, float $timeout = 2.0, float $readTimeout = 5.0): self
    {
        return new self("redis://$host:$port", $timeout, $readTimeout);
    }

    /** One command on a connection of its own; its reply as read() gives it. A connection that fails is thrown. */
    public static function once(string $dsn, string ...$args): mixed
    {
        $c = new self($dsn);
        try {
            return $c->ask(...$args);
        } finally {
            $c->close();
        }
    }

    /**
     * once() for a wait loop: a server that is still starting, syncing or failing over
     * may refuse or drop the connection, which is then one more try (null).
     */
    public static function poll(string $dsn, string ...$args): mixed
    {
        try { return self::once($dsn, ...$args); } catch (RuntimeException $e) { return null; }
    }

    /** One command as RESP: an array of bulk strings. */
    public static function encode(string ...$args): string
    {
        $buf = '*' . count($args) . "\r\n";
        foreach ($args as $a) { $buf .= '$' . strlen($a) . "\r\n" . $a . "\r\n"; }
        return $buf;
    }

    /** One command; its reply, an error reply thrown (the RuntimeException read() returns). */
    public function call(string ...$args): mixed
    {
        $r = $this->ask(...$args);
        if ($r instanceof RuntimeException) { throw $r; }
        return $r;
    }

    /** One command; its reply as read() gives it, an error reply included. */
    public function ask(string ...$args): mixed
    {
        $this->send($args);
        return $this->read();
    }

    /** Commands (each an array of arguments) in one write; their replies, in order, as read() gives them. */
    public function pipeline(array $commands): array
    {
        $this->send(...$commands);
        return array_map(fn() => $this->read(), $commands);
    }

    /** Writes commands (each an array of arguments) in one write, without reading their replies. */
    public function send(array ...$commands): void
    {
        $buf = implode('', array_map(fn(array $args) => self::encode(...array_map('strval', $args)), $commands));
        for ($off = 0; $off < strlen($buf); ) {
            $n = @fwrite($this->conn, substr($buf, $off));
            if ($n === false || $n === 0) { throw new RuntimeException("{$this->dsn}: write failed"); }
            $off += $n;
        }
    }

    /**
     * The next reply: an error reply as a RuntimeException object (not thrown). A
     * connection closed, or a read past the read timeout, is thrown.
     */
    public function read(): mixed
    {
        $line = fgets($this->conn);
        if ($line === false) { throw new RuntimeException("{$this->dsn}: read failed (closed, or timed out)"); }
        $v = substr($line, 1, -2);
        switch ($line[0]) {
            case '+': return $v;
            case '-': return new RuntimeException($v);
            case ':': return (int) $v;
            case '$':
                if ((int) $v < 0) { return null; }
                $want = (int) $v + 2;                  // the data and its CRLF
                $data = '';
                while (strlen($data) < $want) {
                    $chunk = fread($this->conn, $want - strlen($data));
                    if ($chunk === false || $chunk === '') { throw new RuntimeException("{$this->dsn}: short reply"); }
                    $data .= $chunk;
                }
                return substr($data, 0, -2);
            case '*':
                if ((int) $v < 0) { return null; }
                $items = [];
                for ($i = 0; $i < (int) $v; $i++) { $items[] = $this->read(); }
                return $items;
        }
        throw new RuntimeException("{$this->dsn}: bad reply: $line");
    }

    /** The connection, for stream_select() (a subscriber's messages). */
    public function stream()
    {
        return $this->conn;
    }

    public function close(): void
    {
        if (is_resource($this->conn)) { fclose($this->conn); }
    }
}

/**
 * The phpredis methods the benches' own data (counters) and the bridges' tests call,
 * with phpredis's return values, over one Resp connection: for where phpredis is not
 * installed. An error reply is thrown.
 */
final class RespRedis
{
    private ?Resp $conn = null;

    public function connect(string $host, int $port, float $timeout = 2.0): bool
    {
        $this->conn = Resp::at($host, $port, $timeout, 10.0);
        return true;
    }

    /** A password, or [user, password]. */
    public function auth(string|array $credentials): bool { return $this->call('AUTH', ...(array) $credentials) === 'OK'; }
    public function select(int $db): bool { return $this->call('SELECT', (string) $db) === 'OK'; }
    public function get(string $key): string|false { return $this->call('GET', $key) ?? false; }
    public function set(string $key, string|int $value): bool { return $this->call('SET', $key, (string) $value) === 'OK'; }
    public function incr(string $key): int { return $this->call('INCR', $key); }
    public function decr(string $key): int { return $this->call('DECR', $key); }
    public function exists(string ...$keys): int { return $this->call('EXISTS', ...$keys); }
    public function pttl(string $key): int { return $this->call('PTTL', $key); }
    /** @return list<string> */
    public function keys(string $pattern): array { return $this->call('KEYS', $pattern); }

    /** Keys as arguments, or one array of them, as phpredis takes them. */
    public function del(string|array ...$keys): int
    {
        return $this->call('DEL', ...array_merge(...array_map(fn($k) => (array) $k, $keys)));
    }

    /** @return array<string, string> */
    public function hGetAll(string $key): array
    {
        $flat = $this->call('HGETALL', $key);
        $out = [];
        for ($i = 0; $i + 1 < count($flat); $i += 2) { $out[$flat[$i]] = $flat[$i + 1]; }
        return $out;
    }

    /** phpredis's order: the script, the keys then the arguments, how many of them are keys. */
    public function eval(string $script, array $args = [], int $numKeys = 0): mixed
    {
        return $this->call('EVAL', $script, (string) $numKeys, ...array_map('strval', $args));
    }

    public function close(): bool
    {
        $this->conn?->close();
        $this->conn = null;
        return true;
    }

    /** Sends one command and returns its reply (an error reply is thrown). */
    public function call(string ...$args): mixed
    {
        if ($this->conn === null) { throw new RuntimeException('RespRedis: not connected'); }
        return $this->conn->call(...$args);
    }
}
