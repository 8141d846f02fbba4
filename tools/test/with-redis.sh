#!/usr/bin/env bash
# Usage: tools/test/with-redis.sh CMD [ARGS...]
# Starts a throwaway server on a free loopback port, exports REDIS_LOCK_TEST_DSN
# for CMD, runs it, and stops the server whatever happens. The server is
# redis-server, or $REDIS_LOCK_TEST_SERVER-server (valkey-server) when that is set.
set -euo pipefail
server=${REDIS_LOCK_TEST_SERVER:-redis}
dir=$(mktemp -d "${TMPDIR:-/tmp}/redis-lock-test.XXXXXX")
port=$(php -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
cleanup() {
    if [ -f "$dir/redis.pid" ]; then kill -9 "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT
"$server-server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
for _ in $(seq 100); do
    "$server-cli" -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.05
done
export REDIS_LOCK_TEST_DSN="redis://127.0.0.1:$port"
echo "with-redis: $("$server-server" --version | cut -d" " -f1-3) on 127.0.0.1:$port" >&2
"$@"
