<?php

namespace RedisLock\Bridge\Tests;

/**
 * What the tests ask of a Redis client, where phpredis is not installed (Debian
 * ships none for PHP 8.5 and 8.6): the phpredis methods they call, with phpredis's
 * return values, over one connection (RESP2). Only to look at what the bridges wrote.
 */
final class RespRedis
{
    /** @var resource */
    private $conn;

    public function __construct(string $host, int $port)
    {
        $c = @stream_socket_client("tcp://$host:$port", $errno, $errstr, 2.0);
        if ($c === false) {
            throw new \RuntimeException("RespRedis: cannot connect to $host:$port: $errstr");
        }
        stream_set_timeout($c, 10);
        $this->conn = $c;
    }

    public function get(string $key): string|false { return $this->call('GET', $key) ?? false; }
    public function exists(string ...$keys): int { return $this->call('EXISTS', ...$keys); }
    public function pttl(string $key): int { return $this->call('PTTL', $key); }
    /** @return list<string> */
    public function keys(string $pattern): array { return $this->call('KEYS', $pattern); }
    public function select(int $db): bool { return $this->call('SELECT', (string) $db) === 'OK'; }
    public function incr(string $key): int { return $this->call('INCR', $key); }
    public function decr(string $key): int { return $this->call('DECR', $key); }

    /** Keys as arguments, or one array of them, as phpredis takes them. */
    public function del(string|array ...$keys): int
    {
        $flat = array_merge(...array_map(fn($k) => (array) $k, $keys));
        return $this->call('DEL', ...$flat);
    }

    /** @return array<string, string> */
    public function hGetAll(string $key): array
    {
        $flat = $this->call('HGETALL', $key);
        $out = [];
        for ($i = 0; $i + 1 < \count($flat); $i += 2) {
            $out[$flat[$i]] = $flat[$i + 1];
        }
        return $out;
    }

    /** phpredis's order: the script, the keys then the arguments, how many of them are keys. */
    public function eval(string $script, array $args = [], int $numKeys = 0): mixed
    {
        return $this->call('EVAL', $script, (string) $numKeys, ...array_map('strval', $args));
    }

    private function call(string ...$args): mixed
    {
        $msg = '*' . \count($args) . "\r\n";
        foreach ($args as $a) {
            $msg .= '$' . \strlen($a) . "\r\n" . $a . "\r\n";
        }
        fwrite($this->conn, $msg);
        return $this->reply();
    }

    private function reply(): mixed
    {
        $line = fgets($this->conn);
        if ($line === false) {
            throw new \RuntimeException('RespRedis: the connection closed or timed out');
        }
        $rest = substr(rtrim($line, "\r\n"), 1);
        switch ($line[0]) {
            case '+': return $rest;
            case ':': return (int) $rest;
            case '-': throw new \RuntimeException("RespRedis: Redis replied $rest");
            case '$':
                if ((int) $rest < 0) {
                    return null;
                }
                $data = '';
                while (\strlen($data) < (int) $rest + 2) {
                    $chunk = fread($this->conn, (int) $rest + 2 - \strlen($data));
                    if ($chunk === false || $chunk === '') {
                        throw new \RuntimeException('RespRedis: short reply');
                    }
                    $data .= $chunk;
                }
                return substr($data, 0, -2);
            case '*':
                $items = [];
                for ($i = 0; $i < (int) $rest; $i++) {
                    $items[] = $this->reply();
                }
                return (int) $rest < 0 ? null : $items;
        }
        throw new \RuntimeException('RespRedis: unexpected reply ' . trim($line));
    }
}
