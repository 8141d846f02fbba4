#!/usr/bin/env bash
# Usage: tools/test/test-frankenphp.sh   (make test-frankenphp)
#
# The module in real FrankenPHP (tools/env/frankenphp.sh: its Go module, built against
# the project's ZTS PHP), against a throwaway server. Two FrankenPHP processes, each
# with 32 PHP threads: 16 for classic requests, 16 running the worker script
# (tools/test/frankenphp-www/worker.php, frankenphp_handle_request()). The Go client
# tools/env/frankenphp/load sends the load, 32 connections spread over both, two
# requests to the first for one to the second.
#
#   - classic and worker mode: 3,000 requests each incrementing a file under one
#     lock: none fails, the counter is exact (the control without the lock loses
#     updates); meanwhile one request holds another lock 2.5 s and keeps it;
#   - redis_lock_stats() per process: each one counts exactly the acquisitions of
#     the requests it served (the other's never);
#   - the per-request release: a lock the script leaves held is released when its
#     request ends, in classic mode and at the end of a worker's handled request
#     (the worker script living on); held on only where asked (auto_release =>
#     false), across other requests, until released with its token; a Lock object
#     kept from an earlier handled request no longer holds; a lock taken at the
#     worker's boot is released when the boot ends, one asked for is held;
#   - a fatal error and a max_execution_time timeout (PHP's per-thread timers)
#     release the lock the request held, in both modes;
#   - the worker restarted every 50 requests (MAX_REQUESTS, FrankenPHP's docs'
#     way): 3,000 requests lose nothing (the counter exact, the statistics exact
#     with the boots' own locks), the lock each run takes in its loop is held
#     through all its requests and released when the run ends, and the server
#     has at most one connection per PHP thread afterwards.
# Its `# figure:` lines are requests per second (docs/install.md quotes them).
#
# Exit status 0 with a "skipped" line when FrankenPHP cannot be built here (no
# source for the ZTS PHP, or no Go): tools/env/frankenphp.sh's exit 3.
set -uo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${REDIS_LOCK_TEST_DSN:-}" ]; then
    exec tools/test/with-redis.sh "$0" "$@"
fi
server=$(tools/env/frankenphp.sh)
case $? in
    0) ;;
    3) echo "# skipped: FrankenPHP cannot be built here (tools/env/frankenphp.sh says why above)"; exit 0 ;;
    *) echo "not ok - building FrankenPHP (tools/env/frankenphp.sh)"; exit 1 ;;
esac
load=$(dirname "$server")/load
prefix=$(tools/env/php-src.sh zts) || { echo "not ok - the ZTS PHP (tools/env/php-src.sh zts)"; exit 1; }
. tools/test/tap.sh

echo "# $(cat "$(dirname "$server")/.complete")"
# The module, built as tools/test/test-zts.sh builds it (the same target dir), or
# REDIS_LOCK_ZTS_EXT: one built elsewhere for this PHP (a variant to see a check fail).
module=${REDIS_LOCK_ZTS_EXT:-$PWD/target/zts/release/libredis_lock.so}
if [ -z "${REDIS_LOCK_ZTS_EXT:-}" ] && ! build=$(PHP=$prefix/bin/php PHP_CONFIG=$prefix/bin/php-config \
        cargo build --release --lib --target-dir target/zts 2>&1); then
    not_ok "the module builds against the ZTS PHP" "$(tail -n 20 <<<"$build")"
    finish; exit $?
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/redis-lock-frankenphp.XXXXXX")
www=$PWD/tools/test/frankenphp-www
dsn=$REDIS_LOCK_TEST_DSN
redis() { redis-cli -u "$dsn" "$@"; }
names=()
stop_all() {
    local n
    for n in "${names[@]}"; do
        [ -f "$work/$n.pid" ] || continue
        kill -TERM "$(cat "$work/$n.pid")" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$(cat "$work/$n.pid")" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$(cat "$work/$n.pid")" 2>/dev/null
        rm -f "$work/$n.pid"
    done
}
trap 'stop_all; rm -rf "$work"' EXIT

