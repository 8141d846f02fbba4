#!/usr/bin/env bash
# Usage: tools/test/phpt.sh [-r] PHP RUN_TESTS [ARGS...]
# The phpt suite through PHP's run-tests.php (RUN_TESTS, run by PHP with -n; ARGS are
# run-tests.php's: options, the tested PHP's ini, the files), PHPT_JOBS tests at a time
# (default 3; 1 runs them one after another). Nearly every test waits (on a lock, a
# lease, a failover) far more than it computes: the suite is about 300 s on one
# worker for 65 s of CPU: 152 s on two workers, 136 s on three with the seven tests
# that run alone (107 s without them; docs/testing.md).
#
# A test that must not run beside some other says so in a --CONFLICTS-- section
# (run-tests.php: tests naming the same key never run at once, one naming `all` runs
# alone, at the end). Which tests and why: docs/testing.md, "Tests side by side".
#
# It runs a copy of run-tests.php that hands each worker one test at a time: the
# original hands out up to 32, so the suite went out in 4 batches and one worker
# could be left with the long tests, and a test's conflict keys were held for its
# whole batch. Where a run-tests.php has no such line, its own batches stand (the
# conflicts hold all the same), and this says so.
#
# -r: the copy never tries a failed test again (make test-stress). run-tests.php
# retries once any test that uses usleep() or microtime(), as nearly all of these
# do, and a pass on the retry hides a flake; without it a failed first try shows its
# diff.
set -uo pipefail
retry=1
if [ "${1:-}" = -r ]; then retry=0; shift; fi
[ $# -ge 2 ] || { sed -n '2,4s/^# \{0,1\}//p' "$0" >&2; exit 2; }
php=$1
run_tests=$2
shift 2
jobs=${PHPT_JOBS:-3}

dir=$(mktemp -d "${TMPDIR:-/tmp}/redis-lock-phpt.XXXXXX")
trap 'rm -rf "$dir"' EXIT
copy=$dir/run-tests.php
sed 's/^\( *\)\$maxBatchSize = .*;$/\1$maxBatchSize = 1;/' "$run_tests" > "$copy"
if [ "$jobs" -gt 1 ] && ! grep -q '^ *\$maxBatchSize = 1;$' "$copy"; then
    echo "phpt: $run_tests hands out tests in batches of its own (no \$maxBatchSize line): they stand" >&2
fi
if [ "$retry" = 0 ]; then
    sed -i 's/^function error_may_be_retried(\(.*\)): bool$/function error_may_be_retried(\1): bool { return false; }\nfunction error_may_be_retried_off(\1): bool/' "$copy"
    grep -q 'error_may_be_retried_off' "$copy" \
        || { echo "phpt: $run_tests has no error_may_be_retried() to turn off" >&2; exit 2; }
fi
parallel=()
[ "$jobs" -gt 1 ] && parallel=("-j$jobs")
"$php" -n "$copy" "${parallel[@]}" "$@"
