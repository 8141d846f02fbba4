#!/usr/bin/env bash
# Usage: tools/bench/bench-zts.sh   (make bench-zts)
# Builds the module for the ZTS PHP (tools/env/php-src.sh zts, cached) and runs
# bench/zts.php on a throwaway server: Debian's NTS CLI against the ZTS CLI, side by
# side. Then the callgrind instruction count per cycle on each (repeatable whatever
# the machine does): (N=1100 - N=100) / 1000 cycles of bench/cycle.php native.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${REDIS_LOCK_TEST_DSN:-}" ]; then
    exec tools/test/with-redis.sh "$0" "$@"
fi
prefix=$(tools/env/php-src.sh zts)
PHP=$prefix/bin/php PHP_CONFIG=$prefix/bin/php-config cargo build --release --lib --target-dir target/zts 2>&1 | tail -n 1
nts="php -n -d extension=posix -d extension=$PWD/target/release/libredis_lock.so"
zts="$prefix/bin/php -n -d extension=$PWD/target/zts/release/libredis_lock.so"
BENCH_NTS=$nts BENCH_ZTS=$zts php -n -d extension=posix bench/zts.php
if command -v valgrind >/dev/null; then
    count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null $1 bench/cycle.php native "$2" 0 2>&1 \
        | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'; }
    for which in nts zts; do
        cmd=${!which}
        count "$cmd" 100 >/dev/null # a fresh server's first run is an outlier
        echo "callgrind, $which: $(( ($(count "$cmd" 1100) - $(count "$cmd" 100)) / 1000 )) instructions per cycle"
    done
fi
