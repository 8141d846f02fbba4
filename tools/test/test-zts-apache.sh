#!/usr/bin/env bash
# Usage: tools/test/test-zts-apache.sh   (make test-zts-apache, part of make test-all)
#
# The module under threads, in Apache httpd with mpm_event and a thread-safe mod_php
# built from Debian's source (tools/env/php-src.sh zts-apache, cached), 2 processes x
# 16 threads, against a throwaway server. The module is built with cargo against
# that PHP, into target/zts-apache.
#
#   - 3,000 requests from 32 clients (ab -r -c 32), each taking one lock around a
#     non-atomic read-increment-write of a file: the counter ends exact and equal to
#     the writes each run logged, and every request is answered 200 (ab -r goes on
#     after a receive error and counts it; plain ab stops there and prints no
#     summary, which this script used to read as "0 failed");
#   - meanwhile a request holds another lock for 2.5 s: no other thread's request
#     end frees it, and it still owns it at its end;
#   - a request that dies of a fatal error holding a lock: the lock is released;
#   - with MaxConnectionsPerChild 50 (processes recycled under load; ServerLimit
#     leaves room for the children still finishing): the counter is exact again
#     (equal to the writes, and every release succeeded; a connection an exiting
#     child cuts or resets before its answer, at most 1%, is said and allowed, as
#     ab counts each such cut twice: a receive error and a short reply), no child
#     dies of a signal, and afterwards the server has no more clients than the threads alive
#     could hold (each thread keeps at most its command connection and a wake
#     subscriber).
#
# Installs Apache (apache2-bin, apache2-utils) when missing, as root. Exit status 0
# with a "skipped" line when the mirror serves no PHP source for this release.
set -uo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${REDIS_LOCK_TEST_DSN:-}" ]; then
    exec tools/test/with-redis.sh "$0" "$@"
fi
prefix=$(tools/env/php-src.sh zts-apache)
case $? in
    0) ;;
    3) echo "skipped: the mirror serves no PHP source for this release (tools/env/php-src.sh)"; exit 0 ;;
    *) echo "not ok - building the ZTS PHP with Apache's module (tools/env/php-src.sh zts-apache)"; exit 1 ;;
esac
missing=()
for p in apache2-bin apache2-utils; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    [ "$(id -u)" -eq 0 ] || { echo "not ok - needs ${missing[*]}: run as root, or install them"; exit 1; }
    DEBIAN_FRONTEND=noninteractive tools/env/apt-get.sh install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || { echo "not ok - installing ${missing[*]}"; exit 1; }
fi

. tools/test/tap.sh

echo "# ZTS PHP with mod_php: $(cat "$prefix/.complete")"
if ! build=$(PHP=$prefix/bin/php PHP_CONFIG=$prefix/bin/php-config \
        cargo build --release --lib --target-dir target/zts-apache 2>&1); then
    not_ok "the module builds against the ZTS PHP" "$build"
    exit 1
fi
module=$PWD/target/zts-apache/release/libredis_lock.so

