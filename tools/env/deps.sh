#!/usr/bin/env bash
# Usage: [PHP_BRANCH=8.5] tools/env/deps.sh [--install-tests]
#
# Installs what `make` needs and is missing, on any Debian release, as root:
#   - libclang (ext-php-rs's build script runs bindgen, which loads it);
#   - one PHP, with its -cli, -dev, -redis and -fpm packages (php-tests run a real
#     php-fpm): the Debian PHP already installed (the one `php` runs), else the one
#     PHP_BRANCH names (Debian sid: 8.5 or 8.6, from experimental), else the one the
#     release ships. It never adds a second PHP: a package that does not exist for
#     this PHP (Debian has no php8.5-redis), or that would bring in another PHP (on
#     sid, php-laravel-framework needs php8.4-uuid), is skipped with a line saying so;
#   - gcc and libc6-dev (the clock shim the tests preload into redis-server);
#   - redis-server, redis-tools and redis-sentinel, and Valkey's three where the
#     release ships them (Debian 13 does: `make test` then runs the suite on both);
#   - prometheus and tmux, for the tests of the pool's metrics and `redis-lock top`;
#   - cargo-php, for the stubs;
#   - phpunit and the framework packages the bridges are tested against and
#     `make bench` compares with (php-symfony-lock, php-symfony-semaphore,
#     php-laravel-framework: whichever versions the release ships), AMPHP
#     (php-amphp-amp, for the async tests, where the release ships it: Debian 12,
#     not 13), with the PHP
#     modules they need as this PHP's packages (php8.5-xml, php8.5-mbstring, …, read
#     from their Depends), whoever installed the PHP; a module no package of this
#     PHP gives is named in one line, and deps stops;
#   - what the test applications under bridges/tests/apps/ need, as each lists it in
#     its `packages` file (one package a line; @PHP@ stands for php<ver>; a line
#     ending in ? is installed only where the release ships it).
# --install-tests adds what `make test-install` needs: cgi-fcgi and composer. Prints nothing when everything is there already.
#
# PHP_BRANCH (major.minor) and not PHP_VERSION: the official php images set
# PHP_VERSION to their full version (8.5.0), which names no Debian package.
#
# Exits 75 when apt itself fails (the archive unreachable, or broken that day: Debian
# testing moves), so that CI can tell the archive's trouble from a failure of ours.
set -euo pipefail

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
known() { [ -n "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')" ]; }

updated=0
# apt-get, waiting while another apt holds its locks (a clean root made beside).
apt_get=$(dirname "$0")/apt-get.sh
archive_failed() {
    echo "deps: apt-get $1 failed: the Debian archive could not give what the build needs (exit 75)" >&2
    exit 75
}
apt_update() {
    ((updated)) && return 0
    [ "$(id -u)" -eq 0 ] || return 0
    "$apt_get" update -qq || archive_failed update
    updated=1
}

# The PHP branch the release ships (8.2 on Debian 12, 8.4 on 13 and sid), as its
# php-cli metapackage names it.
release_php() {
    apt-cache depends php-cli 2>/dev/null | sed -n 's/^ *Depends: php\([0-9][0-9.]*\)-cli$/\1/p' | head -n 1
}

