#!/usr/bin/env bash
# Usage: tools/test-zts.sh   (make test-zts, part of make test)
#
# Under threads the lock does not exclude yet, so a thread-safe (ZTS) PHP is refused
# everywhere, loudly. This checks each refusal against a real ZTS PHP built from
# Debian's source (tools/php-src.sh zts, cached after the first build):
#   1. the module, built with cargo against it all the same, refuses to start: PHP
#      stops with the reason before any script runs;
#   2. `make build PHP_CONFIG=<zts php-config>` stops with the reason before cargo runs;
#   3. phpize's configure, given the ZTS php-config, stops with the reason.
# Each says the same sentence. Each has a control beside it that passes on the same
# ground without the refusal (the ZTS PHP without the module, the Debian NTS PHP), so
# a check fails when the refusal is gone, not merely when something else broke.
set -uo pipefail
cd "$(dirname "$0")/.."

refusal="redis_lock does not support thread-safe (ZTS) PHP yet: under threads its locks would not exclude each other. Use a non-thread-safe (NTS) PHP: the CLI, php-fpm, or mod_php under Apache's prefork MPM."

prefix=$(tools/php-src.sh zts)
case $? in
    0) ;;
    # Outside the project: nothing to build a ZTS PHP from on this release here. The
    # checks run where the source is served (Debian 12, as in CI's first run).
    3) echo "# skipped: no source of this release's PHP could be fetched to build a ZTS PHP from"
       echo "0 passed, 0 failed, 11 skipped"
       exit 0 ;;
    *) exit 1 ;;
esac
zts_php=$prefix/bin/php
zts_config=$prefix/bin/php-config
work=$(mktemp -d "${TMPDIR:-/tmp}/redis-lock-zts.XXXXXX")
trap 'rm -rf "$work"' EXIT
. tools/tap.sh
# run COMMAND...: sets $out (stdout and stderr) and $rc.
run() { out=$("$@" 2>&1); rc=$?; }
# refused NAME: the last run failed, saying the refusal.
refused() {
    if ((rc != 0)) && grep -qF -- "$refusal" <<<"$out"; then ok "$1"; else not_ok "$1 (exit $rc)" "$out"; fi
}

echo "# ZTS PHP: $(cat "$prefix/.complete")"
run "$zts_php" -n -r 'echo PHP_ZTS ? "zts" : "nts", "\n";'
if [ "$out" = zts ]; then ok "the PHP built from source is thread-safe"; else not_ok "the PHP built from source is thread-safe" "$out"; fi

# 1. The module's startup. It is built the way the Makefile would not build it: cargo
#    directly, against the ZTS PHP, into a target folder of its own.
echo "# building the module against the ZTS PHP with cargo"
if build=$(PHP=$zts_php PHP_CONFIG=$zts_config cargo build --lib --target-dir target/zts 2>&1); then
    ok "cargo builds the module against a ZTS PHP"
    module=$PWD/target/zts/debug/libredis_lock.so
    script='echo "the script ran\n";'
    run "$zts_php" -n -r "$script"
    if ((rc == 0)) && [ "$out" = "the script ran" ]; then ok "control: the ZTS PHP runs a script without the module"
    else not_ok "control: the ZTS PHP runs a script without the module (exit $rc)" "$out"; fi
    run "$zts_php" -n -d "extension=$module" -r "$script"
    refused "the module refuses to start under a ZTS PHP"
    if grep -qF "Unable to start redis_lock module" <<<"$out" && ! grep -qF "the script ran" <<<"$out"; then
        ok "PHP stops at startup: no script runs with the module refused"
    else not_ok "PHP stops at startup: no script runs with the module refused" "$out"; fi
    run "$zts_php" -n -d "extension=$module" -m
    if ((rc != 0)) && ! grep -qx redis_lock <<<"$out"; then ok "php -m does not list the refused module"
    else not_ok "php -m does not list the refused module (exit $rc)" "$out"; fi
else
    not_ok "cargo builds the module against a ZTS PHP" "$(tail -n 20 <<<"$build")"
fi

# 2. The Makefile: the refusal comes before cargo is run. The control is the same
#    guard on the Debian PHP that `make test` builds for.
run make --no-print-directory build PHP_CONFIG="$zts_config"
refused "make build refuses a ZTS php-config"
if grep -qE "Compiling|Finished|cargo build" <<<"$out"; then not_ok "make build stops before cargo runs" "$out"
else ok "make build stops before cargo runs"; fi
run make --no-print-directory nts-only
if ((rc == 0)); then ok "control: make's guard passes the Debian NTS PHP"; else not_ok "control: make's guard passes the Debian NTS PHP" "$out"; fi

# 3. phpize's configure, in a copy of phpize/ (phpize writes its files there). The
#    control is the same copy configured for the Debian NTS PHP.
cp -r phpize "$work/zts" && cp -r phpize "$work/nts"
run bash -c "cd '$work/zts' && '$prefix/bin/phpize' && ./configure --with-php-config='$zts_config'"
refused "phpize's configure refuses a ZTS php-config"
run bash -c "cd '$work/nts' && phpize && ./configure --with-php-config=\"\$(command -v php-config)\""
if ((rc == 0)); then ok "control: phpize's configure accepts the Debian NTS PHP"
else not_ok "control: phpize's configure accepts the Debian NTS PHP" "$(tail -n 20 <<<"$out")"; fi

finish