work=$(mktemp -d /tmp/redis-lock-apache.XXXXXX)
chmod 755 "$work"
port=$(php -n -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
dsn=$REDIS_LOCK_TEST_DSN
redis() { redis-cli -u "$dsn" "$@"; }
# get PATH: prints the HTTP status, then the body.
get() {
    php -n -r '$b = @file_get_contents($argv[1], false, stream_context_create(["http" => ["ignore_errors" => true]]));
        echo explode(" ", $http_response_header[0] ?? "x 000")[1], "\n", $b;' "http://127.0.0.1:$port/$1"
}
stop() { [ -f "$work/httpd.pid" ] && /usr/sbin/apache2 -f "$work/httpd.conf" -k stop >/dev/null 2>&1; sleep 1; }
trap 'stop; rm -rf "$work"' EXIT

mkdir -p "$work/www"
cat >"$work/php.ini" <<EOF
extension=$module
display_errors=0
log_errors=1
error_log=$work/php-error.log
EOF
# Each request: one lock around a read-increment-write that loses updates without it.
# counter_page FILE TAKE: TAKE is the PHP that sets $t from $l.
counter_page() {
    cat >"$work/www/$1" <<EOF
<?php
\$l = new Lock('apache:counter', 10, 30, ['dsn' => '$dsn']);
$2
if (\$t === false) { http_response_code(503); exit("timeout\n"); }
\$n = (int) file_get_contents('$work/counter');
usleep(200);
file_put_contents('$work/counter', (string) (\$n + 1));
\$released = \$l->releaseLock(\$t);
file_put_contents('$work/done.log', \$released ? "ok\\n" : "lost\\n", FILE_APPEND);
if (!\$released) { http_response_code(500); exit("lost\n"); }
echo "ok\n";
EOF
}
counter_page counter.php '$t = $l->addLock();'
# The same, waiting through a LockWait's stream (stream_select), as an event loop does.
counter_page async.php '$w = $l->addLockAsync();
while (!$w->poll()) { $r = [$w->stream()]; $x = $y = null; stream_select($r, $x, $y, 1, 0); }
$t = $w->result();'
cat >"$work/www/long.php" <<EOF
<?php
\$l = new Lock('apache:long', 0, 30, ['dsn' => '$dsn']);
\$t = \$l->addLock();
if (\$t === false) { exit("busy\n"); }
usleep(2500000);
echo \$l->isOwned(\$t) && \$l->releaseLock(\$t) ? "kept\n" : "lost\n";
EOF
cat >"$work/www/fatal.php" <<EOF
<?php
\$l = new Lock('apache:fatal', 0, 30, ['dsn' => '$dsn']);
\$l->addLock();
undefined_function_called_on_purpose();
EOF
touch "$work/counter" "$work/done.log" "$work/php-error.log"
chown -R www-data:www-data "$work/www" "$work/counter" "$work/done.log" "$work/php-error.log"

# httpd.conf for mpm_event, MaxConnectionsPerChild $1.
write_conf() {
    cat >"$work/httpd.conf" <<EOF
ServerRoot $work
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile $work/httpd.pid
DefaultRuntimeDir $work
ErrorLog $work/error.log
User www-data
Group www-data
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule php_module $prefix/lib/apache2/libphp.so
StartServers 2
ServerLimit 4
ThreadsPerChild 16
ThreadLimit 16
MaxRequestWorkers 32
MinSpareThreads 1
MaxSpareThreads 32
MaxConnectionsPerChild $1
DocumentRoot $work/www
<Directory $work/www>
  Require all granted
</Directory>
<FilesMatch "\.php\$">
  SetHandler application/x-httpd-php
</FilesMatch>
PHPIniDir $work
EOF
}
start() {
    write_conf "$1"
    /usr/sbin/apache2 -f "$work/httpd.conf" -k start || return 1
    for _ in $(seq 50); do
        [ "$(get counter.php | head -n 1)" = 200 ] && return 0
        sleep 0.1
    done
    return 1
}
# load N: N requests from 32 clients. ab -r counts a receive error as a failed request
# instead of ending the run (and with it the summary, which read as "0 failed").
# Prints four numbers:
#   - the requests that failed otherwise than by a cut connection: non-2xx, a failed
#     connect, a length error that no receive error explains, any ab never completed;
#   - the counter;
#   - how many runs of the script wrote it and released (done.log, one line each,
#     "lost" when the release failed), then how many of those said "lost";
#   - the connections Apache cut before an answer: receive errors (ab also counts a
#     length error for each, as the reply was short) and errors on the socket (a
#     reset; ab sends that request again), which only process recycling may cause.
load() {
    echo 0 >"$work/counter"
    : >"$work/done.log"
    ab -r -q -n "$1" -c 32 "http://127.0.0.1:$port/${2:-counter.php}" >"$work/ab.out" 2>&1
    awk -v n="$1" '/^Complete requests:/ {c = $3} /^Failed requests:/ {f = $3} /^Non-2xx responses:/ {x = $3}
        /\(Connect:/ {gsub(/[(),]/, ""); for (i = 1; i < NF; i++) {
            if ($i == "Receive:") r = $(i + 1); if ($i == "Length:") l = $(i + 1); if ($i == "Exceptions:") e = $(i + 1) } }
        END {print f - r - e - (l < r ? l : r) + x + (n - c); print r + e}' "$work/ab.out" >"$work/ab.counts"
    sed -n 1p "$work/ab.counts"
    cat "$work/counter"
    echo
    wc -l <"$work/done.log"
    grep -c lost "$work/done.log"
    sed -n 2p "$work/ab.counts"
}
# What went wrong in a load, for a failed check: ab's errors and failure counts, and
# Apache's lines about its children.
load_detail() {
    grep -E '^(apr_|Complete requests|Failed requests|Non-2xx|   \()' "$work/ab.out"
    grep -E 'exit signal|AH00|AH03' "$work/error.log" | tail -n 5
}

check "Apache starts with mpm_event and the ZTS mod_php loading redis_lock" start 0
out=$(get counter.php | tail -n 1)
[ "$out" = ok ] && ok "one request takes and releases a lock" || not_ok "one request takes and releases a lock" "$out$(tail -n 5 "$work/error.log" "$work/php-error.log")"

get long.php | tail -n 1 >"$work/long.out" &
long=$!
sleep 0.3
read -r -d '' fails count done lost cut < <(load 3000; printf '\0')
wait "$long"
[ "$fails" = 0 ] && [ "$cut" = 0 ] && ok "3,000 requests from 32 clients: none failed" || not_ok "3,000 requests from 32 clients: none failed" "$fails failed
$(load_detail)"
[ "$count" = 3000 ] && [ "$done" = 3000 ] && [ "$lost" = 0 ] && ok "the counter is exact: 3000, from 3000 writes" || not_ok "the counter is exact" "it is $count, not 3000, after $done writes ($lost releases failed)"
[ "$(cat "$work/long.out")" = kept ] && ok "a 2.5 s hold survives the other threads' request ends" \
    || not_ok "a 2.5 s hold survives the other threads' request ends" "$(cat "$work/long.out")"

code=$(get fatal.php | head -n 1)
held=$(redis EXISTS apache:fatal)
[ "$code" = 500 ] && [ "$held" = 0 ] && ok "a request that dies of a fatal error releases its lock" \
    || not_ok "a request that dies of a fatal error releases its lock" "HTTP $code, EXISTS $held"
read -r -d '' fails count done lost cut < <(load 1000 async.php; printf '\0')
[ "$fails" = 0 ] && [ "$cut" = 0 ] && [ "$count" = 1000 ] && [ "$done" = 1000 ] && [ "$lost" = 0 ] \
    && ok "1,000 requests waiting through LockWait's stream (stream_select) in Apache's threads: none failed, the counter is exact" \
    || not_ok "1,000 requests waiting through LockWait's stream in Apache's threads" "$fails failed, counter $count after $done writes ($lost releases failed)
$(load_detail)"
stop

check "Apache restarts with MaxConnectionsPerChild 50" start 50
read -r -d '' fails count done lost cut < <(load 2000; printf '\0')
# A connection an exiting child cut before its answer is Apache's doing, not the
# lock's: allowed, and said. Every run of the script must have counted once and
# released what it took, whether or not its answer reached ab.
[ "$cut" != 0 ] && echo "# $cut of 2000 connections cut by Apache before an answer (receive errors or resets), while children were recycled"
[ "$fails" = 0 ] && [ "$count" = "$done" ] && [ "$lost" = 0 ] && [ "$count" -ge $((2000 - cut)) ] && [ "$cut" -le 20 ] \
    && ok "with processes recycled under load: none failed, the counter is exact" \
    || not_ok "with processes recycled under load: none failed, the counter is exact" "$fails failed, $cut cut, counter $count after $done writes, $lost releases failed
$(load_detail)"
check "no Apache child died of a signal" bash -c "! grep -q 'exit signal' '$work/error.log'"
sleep 1
clients=$(redis INFO clients | tr -d '\r' | sed -n 's/^connected_clients://p')
[ "$clients" -le 66 ] && ok "no connection leaks with recycled processes: $clients clients for 32 threads" \
    || not_ok "no connection leaks with recycled processes" "$clients clients, more than 32 threads x 2 + 2"
check "no PHP error but the fatal one on purpose" bash -c "! grep -v 'undefined_function_called_on_purpose\|^#\|thrown in\|Stack trace' '$work/php-error.log' | grep -q ."

finish
