#!/usr/bin/env bash
# Usage: tools/env/php-src.sh VARIANT [--image]
#
# Builds PHP from Debian's own source package for this release (php8.2 on Debian 12,
# php8.4 on Debian 13), installs it into a prefix of its own and prints that prefix:
# PREFIX/bin/php, PREFIX/bin/php-config and PREFIX/bin/phpize. `make` targets take
# such a PHP through PHP_CONFIG=PREFIX/bin/php-config.
#
# VARIANT:
#   nts   non-thread-safe, configured as the official `php` Docker images configure
#         theirs (their flags and built-in modules; no PEAR, which make install would
#         download), with a conf.d scan directory beside php.ini and no phpenmod.
#   zts   thread-safe (ZTS), with FrankenPHP's flags (--enable-zts --enable-embed
#         --disable-zend-signals --enable-zend-max-execution-timers): the CLI and
#         libphp.so, with only the extensions PHP always builds in. One build serves
#         the ZTS CLI, the threaded harness and FrankenPHP (tools/env/frankenphp.sh).
#   zts-apache  thread-safe, with Apache's mod_php (--with-apxs2, from Debian's
#         apache2-dev) instead of the embed SAPI: PHP builds one SAPI module at a
#         time. PREFIX/lib/apache2/libphp.so is the module; the system's Apache
#         is left alone.
#
# --image (nts only, and only inside a root made by tools/clean-root.sh): lay PHP out
# exactly as the images do, in /usr/local (php.ini in /usr/local/etc/php, modules
# scanned from /usr/local/etc/php/conf.d). It prints /usr/local. On a working machine
# that would shadow Debian's php on PATH, so it is refused there.
#
# Each build (release, PHP version, variant, flags) is made once and cached under
# $REDIS_LOCK_PHP_CACHE (default /var/tmp/redis-lock-php); later calls print the
# cached prefix at once (an --image build is cached as a staged tree and copied into
# /usr/local). A build takes a few minutes on 2 cores; its log stays beside the
# prefix. Without --image the prefix is never /usr/local.
#
# The source comes through apt with lists of the tool's own (deb-src lines for this
# release, kept in the cache), so this machine's apt configuration is left as it is.
# The newest version the mirror serves is taken, and unpacked without Debian's patches:
# the package's upstream tarball is PHP's release tarball, the one the official Docker
# images build (Debian's patches move phpize's libtool files to /usr/share/aclocal,
# among other packaging changes). Needs root to install the tools (dpkg-dev, and
# autoconf and pkg-config for phpize) when they are missing.
#
# Exit status 3 when the mirror serves no source of this release's PHP (seen: this
# workplace's mirror lists php8.4 for Debian 13 but answers 404 for its files), so a
# caller can tell that apart from a failed build.
set -euo pipefail

variant=${1:-}
image=0
[ "${2:-}" = --image ] && image=1
case "$variant" in
    # The official images' configure flags (docker-library/php), less PEAR; --with-libdir
    # is theirs too, so that configure finds Debian's multiarch libraries.
    nts) flags=(--enable-option-checking=fatal --with-mhash --with-pic --enable-ftp --enable-mbstring
                --enable-mysqlnd --with-password-argon2 --with-sodium=shared --with-pdo-sqlite=/usr
                --with-sqlite3=/usr --with-curl --with-iconv --with-openssl --with-readline --with-zlib
                --disable-phpdbg --disable-cgi --enable-embed
                "--with-libdir=lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)")
         build_deps=(libargon2-dev libcurl4-openssl-dev libonig-dev libreadline-dev libsodium-dev
                     libsqlite3-dev libssl-dev libxml2-dev zlib1g-dev) ;;
    # FrankenPHP's flags: threads, the embed SAPI (libphp.so) it links, no zend signals,
    # and per-thread timers (without them FrankenPHP turns max_execution_time off);
    # pcntl and posix for the phpt suite (it forks) and the threaded harness.
    zts) flags=(--enable-zts --enable-embed --disable-zend-signals --enable-zend-max-execution-timers --disable-all
                --enable-cli --enable-pcntl --enable-posix --disable-cgi --disable-phpdbg --without-pear)
         build_deps=() ;;
    # Apache's threaded mod_php (mpm_event, mpm_worker): PHP builds one SAPI module
    # at a time, so this is a build of its own. Its libphp.so goes to
    # PREFIX/lib/apache2/, never into the system's Apache.
    zts-apache) flags=(--enable-zts --disable-zend-signals --with-apxs2=/usr/bin/apxs --disable-all
                       --enable-cli --enable-posix --disable-cgi --disable-phpdbg --without-pear)
         build_deps=(apache2-dev) ;;
    *) echo "usage: $0 nts|zts|zts-apache [--image]" >&2; exit 2 ;;