# start NAME [FLAG...]: a FrankenPHP process; sets url_NAME once it answers.
start() {
    local name=$1; shift
    names+=("$name")
    "$server" -listen 127.0.0.1:0 -root "$www" -threads 32 -worker "$www/worker.php" -worker-num 16 \
        -ini "extension=$module" -ini "redis_lock.dsn=$dsn" -ini "redis_lock_test.dir=$work" \
        -ini display_errors=0 -ini log_errors=1 -ini "error_log=$work/php-errors.log" "$@" \
        >"$work/$name.out" 2>>"$work/server.log" &
    echo $! >"$work/$name.pid"
    local addr=
    for _ in $(seq 100); do
        addr=$(sed -n 's/^listening //p' "$work/$name.out")
        [ -n "$addr" ] && [ "$(get "http://$addr/index.php?do=hello" | tail -n 1)" = hello ] && break
        addr=
        sleep 0.1
    done
    [ -n "$addr" ] || { tail -n 20 "$work/server.log"; return 1; }
    printf -v "url_$name" 'http://%s' "$addr"
}
# get URL: prints the HTTP status, then the body.
get() {
    php -n -r '$b = @file_get_contents($argv[1], false, stream_context_create(["http" => ["ignore_errors" => true, "timeout" => 30]]));
        echo explode(" ", $http_response_header[0] ?? "x 000")[1], "\n", $b;' "$1"
}
body() { get "$1" | tail -n +2; }
# gone KEY: true once KEY is free, within 2 s (a request's end follows its response).
gone() { for _ in $(seq 40); do [ "$(redis EXISTS "$1")" = 0 ] && return 0; sleep 0.05; done; return 1; }
# run_load N PATH [nolock]: N requests to PATH, two on A for one on B; sets
# L_OK L_FAILED L_RPS L_A L_B (the replies that came back 200, per server) and L_OUT.
run_load() {
    L_OUT=$("$load" -n "$1" -c 32 "$url_a$2" "$url_a$2" "$url_b$2")
    read -r L_OK L_FAILED L_RPS < <(awk '/^requests/ {print $4, $6, $10}' <<<"$L_OUT")
    L_A=$(awk -v u="$url_a$2" '$1 == "url" && $2 == u {print $4}' <<<"$L_OUT")
    L_B=$(awk -v u="$url_b$2" '$1 == "url" && $2 == u {print $4}' <<<"$L_OUT")
}
stat_of() { body "$1/index.php?do=stats" | php -n -r '$s = json_decode(stream_get_contents(STDIN), true); echo $s[$argv[1]] ?? "none";' "$2"; }
boots() { grep -c " start " "$work/events" 2>/dev/null || true; }

if start a && start b; then
    ok "two FrankenPHP processes start with the module, 32 PHP threads each (16 running the worker script)"
else
    not_ok "two FrankenPHP processes start with the module" "$(tail -n 20 "$work/server.log")"
    finish; exit $?
fi
for mode in classic worker; do
    path=$([ $mode = classic ] && echo /index.php || echo /worker/)
    out=$(body "$url_a$path?do=info")
    [[ $out == "frankenphp "*" zts redis_lock "* ]] && ok "$mode mode: PHP runs under the SAPI frankenphp, thread-safe, with redis_lock ($out)" \
        || not_ok "$mode mode: PHP runs under the SAPI frankenphp, with redis_lock" "$out"
done

# Throughput with no lock, an uncontended lock per request, and the counter.
for mode in classic worker; do
    path=$([ $mode = classic ] && echo /index.php || echo /worker/)
    for what in hello own; do
        run_load 3000 "$path?do=$what"
        if [ "$L_OK" = 3000 ]; then
            echo "# figure: $mode mode, $what: $L_RPS requests/s (3,000 requests, 32 connections, 2 x 16 threads)"
        else
            not_ok "$mode mode: 3,000 $what requests succeed" "$L_OUT"
        fi
    done
done

for mode in classic worker; do
    path=$([ $mode = classic ] && echo /index.php || echo /worker/)
    boots_before=$(boots)
    echo 0 >"$work/counter"
    echo 0 >"$work/counter-control"
    body "$url_a/index.php?do=stats&reset=1" >/dev/null
    body "$url_b/index.php?do=stats&reset=1" >/dev/null
    body "$url_b$path?do=long&key=fp:long:$mode" >"$work/long.out" &
    long=$!
    sleep 0.3
    run_load 3000 "$path?do=counter"
    wait "$long"
    echo "# figure: $mode mode, one lock around a counter: $L_RPS requests/s"
    [ "$L_FAILED" = 0 ] && ok "$mode mode: 3,000 requests on one lock from 32 clients, none failed" \
        || not_ok "$mode mode: 3,000 requests on one lock from 32 clients, none failed" "$L_OUT"
    count=$(cat "$work/counter")
    [ "$count" = 3000 ] && ok "$mode mode: the counter is exact: 3000" || not_ok "$mode mode: the counter is exact" "it is $count"
    [ "$(cat "$work/long.out")" = kept ] && ok "$mode mode: a 2.5 s hold survives the other threads' request ends" \
        || not_ok "$mode mode: a 2.5 s hold survives the other threads' request ends" "$(cat "$work/long.out")"
    # The long hold is one more acquisition on b.
    acq_a=$(stat_of "$url_a" acquired) acq_b=$(stat_of "$url_b" acquired)
    rel_a=$(stat_of "$url_a" released) rel_b=$(stat_of "$url_b" released)
    if [ "$acq_a" = "$L_A" ] && [ "$acq_b" = "$((L_B + 1))" ] && [ "$rel_a" = "$L_A" ] && [ "$rel_b" = "$((L_B + 1))" ]; then
        ok "$mode mode: redis_lock_stats() per process: $acq_a and $acq_b acquisitions and releases, the requests each served"
    else
        not_ok "$mode mode: redis_lock_stats() per process counts its own requests" \
            "a: acquired $acq_a released $rel_a for $L_A requests; b: acquired $acq_b released $rel_b for $L_B + 1"
    fi
    [ "$(boots)" = "$boots_before" ] && ok "$mode mode: no worker restarted meanwhile (the control for the restarts below)" \
        || not_ok "$mode mode: no worker restarted meanwhile" "$boots_before boots before, $(boots) after"
    echo 0 >"$work/counter"
    run_load 1000 "$path?do=counter&async=1"
    count=$(cat "$work/counter")
    [ "$L_FAILED" = 0 ] && [ "$count" = 1000 ] && ok "$mode mode: 1,000 requests waiting through LockWait's stream (stream_select): none failed, the counter is exact" \
        || not_ok "$mode mode: 1,000 requests waiting through LockWait's stream" "$count of 1000, $L_FAILED failed: $L_OUT"
    run_load 1000 "$path?do=counter&nolock=1"
    count=$(cat "$work/counter-control")
    [ "$L_FAILED" = 0 ] && [ "$count" -lt 1000 ] && ok "$mode mode, control: without the lock the counter loses updates ($count of 1000)" \
        || not_ok "$mode mode, control: without the lock the counter loses updates" "$count of 1000, $L_FAILED failed"
done

# The per-request release, and holds kept only where asked.
for mode in classic worker; do
    path=$([ $mode = classic ] && echo /index.php || echo /worker/)
    key=fp:$mode:take
    token=$(body "$url_a$path?do=take&key=$key")
    [ ${#token} = 32 ] && gone "$key" && ok "$mode mode: a lock the script leaves held is released when its request ends" \
        || not_ok "$mode mode: a lock the script leaves held is released when its request ends" "token $token, EXISTS $(redis EXISTS "$key")"
    key=fp:$mode:keep
    token=$(body "$url_a$path?do=take&key=$key&keep=1")
    run_load 500 "$path?do=hello"
    if [ ${#token} = 32 ] && [ "$(redis GET "$key")" = "$token" ]; then
        ok "$mode mode: with auto_release => false it is held on, through 500 other requests"
    else
        not_ok "$mode mode: with auto_release => false it is held on" "token $token, key $(redis GET "$key")"
    fi
    out=$(body "$url_b$path?do=release&key=$key&token=$token")
    [ "$out" = released ] && ok "$mode mode: and released with its token from another process" \
        || not_ok "$mode mode: and released with its token from another process" "$out"
done
# A Lock object kept in a worker from one handled request to the next: with 16
# worker threads, 40 requests in a row reach some thread twice.
outs=$(for _ in $(seq 40); do body "$url_a/worker/?do=stale"; done | sort | uniq -c)
gone_n=$(awk '$2 == "previous" && $3 == "gone" {print $1}' <<<"$outs")
if [ -n "$gone_n" ] && ! grep -q "previous released" <<<"$outs"; then
    ok "worker mode: a Lock object kept from an earlier handled request no longer holds ($gone_n of 40)"
else
    not_ok "worker mode: a Lock object kept from an earlier handled request no longer holds" "$outs"
fi
outs=$(for _ in $(seq 5); do body "$url_a/index.php?do=stale"; done | sort -u)
[ "$outs" = first ] && ok "classic mode, control: each request starts with fresh statics" || not_ok "classic mode, control: each request starts with fresh statics" "$outs"
life=$(redis --scan --pattern 'fp:life:*' | wc -l)
boot=$(redis --scan --pattern 'fp:boot:*' | wc -l)
[ "$boot" = 0 ] && ok "worker mode: a lock taken at the worker's boot is released when the boot ends" \
    || not_ok "worker mode: a lock taken at the worker's boot is released when the boot ends" "$boot fp:boot:* keys"
[ "$life" = 32 ] && ok "worker mode: one taken at boot with auto_release => false is held: 32 workers, 32 locks" \
    || not_ok "worker mode: one taken at boot with auto_release => false is held" "$life fp:life:* keys for 32 workers"

# Fatal errors and timeouts.
for mode in classic worker; do
    path=$([ $mode = classic ] && echo /index.php || echo /worker/)
    key=fp:$mode:fatal
    code=$(get "$url_a$path?do=fatal&key=$key" | head -n 1)
    gone "$key" && [ "$code" = 500 ] && ok "$mode mode: a fatal error releases the lock its request held" \
        || not_ok "$mode mode: a fatal error releases the lock its request held" "HTTP $code, EXISTS $(redis EXISTS "$key")"
    key=fp:$mode:timeout
    start_s=$SECONDS
    out=$(get "$url_a$path?do=timeout&key=$key")
    if gone "$key" && [ "$(head -n 1 <<<"$out")" = 500 ] && grep -q "Maximum execution time of 1 second exceeded" "$work/php-errors.log"; then
        ok "$mode mode: max_execution_time (1 s, PHP's per-thread timer) ends a request and releases its lock ($((SECONDS - start_s)) s)"
    else
        not_ok "$mode mode: max_execution_time ends a request and releases its lock" "$out; EXISTS $(redis EXISTS "$key"); $(tail -n 3 "$work/php-errors.log")"
    fi
    cat "$work/php-errors.log" >>"$work/php-errors.all"
    : >"$work/php-errors.log"
done
stop_all

# The worker restarted every 50 requests.
echo "# worker mode with MAX_REQUESTS=50"
names=()
: >"$work/events"
if ! start a -worker-env MAX_REQUESTS=50 || ! start b -worker-env MAX_REQUESTS=50; then
    not_ok "FrankenPHP starts with MAX_REQUESTS=50" "$(tail -n 20 "$work/server.log")"
    finish; exit $?
fi
pid_a=$(body "$url_a/index.php?do=info" | awk '{print $NF}')
pid_b=$(body "$url_b/index.php?do=info" | awk '{print $NF}')
body "$url_a/index.php?do=stats&reset=1" >/dev/null
body "$url_b/index.php?do=stats&reset=1" >/dev/null
boots_a=$(grep -c "^$pid_a start" "$work/events") boots_b=$(grep -c "^$pid_b start" "$work/events")
echo 0 >"$work/counter"
run_load 3000 "/worker/?do=counter"
sleep 0.5
restarts_a=$(($(grep -c "^$pid_a start" "$work/events") - boots_a))
restarts_b=$(($(grep -c "^$pid_b start" "$work/events") - boots_b))
echo "# figure: worker mode restarted every 50 requests, one lock around a counter: $L_RPS requests/s ($((restarts_a + restarts_b)) restarts)"
count=$(cat "$work/counter")
[ "$L_FAILED" = 0 ] && [ "$count" = 3000 ] && [ $((restarts_a + restarts_b)) -gt 0 ] \
    && ok "worker restarts ($restarts_a and $restarts_b) under load lose nothing: none of 3,000 requests failed, the counter is exact" \
    || not_ok "worker restarts under load lose nothing" "$L_FAILED failed, counter $count, restarts $restarts_a + $restarts_b; $L_OUT"
# Since the reset: one acquisition per request; two at each restart's boot (the
# life and boot locks); one in the loop of each run that answered a request, the
# runs that ended and the live ones that hold theirs.
expected() { # PID REQUESTS RESTARTS
    local ids id loop=0
    loop=$(awk -v p="$1" '$1 == p && $2 == "end"' "$work/events" | wc -l)
    ids=$(awk -v p="$1" '$1 == p && $2 == "start" {s[$3] = 1} $1 == p && $2 == "end" {delete s[$3]} END {for (i in s) print i}' "$work/events")
    for id in $ids; do loop=$((loop + $(redis EXISTS "fp:between:$id"))); done
    echo $(($2 + 2 * $3 + loop))
}
acq_a=$(stat_of "$url_a" acquired) acq_b=$(stat_of "$url_b" acquired)
want_a=$(expected "$pid_a" "$L_A" "$restarts_a") want_b=$(expected "$pid_b" "$L_B" "$restarts_b")
[ "$acq_a" = "$want_a" ] && [ "$acq_b" = "$want_b" ] \
    && ok "redis_lock_stats() per process lives on across worker restarts: $acq_a and $acq_b acquisitions, as the requests and boots each served" \
    || not_ok "redis_lock_stats() per process lives on across worker restarts" "a: $acq_a acquisitions, $want_a expected; b: $acq_b, $want_b expected"
ended=$(awk '$2 == "end" {print $3}' "$work/events")
held=0
for id in $ended; do [ "$(redis EXISTS "fp:between:$id")" = 1 ] && held=$((held + 1)); done
n_ended=$(wc -w <<<"$ended")
[ "$n_ended" -gt 0 ] && [ "$held" = 0 ] && ok "the lock each run took in its loop was held through its requests and released when it ended ($n_ended runs ended)" \
    || not_ok "the lock each run took in its loop was released when it ended" "$held of $n_ended ended runs still hold it"
live=$(redis --scan --pattern 'fp:between:*' | wc -l)
[ "$live" -gt 0 ] && [ "$live" -le 32 ] && ok "control: the runs alive still hold theirs ($live)" \
    || not_ok "control: the runs alive still hold theirs" "$live fp:between:* keys for 32 workers"
clients=$(redis INFO clients | tr -d '\r' | sed -n 's/^connected_clients://p')
# Only the 32 worker threads took locks since the servers started; a thread keeps
# its connection from one run of the worker script to the next.
[ "$clients" -le 33 ] && ok "after $((restarts_a + restarts_b)) worker restarts the server has $clients clients: at most one per worker thread (32) and redis-cli" \
    || not_ok "at most one connection per worker thread after the restarts" "$clients clients for 32 worker threads"
stop_all
cat "$work/php-errors.log" >>"$work/php-errors.all" 2>/dev/null
check "no PHP error but the ones on purpose" bash -c "! grep -v 'undefined_function_called_on_purpose\|Maximum execution time\|^#\|thrown in\|Stack trace\|^\$' '$work/php-errors.all'"
finish
