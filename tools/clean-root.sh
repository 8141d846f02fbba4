#!/usr/bin/env bash
# Usage: tools/clean-root.sh [-s SUITE] [-k] [-u] [-- COMMAND...]
#
# Runs COMMAND (default: `make test`) on a clone of this checkout's committed HEAD,
# inside a new minimal Debian root of release SUITE (default: trixie, Debian 13).
# The root starts with what a newcomer's machine has: debootstrap's minbase, gcc,
# g++, make, git and CA certificates, plus this machine's Rust toolchain (mounted
# read-only; cargo's registry and installed tools start empty). Everything else
# (PHP, Redis, Valkey, libclang, cargo-php) must be installed by the project's
# own `make` targets, so a pass here proves they do.
#
#   -s SUITE   the Debian release to debootstrap: trixie (PHP 8.4, Redis 8, Valkey 8),
#              bookworm (PHP 8.2, Redis 7) or testing (PHP 8.4, Redis 8, Valkey 9,
#              Laravel 13, Symfony 7.4; apt there ignores the snapshot's Valid-Until),
#              or sid (Debian unstable, with experimental in its sources at apt's
#              lowest priority, so that nothing comes from it unless named: its
#              php8.5 and php8.6 RC; `PHP_BRANCH=8.5 tools/env/deps.sh` installs one).
#   -k         keep the root afterwards and print its path.
#   -u         uncached: the PHP builds and cargo-php start empty too (see below), as
#              on a machine that has never run this.
#
# Needs root, debootstrap (installed when missing) and unshare. The first run of
# a suite builds a base root under /var/tmp/redis-lock-root (2-3 minutes); later
# runs copy it. The PHP builds of tools/env/php-src.sh are cached the same way: the
# box's /var/tmp/redis-lock-php is a folder kept per suite beside the base, so a
# PHP built from source in one run is found by the next (it is keyed by release,
# version, variant and the tool's own text, so it is never taken for another). So is
# cargo-php, the one cargo tool tools/env/deps.sh installs (about 2 minutes of compiling):
# the binary a run built is copied into the next run's root, keyed by suite and the
# version deps.sh asks for, so deps.sh finds it there. Inside, the command has its own PID and mount namespaces: every
# process it starts dies with it, and no service starts on package install. The
# network is this machine's; the apt mirror is the one this machine uses.
#
# Exits 75 when the root cannot be built from the archive (debootstrap or apt failed),
# else with COMMAND's exit code (tools/env/deps.sh, run first, gives 75 for the archive's
# failures too).
set -euo pipefail

suite=trixie
keep=0
uncached=0
while [ $# -gt 0 ]; do
    case "$1" in
        -s) suite=$2; shift 2 ;;
        -k) keep=1; shift ;;
        -u) uncached=1; shift ;;
        --) shift; break ;;
        *) echo "usage: $0 [-s SUITE] [-k] [-u] [-- COMMAND...]" >&2; exit 2 ;;
    esac
done
cmd=${*:-make test}
[ "$(id -u)" -eq 0 ] || { echo "clean-root: must run as root" >&2; exit 2; }
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cache=/var/tmp/redis-lock-root
mkdir -p "$cache"

# The mirrors this machine's apt uses (deb822 or one-line sources).
apt_uris() {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' || true
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '/^deb / {print $2}' || true
}
mirror=$(apt_uris | grep -v -- '-security' | head -n 1 || true)
security=$(apt_uris | grep -- '-security' | head -n 1 || true)
[ -n "$mirror" ] || { echo "clean-root: no apt mirror found in /etc/apt" >&2; exit 1; }

# The base root, built once per suite (and again when a week old, for fresh security updates).
base=$cache/base-$suite
exec 9>"$cache/.lock-$suite"
flock 9
if [ -d "$base" ] && [ -n "$(find "$base" -maxdepth 0 -mtime +7)" ]; then rm -rf "$base"; fi
if [ ! -x "$base/bin/bash" ]; then
    command -v debootstrap >/dev/null || {
        "$repo/tools/env/apt-get.sh" update -qq && DEBIAN_FRONTEND=noninteractive "$repo/tools/env/apt-get.sh" install -y -qq debootstrap >/dev/null
    }
    echo "clean-root: building a Debian $suite base root (once)"
    rm -rf "$base.new"
    debootstrap --variant=minbase "$suite" "$base.new" "$mirror" >"$cache/debootstrap-$suite.log" 2>&1 \
        || { tail -n 20 "$cache/debootstrap-$suite.log" >&2; echo "clean-root: debootstrap of $suite failed: the archive (exit 75)" >&2; exit 75; }
    case $suite in
        # Unstable has no -updates or -security suites. Experimental holds only the
        # packages newer than unstable's (php8.5, php8.6): pinned at 1, apt takes a
        # package from it only when no other suite has one, or when named (pkg/experimental).
        unstable|sid)
            {
                echo "deb $mirror $suite main"
                echo "deb $mirror experimental main"
            } >"$base.new/etc/apt/sources.list"
            printf 'Package: *\nPin: release a=experimental\nPin-Priority: 1\n' \
                >"$base.new/etc/apt/preferences.d/99redis-lock-experimental" ;;
        *)
            {
                echo "deb $mirror $suite main"
                echo "deb $mirror $suite-updates main"
                [ -z "$security" ] || echo "deb $security $suite-security main"
            } >"$base.new/etc/apt/sources.list" ;;
    esac
    # Debian testing is served as a snapshot whose Release file can be past its one-week
    # Valid-Until (stable releases carry none): apt in that root must not refuse it.
    case $suite in
        testing|unstable|sid|forky)
            echo 'Acquire::Check-Valid-Until "false";' >"$base.new/etc/apt/apt.conf.d/99redis-lock-snapshot" ;;
    esac
    # Package installs must not start services (this is a root, not a booted system).
    printf '#!/bin/sh\nexit 101\n' >"$base.new/usr/sbin/policy-rc.d"
    chmod +x "$base.new/usr/sbin/policy-rc.d"
    cp /etc/resolv.conf "$base.new/etc/resolv.conf"
    chroot "$base.new" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends build-essential git ca-certificates >/dev/null && apt-get clean' \
        || { echo "clean-root: could not install the base tools from the $suite archive (exit 75)" >&2; exit 75; }
    # The extra CAs this machine trusts (a registry may be reached through one).
    if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$base.new/usr/local/share/ca-certificates/"
        chroot "$base.new" /usr/sbin/update-ca-certificates >/dev/null 2>&1
    fi
    mv "$base.new" "$base"