esac
if ((image)); then
    [ "$variant" = nts ] || { echo "php-src: --image is the NTS images' layout" >&2; exit 2; }
    [ -f /.redis-lock-clean-root ] || {
        echo "php-src: --image installs into /usr/local, which would shadow this machine's php; run it in tools/clean-root.sh" >&2
        exit 2
    }
fi
cache=${REDIS_LOCK_PHP_CACHE:-/var/tmp/redis-lock-php}
. /etc/os-release
suite=${VERSION_CODENAME:?php-src: /etc/os-release names no release}
log() { echo "php-src: $*" >&2; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# The PHP branch: that of the Debian PHP installed (the one `php` runs, as tools/env/deps.sh
# takes it: on sid, experimental's 8.5 or 8.6), else the one the release ships, as its
# php-cli metapackage names it (8.2, 8.4). Never another PHP than the machine's.
branch=
if command -v php >/dev/null 2>&1; then
    branch=$(php -n -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;' 2>/dev/null || true)
    installed "php$branch-cli" || branch=
fi
[ -n "$branch" ] || branch=$(apt-cache depends php-cli 2>/dev/null | sed -n 's/^ *Depends: php\([0-9][0-9.]*\)-cli$/\1/p' | head -n 1)
if [ -z "$branch" ]; then
    "$(dirname "$0")/apt-get.sh" update -qq
    branch=$(apt-cache depends php-cli 2>/dev/null | sed -n 's/^ *Depends: php\([0-9][0-9.]*\)-cli$/\1/p' | head -n 1)
fi
[ -n "$branch" ] || { log "this release has no php-cli package to take the PHP branch from"; exit 1; }

# The key names what was built: the branch, the flags and the version of the steps
# below (raise `steps` when they change), so a prefix made another way is never reused.
steps=2
layout=()
((image)) && layout=("images' layout in /usr/local")
key=$(printf '%s\n' "$branch" "${flags[*]}" "${layout[@]}" "steps $steps" | sha256sum | cut -c1-12)
prefix=$cache/$suite-php$branch-$variant-$key
# The images' layout is staged in the cache (make install INSTALL_ROOT=) and copied
# into /usr/local; PHP's paths are /usr/local's, so the staged copy is never run.
if ((image)); then
    stage=$prefix
    prefix=/usr/local
    ini_dir=/usr/local/etc/php
else
    stage=
    ini_dir=$prefix/etc
fi
mkdir -p "$cache"
exec 9>"$cache/.lock-$suite-$branch-$variant"
flock 9
# dpkg-source unpacks the package; phpize runs autoconf, and configure scripts pkg-config.
# Checked before the cache is used: a cached PHP still links the libraries the -dev
# packages bring (libreadline, libargon2, ...), which a fresh root does not have.
missing=()
for p in dpkg-dev autoconf pkg-config xz-utils "${build_deps[@]}"; do installed "$p" || missing+=("$p"); done
if ((${#missing[@]})); then
    [ "$(id -u)" -eq 0 ] || { log "run as root, or install: apt-get install ${missing[*]}"; exit 1; }
    log "installing ${missing[*]}"
    "$(dirname "$0")/apt-get.sh" update -qq
    DEBIAN_FRONTEND=noninteractive "$(dirname "$0")/apt-get.sh" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Copies a staged images' layout into /usr/local, once per root.
place() {
    if [ ! -f /usr/local/.redis-lock-php ] || ! cmp -s "$stage/.complete" /usr/local/.redis-lock-php; then
        cp -a "$stage/usr/local/." /usr/local/
        cp "$stage/.complete" /usr/local/.redis-lock-php
    fi
}
if ((image)) && [ -f "$stage/.complete" ]; then
    place
    echo "$prefix"
    exit 0
fi
if ((!image)) && [ -x "$prefix/bin/php" ] && [ -f "$prefix/.complete" ]; then
    echo "$prefix"
    exit 0
fi

# deb-src lines for this release, on the mirrors this machine's apt uses.
apt_dir=$cache/apt-$suite
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
{
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}' || true
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '/^deb / {print $2}' || true
} | sort -u | while read -r uri; do
    case "$uri" in
        *-security*) echo "deb-src $uri $suite-security main" ;;
        *) echo "deb-src $uri $suite main"; echo "deb-src $uri $suite-updates main" ;;
    esac
done >"$apt_dir/sources.list"
[ -s "$apt_dir/sources.list" ] || { log "no apt mirror found in /etc/apt"; exit 1; }
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o "Dir::Cache::Archives=$apt_dir/archives"
          -o APT::Sandbox::User=root)
apt-get -qq "${apt_opts[@]}" update

work=$(mktemp -d "$cache/build-$variant.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The newest version first; a mirror may list a version whose files it does not serve
# (seen: a security mirror without sources), so older ones are tried in turn.
got=
for v in $(apt-cache "${apt_opts[@]}" showsrc "php$branch" 2>/dev/null | awk '/^Version:/ {print $2}' | sort -ruV); do
    if (cd "$work" && apt-get -qq "${apt_opts[@]}" source --download-only "php$branch=$v" >"$work/source.log" 2>&1); then
        got=$v; break
    fi
done
[ -n "$got" ] || { log "the mirror serves no source of php$branch"; tail -n 5 "$work/source.log" >&2 2>/dev/null || true; exit 3; }
(cd "$work" && dpkg-source --skip-patches -x ./*.dsc src >>"$work/source.log" 2>&1) \
    || { log "could not unpack the source of php$branch $got:"; tail -n 5 "$work/source.log" >&2; exit 1; }
src=$work/src

log "building PHP $got ($variant) into $prefix"
start=$SECONDS
((image)) || rm -rf "$prefix"
buildlog=$cache/$suite-php$branch-$variant-$key.log
(
    cd "$src"
    ./configure --prefix="$prefix" --with-config-file-path="$ini_dir" \
        --with-config-file-scan-dir="$ini_dir/conf.d" "${flags[@]}"
    make -j"$(nproc)"
    if ((image)); then
        rm -rf "$stage"
        make install INSTALL_ROOT="$stage"
    elif [ "$variant" = zts-apache ]; then
        # apxs -i would install into the system's Apache and edit its config.
        make install INSTALL_IT="mkdir -p '$prefix/lib/apache2' && cp libs/libphp.so '$prefix/lib/apache2/'"
    else
        make install
    fi
) >"$buildlog" 2>&1 || { log "the build failed; the end of $buildlog:"; tail -n 30 "$buildlog" >&2; exit 1; }
if ((image)); then
    mkdir -p "$stage$ini_dir/conf.d"
    echo "php$branch $got ${flags[*]}" >"$stage/.complete"
    place
else
    mkdir -p "$ini_dir/conf.d"
    echo "php$branch $got ${flags[*]}" >"$prefix/.complete"
fi
log "built in $((SECONDS - start)) s"
echo "$prefix"
