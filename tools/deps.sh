#!/usr/bin/env bash
# Usage: tools/deps.sh [--install-tests]
#
# Installs what `make` needs and is missing, on any Debian release, as root:
#   - libclang (ext-php-rs's build script runs bindgen, which loads it);
#   - the PHP that the release ships (or the Debian PHP already installed), with
#     its -cli, -dev, -redis and -fpm packages (php-tests run a real php-fpm);
#   - redis-server, redis-tools and redis-sentinel, and Valkey's three where the
#     release ships them (Debian 13 does: `make test` then runs the suite on both);
#   - cargo-php, for the stubs;
#   - phpunit and the framework packages the bridges are tested against and
#     `make bench` compares with (php-symfony-lock, php-symfony-semaphore,
#     php-laravel-framework: whichever versions the release ships);
#   - what the test applications under bridges/tests/apps/ need, as each lists it in
#     its `packages` file (one package a line; @PHP@ stands for php<ver>; a line
#     ending in ? is installed only where the release ships it).
# --install-tests adds what `make test-install` needs: cgi-fcgi and composer. Prints nothing when everything is there already.
#
# Exits 75 when apt itself fails (the archive unreachable, or broken that day: Debian
# testing moves), so that CI can tell the archive's trouble from a failure of ours.
set -euo pipefail

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
known() { [ -n "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')" ]; }

updated=0
archive_failed() {
    echo "deps: apt-get $1 failed: the Debian archive could not give what the build needs (exit 75)" >&2
    exit 75
}
apt_update() {
    ((updated)) && return 0
    [ "$(id -u)" -eq 0 ] || return 0
    apt-get update -qq || archive_failed update
    updated=1
}

# The PHP to build for: the Debian PHP already installed (the one `php` runs), else
# the one the release ships, as its php-cli metapackage names it.
php_version() {
    local v
    if command -v php >/dev/null 2>&1; then
        v=$(php -n -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
        if installed "php$v-cli"; then echo "$v"; return; fi
    fi
    known php-cli || apt_update
    v=$(apt-cache depends php-cli 2>/dev/null | sed -n 's/^ *Depends: php\([0-9][0-9.]*\)-cli$/\1/p' | head -n 1)
    [ -n "$v" ] || { echo "deps: this release has no php-cli package to take the PHP version from" >&2; exit 1; }
    echo "$v"
}

ver=$(php_version)
packages=(libclang-dev "php$ver-cli" "php$ver-dev" "php$ver-redis" "php$ver-fpm" redis-server redis-tools redis-sentinel
          phpunit php-symfony-lock php-symfony-semaphore php-laravel-framework)
optional=()
for list in "$(dirname "$0")"/../bridges/tests/apps/*/packages; do
    [ -f "$list" ] || continue
    while read -r p; do
        p=${p%%#*}; p=${p//@PHP@/php$ver}; p=${p//[[:space:]]/}
        [ -n "$p" ] || continue
        if [ "${p%\?}" != "$p" ]; then optional+=("${p%\?}"); else packages+=("$p"); fi
    done <"$list"
done
if [ "${1:-}" = "--install-tests" ]; then
    packages+=(libfcgi-bin composer)
fi

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
# Valkey, and the optional packages, only where the release has them; asking costs a
# look at the local lists.
if ! installed valkey-server; then
    ((${#missing[@]})) && apt_update
    known valkey-server && missing+=(valkey-server valkey-tools valkey-sentinel)
fi
for p in "${optional[@]}"; do
    installed "$p" && continue
    ((${#missing[@]})) && apt_update
    known "$p" && missing+=("$p")
done

if ((${#missing[@]})); then
    echo "deps: installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        echo "deps: run as root, or install them: apt-get install ${missing[*]}" >&2
        exit 1
    fi
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || archive_failed "install ${missing[*]}"
fi
# A package install may start a system redis-server or valkey-server; the tests never use it.

command -v cargo >/dev/null || { echo "deps: cargo (Rust ≥ 1.88) is required (install it with rustup)" >&2; exit 1; }
if ! cargo php --version >/dev/null 2>&1; then
    echo "deps: installing cargo-php"
    cargo install cargo-php --version 0.2.2 --locked --quiet
fi
