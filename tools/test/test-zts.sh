#!/usr/bin/env bash
# Usage: tools/test/test-zts.sh   (make test-zts, part of make test-all)
#
# The module on a thread-safe (ZTS) PHP built from Debian's source with FrankenPHP's
# flags (tools/env/php-src.sh zts, cached after the first build):
#   1. it builds against it and loads; the whole phpt suite passes with the ZTS CLI
#      (tools/test/phpt.sh: PHPT_JOBS tests at a time);
#   2. make dist writes the -zts archive PIE asks for;
#   3. the threaded harness (harness/: the embed SAPI, 16 PHP threads in one process,
#      against a real server): an exact counter under one lock (and, as the control,
#      lost updates without it); one thread's request end releasing only its own
#      locks; a fatal error in one thread releasing its locks and no other thread's;
#      one watchdog keeping several threads' locks past 4 leases; a fork from one thread
#      while another holds a lock; 1,000 requests on threads that come and go with no
#      growth in connections or memory; FrankenPHP's worker mode (several handled
#      requests inside one PHP request, under a SAPI named frankenphp), with its
#      control under another name;
#   4. the nemesis (tools/nemesis/) with 3 of its 6 workers as threads of the harness.
# Its `# figure:` lines are the figures docs/install.md quotes.
set -uo pipefail
cd "$(dirname "$0")/../.."

if [ -z "${REDIS_LOCK_TEST_DSN:-}" ]; then
    exec tools/test/with-redis.sh "$0" "$@"
fi
prefix=$(tools/env/php-src.sh zts)
case $? in
    0) ;;
    # Outside the project: nothing to build a ZTS PHP from on this release here. The
    # checks run where the source is served (Debian 12, as in CI's first run).
    3) echo "# skipped: no source of this release's PHP could be fetched to build a ZTS PHP from"
       exit 0 ;;
    *) echo "not ok - building the ZTS PHP (tools/env/php-src.sh zts)"; exit 1 ;;
esac
zts_php=$prefix/bin/php
zts_config=$prefix/bin/php-config
. tools/test/tap.sh

echo "# ZTS PHP: $(cat "$prefix/.complete")"
out=$("$zts_php" -n -r 'echo PHP_ZTS ? "zts" : "nts";' 2>&1)
if [ "$out" = zts ]; then ok "the PHP built from source is thread-safe"; else not_ok "the PHP built from source is thread-safe" "$out"; fi

# 1. Build, load, the phpt suite.
if build=$(PHP=$zts_php PHP_CONFIG=$zts_config cargo build --release --lib --target-dir target/zts 2>&1); then
    ok "the module builds against the ZTS PHP"
else
    not_ok "the module builds against the ZTS PHP" "$(tail -n 20 <<<"$build")"
    finish; exit $?
fi
module=$PWD/target/zts/release/libredis_lock.so
out=$("$zts_php" -n -d "extension=$module" -r 'echo extension_loaded("redis_lock") && class_exists("Lock") ? "loaded" : "missing";' 2>&1)
if [ "$out" = loaded ]; then ok "the ZTS PHP loads it, without a warning"; else not_ok "the ZTS PHP loads it, without a warning" "$out"; fi

echo "# the phpt suite with the ZTS CLI"
suite=$(REDIS_LOCK_EXT=$module TEST_PHP_EXECUTABLE=$zts_php NO_INTERACTION=1 \
    tools/test/phpt.sh "$zts_php" "$prefix/lib/php/build/run-tests.php" -q --show-diff --set-timeout 300 \
    -n -d "extension=$module" php-tests 2>&1)
summary=$(grep -E "^Tests (passed|failed|skipped) *:" <<<"$suite" | tr -s ' ')
if grep -q "^Tests failed *: *0 " <<<"$suite" && grep -q "^Tests passed *: *[1-9]" <<<"$suite"; then
    ok "the whole phpt suite passes with the ZTS CLI ($(grep "^Tests passed" <<<"$suite" | tr -s ' '))"
else
    not_ok "the whole phpt suite passes with the ZTS CLI" "$summary
$(sed "s/\x1b\[[0-9;]*m//g" <<<"$suite" | grep -E "^(FAIL|SKIP|BORK)")
$(sed "s/\x1b\[[0-9;]*m//g" <<<"$suite" | sed -n '/^========DIFF========/,/^========DONE========/p' | head -n 60)"
fi

# 2. make dist, for this PHP: the -zts asset.
dist_dir=$(mktemp -d "${TMPDIR:-/tmp}/redis-lock-zts-dist.XXXXXX")
trap 'rm -rf "$dist_dir"' EXIT
out=$(PHP_CONFIG=$zts_config tools/package/dist.sh "$module" "$dist_dir" 2>&1)
asset=$(cd "$dist_dir" && ls ./*.tgz 2>/dev/null)
minor=$("$zts_config" --version | cut -d. -f1,2)
if [ "$asset" = "./php_redis_lock-$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)_php$minor-$(uname -m)-linux-glibc-zts.tgz" ]; then
    ok "make dist writes the -zts archive (${asset#./})"
else
    not_ok "make dist writes the -zts archive" "$asset
$out"
fi

# 3. The threaded harness, linked to the ZTS libphp.
echo "# building the threaded harness"
if build=$(PHP=$zts_php PHP_CONFIG=$zts_config cargo build --release --manifest-path harness/Cargo.toml \
        --target-dir target/zts-harness 2>&1); then
    ok "the threaded harness builds against the ZTS libphp"
else
    not_ok "the threaded harness builds against the ZTS libphp" "$(tail -n 20 <<<"$build")"
    finish; exit $?
fi
harness=$PWD/target/zts-harness/release/redis-lock-zts-harness
for scenario in counter counter-unlocked request-end fatal watchdog fork churn worker worker-control; do
    echo "# harness: $scenario"
    out=$(LD_LIBRARY_PATH=$prefix/lib timeout 300 "$harness" "$module" "$scenario" 2>&1)
    rc=$?
    while IFS= read -r line; do
        case $line in
            "ok - "*) ok "${line#ok - }" ;;
            "not ok - "*) not_ok "${line#not ok - }" "" ;;
            *) echo "$line" ;;
        esac
    done <<<"$out"
    if ((rc != 0)) && ! grep -q "^not ok" <<<"$out"; then not_ok "harness $scenario exited $rc" "$out"; fi
done

# 4. The nemesis with threads: 3 of its 6 workers are PHP threads of the harness.
echo "# the nemesis, 3 of 6 workers as threads (tools/nemesis/suite.sh threads)"
out=$(NEMESIS_HARNESS=$harness NEMESIS_ZTS_EXT=$module tools/nemesis/suite.sh threads 2>&1)
if [ $? -eq 0 ]; then
    ok "the nemesis finds no violation with threads among the workers ($(grep -m1 '^| single |' <<<"$out" \
        | awk -F' *[|] *' '{print $7 " sections, " $12 " lease violations, " $8 " overlaps, " $9 " learned, " $10 " silent, stale " $13}'))"
else
    not_ok "the nemesis finds no violation with threads among the workers" "$(grep -v '^|---' <<<"$out" | head -n 40)"
fi

finish