# The PHP to build for: the Debian PHP already installed (the one `php` runs), else
# the one PHP_BRANCH names, else the one the release ships.
php_version() {
    local v want=${PHP_BRANCH:-}
    [ -z "$want" ] || [[ $want =~ ^[0-9]+\.[0-9]+$ ]] \
        || { echo "deps: PHP_BRANCH is major.minor (8.5), not '$want'" >&2; exit 1; }
    if command -v php >/dev/null 2>&1; then
        v=$(php -n -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
        if installed "php$v-cli"; then
            if [ -n "$want" ] && [ "$want" != "$v" ]; then
                echo "deps: PHP $v is installed (php$v-cli runs as php): PHP_BRANCH=$want would add a second PHP beside it; remove php$v-* first, or leave PHP_BRANCH unset" >&2
                exit 1
            fi
            echo "$v"; return
        fi
    fi
    if [ -n "$want" ]; then
        known "php$want-cli" || apt_update
        known "php$want-cli" || { echo "deps: this release's archive has no php$want-cli (PHP_BRANCH=$want)" >&2; exit 1; }
        echo "$want"; return
    fi
    known php-cli || apt_update
    v=$(release_php)
    [ -n "$v" ] || { echo "deps: this release has no php-cli package to take the PHP version from" >&2; exit 1; }
    echo "$v"
}

ver=$(php_version)
# gcc and libc6-dev: the clock shim the tests and the nemesis preload into redis-server
# (tools/test/clockshift/), built with cc when first used (Rust links with cc too).
# prometheus: the server that scrapes a php-fpm pool's lock metrics in 120; tmux: the
# terminal 121 drives `redis-lock top` in.
packages=(libclang-dev gcc libc6-dev "php$ver-cli" "php$ver-dev" "php$ver-fpm" redis-server redis-tools redis-sentinel prometheus tmux)
# This PHP's own modules, which Debian may not build for every PHP (no php8.5-redis).
modules=("php$ver-redis")
# Packages that depend on "a PHP": on a release whose own PHP is another, they may bring it in.
others=(phpunit php-symfony-lock php-symfony-semaphore php-laravel-framework)
# AMPHP v2, for the async tests (114 skips where the release has none: Debian 13).
optional=(php-amphp-amp)
for list in "$(dirname "$0")"/../../bridges/tests/apps/*/packages; do
    [ -f "$list" ] || continue
    while read -r p; do
        p=${p%%#*}; p=${p//@PHP@/php$ver}; p=${p//[[:space:]]/}
        [ -n "$p" ] || continue
        if [ "${p%\?}" != "$p" ]; then optional+=("${p%\?}")
        elif [[ $p == "php$ver-"* ]]; then modules+=("$p")
        else others+=("$p"); fi
    done <"$list"
done
if [ "${1:-}" = "--install-tests" ]; then
    packages+=(libfcgi-bin composer)
fi

# The PHP modules that phpunit and the frameworks need (php-xml, php-mbstring, …), as
# this PHP's own packages (php8.5-xml, …). apt counts another PHP's module as enough:
# PHP 8.5 installed by hand on sid brings php-pear (php8.5-dev's recommends), with
# php-xml for 8.4, and phpunit then starts without dom on 8.5. The modules are read
# from the archive (each tool's Depends, recursively: php-X where a php<ver>-X exists
# for this PHP or the release's) and kept in target/ until the apt lists change.
# A module this PHP has no package for is looked for in `php -m` once the PHP is
# installed (json is built in), else named at the end (below).
module_provider() {   # the package of this PHP that is $1 or provides it
    known "$1" && { echo "$1"; return 0; }
    local ps
    ps=$(apt-cache showpkg "$1" 2>/dev/null | sed -n '/^Reverse Provides:/,$p' | awk 'NR > 1 {print $1}' | grep "^php$ver-" | sort -u)
    [ -n "$ps" ] || return 1
    # Built into the SAPIs (json): the CLI has it.
    if grep -qx "php$ver-cli" <<<"$ps"; then echo "php$ver-cli"; else head -n 1 <<<"$ps"; fi
}
tool_modules() {   # "TOOL MODULE PACKAGE" lines; PACKAGE is - where this PHP has none
    local t x p rel
    rel=$(release_php)
    for t in "$@"; do
        # A tool this release does not ship (php-symfony-scheduler on Debian 12) has none.
        { apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "$t" 2>/dev/null || true; } \
            | sed -nE 's/^ *\|?(Pre)?Depends: <?php-([a-z0-9]+)>?$/\2/p' | sort -u | while read -r x; do
                case $x in cli|cgi|fpm|common|dev|phpdbg|embed) continue ;; esac
                if p=$(module_provider "php$ver-$x"); then echo "$t $x $p"
                elif [ -n "$rel" ] && [ "$rel" != "$ver" ] && module_provider "php$rel-$x" >/dev/null; then echo "$t $x -"
                fi
            done
    done
}
tools=("${others[@]}" ${optional[@]+"${optional[@]}"})
modstamp=$(dirname "$0")/../../target/.deps-php$ver-modules
if [ -f "$modstamp" ] && [ "$(head -n 1 "$modstamp")" = "${tools[*]}" ] \
    && [ -z "$(find /var/lib/apt/lists -maxdepth 1 -newer "$modstamp" -print -quit 2>/dev/null)" ]; then
    tool_mods=$(tail -n +2 "$modstamp")
else
    apt_update
    tool_mods=$(tool_modules "${tools[@]}")
    { mkdir -p "$(dirname "$modstamp")" && printf '%s\n%s\n' "${tools[*]}" "$tool_mods" >"$modstamp"; } 2>/dev/null || true
fi
while read -r t x p; do
    [ -n "$p" ] && [ "$p" != - ] && modules+=("$p")
done <<<"$tool_mods"

missing=()
skipped=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
# Valkey, this PHP's modules and the optional packages only where the release has
# them; asking costs a look at the local lists.
lists_read() { ((${#missing[@]})) && apt_update; return 0; }
if ! installed valkey-server; then
    lists_read
    known valkey-server && missing+=(valkey-server valkey-tools valkey-sentinel)
fi
mapfile -t modules < <(printf '%s\n' "${modules[@]}" | awk '!seen[$0]++')
for p in "${modules[@]}"; do
    installed "$p" && continue
    lists_read
    if ! known "$p"; then
        case $p in
            *-redis) skipped+=("$p: the archive has no phpredis for PHP $ver (make demo and make bench leave out the article's class, which needs it; the tests that need it skip)") ;;
            *) skipped+=("$p: the archive has no $p") ;;
        esac
    else missing+=("$p"); fi
done
for p in "${optional[@]}"; do
    installed "$p" && continue
    lists_read
    known "$p" && missing+=("$p")
done
wanted=()
for p in "${others[@]}"; do installed "$p" || wanted+=("$p"); done

# The packages of another PHP that installing "$@" would bring in (php8.4-uuid,
# libapache2-mod-php8.4), as apt's dry run names them; fails when apt finds no way.
other_php() {
    local out
    out=$(apt-get -s install --no-install-recommends "$@" 2>&1) || return 1
    sed -n 's/^Inst \([^ ]*php\([0-9][0-9]*\.[0-9][0-9]*\)[^ ]*\) .*/\2 \1/p' <<<"$out" | awk -v v="$ver" '$1 != v {print $2}'
}
# Where the release's own PHP is another (sid: 8.4, under experimental's 8.5), each of
# them is tried in apt's dry run. A metapackage such as php-xml would bring that
# other PHP's module; this PHP's own (php8.5-xml, which provides php-xml) is taken
# instead where it exists. What still needs another PHP is skipped. The verdict is
# kept in target/ until the apt lists change, so that each `make` does not dry-run again.
stamp=$(dirname "$0")/../../target/.deps-php$ver-skipped
if ((${#wanted[@]})) && [ "$ver" != "$(release_php)" ]; then
    kept=()
    if [ -f "$stamp" ] && [ -z "$(find /var/lib/apt/lists -maxdepth 1 -newer "$stamp" -print -quit 2>/dev/null)" ]; then
        mapfile -t kept <"$stamp"
        left=()
        for p in "${wanted[@]}"; do grep -qx -- "$p: .*" "$stamp" || left+=("$p"); done
        wanted=(${left[@]+"${left[@]}"})
    fi
    if ((${#wanted[@]})); then
        apt_update
        for p in "${wanted[@]}"; do
            subs=()
            note=
            if bad=$(other_php ${missing[@]+"${missing[@]}"} "$p"); then
                for b in $bad; do
                    ext=$(sed -n 's/^php[0-9][0-9]*\.[0-9][0-9]*-\(.*\)$/\1/p' <<<"$b")
                    if [ -n "$ext" ] && known "php$ver-$ext"; then subs+=("php$ver-$ext"); fi
                done
                if [ -n "$bad" ] && ((${#subs[@]})); then
                    bad=$(other_php ${missing[@]+"${missing[@]}"} "${subs[@]}" "$p") || note="apt finds no way to install it beside php$ver"
                fi
                [ -z "$note" ] && [ -n "$bad" ] && note="it would bring in another PHP ($(echo $bad | tr ' ' ','))"
            else
                note="apt finds no way to install it beside php$ver"
            fi
            if [ -n "$note" ]; then
                skipped+=("$p: $note"); kept+=("$p: $note")
            else
                missing+=(${subs[@]+"${subs[@]}"} "$p")
            fi
        done
        if ((${#kept[@]})) && mkdir -p "$(dirname "$stamp")" 2>/dev/null; then
            printf '%s\n' "${kept[@]}" >"$stamp" 2>/dev/null || true
        fi
    fi
else
    missing+=(${wanted[@]+"${wanted[@]}"})
fi
# Debian experimental's php-common is the next PHP's (2:102~, for 8.6), and Breaks
# php8.5-common: where apt would take it (apt -t experimental), the newest
# php-common that does not break this PHP is named instead (unstable's 2:101).
breaks_this() { apt-cache show "php-common=$1" 2>/dev/null | grep '^Breaks:' | grep -Eq "(^|[ ,])php$ver-common(,|$| )"; }
if ! installed "php$ver-common" && ((${#missing[@]})); then
    cand=$(apt-cache policy php-common 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -n "$cand" ] && [ "$cand" != "(none)" ] && breaks_this "$cand"; then
        for v in $(apt-cache madison php-common | awk '{print $3}'); do
            breaks_this "$v" || { missing+=("php-common=$v"); break; }
        done
    fi
fi
if ((${#missing[@]})); then
    mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')
    for s in ${skipped[@]+"${skipped[@]}"}; do echo "deps: skipped $s"; done
fi

if ((${#missing[@]})); then
    echo "deps: installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        echo "deps: run as root, or install them: apt-get install ${missing[*]}" >&2
        exit 1
    fi
    apt_update
    DEBIAN_FRONTEND=noninteractive "$apt_get" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || archive_failed "install ${missing[*]}"
fi
# A package install may start a system redis-server or valkey-server; the tests never use it.
# A module a tool needs that no package of this PHP gives: built in (json), or named
# here in one line, rather than by the tool when it starts (phpunit is checked even
# when it could not be installed: make test needs it).
if [ -n "$tool_mods" ]; then
    have=$({ command -v "php$ver" >/dev/null && "php$ver" -m || php -m; } 2>/dev/null | tr '[:upper:]' '[:lower:]')
    while read -r t x p; do
        [ "$p" = - ] || continue
        installed "$t" || [ "$t" = phpunit ] || continue
        grep -qx "$x" <<<"$have" && continue
        echo "deps: $t needs PHP $ver's $x module, and this archive has no php$ver-$x (nor a package of PHP $ver that provides it): install it for PHP $ver" >&2
        exit 1
    done <<<"$tool_mods"
fi

command -v cargo >/dev/null || { echo "deps: cargo (Rust ≥ 1.88) is required (install it with rustup)" >&2; exit 1; }
if ! cargo php --version >/dev/null 2>&1; then
    echo "deps: installing cargo-php"
    cargo install cargo-php --version 0.2.2 --locked --quiet
fi
