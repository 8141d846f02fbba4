#!/usr/bin/env bash
# Usage: tools/test/test-under-load.sh [-n RUNS] [-i] [-r] [-b|-B] [PHPT...]
# The phpt suite (or the PHPT files or directories given) RUNS times in a row
# (default 10), with -b the bridges' phpunit tests after it in each run (-B: the
# bridges' only), while a CPU hog keeps every core busy: one busy loop per core
# (nproc), at the tests' own priority, so that a test that leans on timing it
# cannot guarantee fails here rather than now and then in CI. Every run goes on
# to the end and its failed tests (those that passed only on run-tests.php's
# retry too) are listed after it; the exit status is 1 when any run failed.
# -i runs the same loop idle, without the hog (to compare). -r turns the retry off
# (tools/test/phpt.sh -r), so that a failed first try shows its diff instead of
# being tried again. The phpt files run as make test-php runs them, PHPT_JOBS at a
# time (tools/test/phpt.sh), so the tests beside each other are part of the load.
# The bridges' tests run as make test-bridges runs them (phpunit, Debian's php.ini
# and conf.d read).
#
# The hog is plain sh, no new dependency. It is stopped on any exit of this script
# (trap), and each loop also ends by itself once this script is gone, so a
# SIGKILL leaves nothing spinning.
#
# Environment: EXT (the module, default target/release/libredis_lock.so), PHP,
# PHP_CONFIG, HOGS (busy loops, default nproc), PHPT_JOBS, REDIS_LOCK_TEST_SERVER.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=10
hog=1
retry=1
phpt=1
bridges=0
while getopts n:irbB opt; do
    case $opt in
        n) runs=$OPTARG ;;
        i) hog=0 ;;
        r) retry=0 ;;
        b) bridges=1 ;;
        B) bridges=1; phpt=0 ;;
        *) sed -n '2,15s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- php-tests

php=${PHP:-php}
ext=${EXT:-$PWD/target/release/libredis_lock.so}
[ -f "$ext" ] || { echo "test-under-load: no $ext (make build)" >&2; exit 2; }
phpunit=$(command -v phpunit || true)
[ "$bridges" = 0 ] || [ -n "$phpunit" ] || { echo "test-under-load: no phpunit (tools/env/deps.sh installs it)" >&2; exit 2; }
run_tests=$("${PHP_CONFIG:-php-config}" --extension-dir)/build/run-tests.php
logs=$(mktemp -d "${TMPDIR:-/tmp}/redis-lock-load.XXXXXX")
no_retry=()
[ "$retry" = 0 ] && no_retry=(-r)

hog_pids=()
stop_hog() {
    local p
    for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${hog_pids[@]}"; do wait "$p" 2>/dev/null || true; done
    hog_pids=()
}
trap stop_hog EXIT
# Interrupted: stop the hog (EXIT's trap), with the status a signal gives.
trap 'exit 130' INT
trap 'exit 143' TERM HUP

if [ "$hog" = 1 ]; then
    me=$$
    for _ in $(seq "${HOGS:-$(nproc)}"); do
        # kill -0 is a builtin: the loop is all CPU and stops when this script is gone.
        sh -c 'while kill -0 "$1" 2>/dev/null; do i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; done' hog "$me" &
        hog_pids+=($!)
    done
    echo "test-under-load: ${#hog_pids[@]} busy loops on $(nproc) cores; logs in $logs" >&2
fi

failed_runs=0
start=$(date +%s)
for run in $(seq "$runs"); do
    t0=$(date +%s)
    rc=0
    bad=
    summary=
    if [ "$phpt" = 1 ]; then
        REDIS_LOCK_EXT=$ext TEST_PHP_EXECUTABLE=$(command -v "$php") NO_INTERACTION=1 \
            tools/test/with-redis.sh tools/test/phpt.sh "${no_retry[@]}" "$php" "$run_tests" -q --show-diff --set-timeout 300 \
            -W "$logs/results.$run" -n -d extension=posix -d extension="$ext" "$@" \
            > "$logs/run.$run" 2>&1 || rc=$?
        # run-tests.php tries a failed test again once when it uses usleep() or
        # microtime(), as nearly all of these do, and then calls it WARNED ("passed on
        # retry"): here that is a flake too, and fails the run.
        bad=$(grep -v '^PASSED\|^SKIPPED' "$logs/results.$run" 2>/dev/null || true)
        # "Tests failed    :    1 (  1.4%) ..." -> "failed 1"
        summary=$(sed -nE 's/^Tests (passed|warned|failed|skipped) *: *([0-9]+).*/\1 \2/p' "$logs/run.$run" | paste -sd, - || true)
    fi
    if [ "$bridges" = 1 ]; then
        brc=0
        REDIS_LOCK_EXT=$ext tools/test/with-redis.sh "$php" -d extension="$ext" "$phpunit" -c bridges/phpunit.xml \
            > "$logs/bridges.$run" 2>&1 || brc=$?
        # "Tests: 60, Assertions: 400, Skipped: 3." or "OK (60 tests, 400 assertions)"
        summary="${summary:+$summary; }bridges: $(grep -E '^(OK|Tests:|FAILURES|ERRORS)' "$logs/bridges.$run" | tail -n 1)"
        if [ "$brc" != 0 ]; then
            rc=$brc
            # phpunit's numbered failures: "1) RedisLock\Bridge\Tests\...::testX" and the message after it.
            nl=$'\n'
            bad="${bad:+$bad$nl}$(grep -A 3 -E '^[0-9]+\) ' "$logs/bridges.$run" | head -n 40)"
        fi
    fi
    if [ "$rc" != 0 ] || [ -n "$bad" ]; then
        failed_runs=$((failed_runs + 1))
        echo "run $run/$runs: FAILED in $(( $(date +%s) - t0 )) s: $summary" >&2
        if [ -n "$bad" ]; then echo "$bad" | sed 's/^/    /' >&2; else tail -q -n 5 "$logs/run.$run" "$logs/bridges.$run" 2>/dev/null >&2 || true; fi
    else
        echo "run $run/$runs: ok in $(( $(date +%s) - t0 )) s: $summary" >&2
    fi
done
echo "test-under-load: $runs runs, $failed_runs failed, $(( $(date +%s) - start )) s; logs in $logs" >&2
[ "$failed_runs" = 0 ]