fi
flock -u 9

box=$(mktemp -d "$cache/box-$suite.XXXXXX")
cleanup() { if ((keep)); then echo "clean-root: kept $box"; else rm -rf "$box"; fi; }
trap cleanup EXIT
cp -a "$base/." "$box/"
cp /etc/resolv.conf "$box/etc/resolv.conf"
# Tells tools/test/test-install.sh that it may install and remove system packages here.
echo "a throwaway root made by tools/clean-root.sh" >"$box/.redis-lock-clean-root"

# Rust: the toolchains read-only, and rustup's proxies in an otherwise empty CARGO_HOME.
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
[ -d "$rustup_home/toolchains" ] && command -v cargo >/dev/null \
    || { echo "clean-root: needs a Rust installed with rustup (none in $rustup_home)" >&2; exit 1; }
cargo_bin=$(dirname "$(command -v cargo)")
php_cache=$cache/php-$suite
((uncached)) && php_cache=$box/.php-cache
mkdir -p "$box/opt/rustup" "$box/root/.cargo/bin" "$box/var/tmp/redis-lock-php" "$php_cache"
# rustup's default profile: cargo, rustc, rustdoc, and rustfmt and clippy (make lint).
for t in cargo rustc rustdoc rustup cargo-fmt rustfmt cargo-clippy clippy-driver; do cp -a "$cargo_bin/$t" "$box/root/.cargo/bin/"; done
# cargo-php as an earlier run of this suite built it (see the header).
tools_cache=$cache/cargo-php-$suite-$(grep -h 'cargo install cargo-php' "$repo/tools/env/deps.sh" | sha256sum | cut -c1-12)
if ((!uncached)) && [ -x "$tools_cache/cargo-php" ]; then cp -a "$tools_cache/cargo-php" "$box/root/.cargo/bin/"; fi

git clone -q "$repo" "$box/src/redis-lock"
echo "clean-root: $(git -C "$repo" log -1 --format='%h %s') on Debian $suite: $cmd"

# What the machine's environment says about certificates and proxies carries over.
pass=()
for v in SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE GIT_SSL_CAINFO http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY CI; do
    [ -z "${!v:-}" ] || pass+=("$v=${!v}")
done

set +e
unshare --mount --propagation private --pid --fork bash -c '
    set -e
    box=$1 rustup_home=$2 php_cache=$3; shift 3
    mount --bind "$php_cache" "$box/var/tmp/redis-lock-php"
    mount --bind "$rustup_home" "$box/opt/rustup"
    mount -o remount,bind,ro "$box/opt/rustup"
    mount -t proc proc "$box/proc"
    mount --rbind /dev "$box/dev"
    mount -t tmpfs tmpfs "$box/dev/shm"
    mount -t sysfs sys "$box/sys"
    exec chroot "$box" "$@"
' _ "$box" "$rustup_home" "$php_cache" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb "${pass[@]}" \
    RUSTUP_HOME=/opt/rustup CARGO_HOME=/root/.cargo \
    PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /src/redis-lock && $cmd"
rc=$?
if [ ! -x "$tools_cache/cargo-php" ] && [ -x "$box/root/.cargo/bin/cargo-php" ]; then
    # A name of this run's own, then a rename: two roots of one suite may end together.
    { mkdir -p "$tools_cache" && cp -a "$box/root/.cargo/bin/cargo-php" "$tools_cache/cargo-php.$$" \
        && mv "$tools_cache/cargo-php.$$" "$tools_cache/cargo-php"; } || rm -f "$tools_cache/cargo-php.$$"
fi
echo "clean-root: exit $rc (Debian $suite)"
exit $rc
