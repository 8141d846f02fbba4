#!/usr/bin/env bash
# Usage: tools/package/deb.sh MODULE.so OUTDIR
#
# `make deb`: builds php<ver>-redis-lock_<version>_<arch>.deb in OUTDIR for the PHP
# that php-config (or $PHP_CONFIG) describes, laid out as Debian's own extension
# packages are (dh-php):
#   /usr/lib/php/<api>/redis_lock.so            the module
#   /etc/php/<ver>/mods-available/redis_lock.ini a conffile, priority 20
#   /usr/share/doc/php<ver>-redis-lock/        copyright, and the IDE stub
#   /usr/bin/redis-lock<ver>                    the operator's tool, run by php<ver>;
#   /usr/bin/redis-lock links to it through update-alternatives (as /usr/bin/php to
#   php<ver>), so that the packages of two PHP versions install side by side
#   postinst: enabled for every SAPI (php_invoke enmod); postrm: disabled on
#   remove, its state and links forgotten on purge
#   Depends: phpapi-<api>, so that apt refuses it on a PHP with another ABI.
set -euo pipefail

so=${1:?usage: $0 MODULE.so OUTDIR}
out=${2:?usage: $0 MODULE.so OUTDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
php_config=${PHP_CONFIG:-php-config}
ver=$("$php_config" --version | cut -d. -f1,2)
api=$("$php_config" --phpapi)
ext_dir=$("$php_config" --extension-dir)
php=$("$php_config" --php-binary)
arch=$(dpkg --print-architecture)
version=$("$php" -n -d extension="$(realpath "$so")" -r 'echo phpversion("redis_lock");')
[ -n "$version" ] || { echo "deb: $so does not load into $php" >&2; exit 1; }
pkg=php$ver-redis-lock
maintainer="redis-lock developers <redis-lock@users.noreply.invalid>"
deb=$out/${pkg}_${version}_${arch}.deb

work=$(mktemp -d "${TMPDIR:-/tmp}/redis-lock-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
install -d "$root/DEBIAN" "$root$ext_dir" "$root/etc/php/$ver/mods-available" "$root/usr/share/doc/$pkg"
install -m 0644 "$so" "$root$ext_dir/redis_lock.so"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root$ext_dir/redis_lock.so"
"$php" -n -d extension="$(realpath "$so")" "$here/tools/package/ini.php" >"$work/redis_lock.ini"
install -m 0644 "$work/redis_lock.ini" "$root/etc/php/$ver/mods-available/redis_lock.ini"
install -m 0644 "$here/packaging/debian/copyright" "$root/usr/share/doc/$pkg/copyright"
install -m 0644 "$here/stubs/redis_lock.stubs.php" "$root/usr/share/doc/$pkg/redis_lock.stubs.php"
install -d "$root/usr/bin"
sed "1s|.*|#!$php|" "$here/bin/redis-lock" >"$root/usr/bin/redis-lock$ver"
chmod 0755 "$root/usr/bin/redis-lock$ver"
# A native package's changelog: one entry, for the commit it was built from.
commit=$(git -C "$here" log -1 --format='%h' 2>/dev/null || echo "a source tree")
date=$(git -C "$here" log -1 --format='%aD' 2>/dev/null || date -R)
printf '%s (%s) unstable; urgency=medium\n\n  * Built by make deb from %s.\n\n -- %s  %s\n' \
    "$pkg" "$version" "$commit" "$maintainer" "$date" | gzip -9n >"$root/usr/share/doc/$pkg/changelog.gz"
chmod 0644 "$root/usr/share/doc/$pkg/changelog.gz"
for script in postinst prerm postrm; do
    sed -e "s/@PHP_VERSION@/$ver/g" -e "s/@PHP_PRIORITY@/${ver//./}/g" "$here/packaging/debian/$script" >"$root/DEBIAN/$script"
    chmod 0755 "$root/DEBIAN/$script"
done
echo "/etc/php/$ver/mods-available/redis_lock.ini" >"$root/DEBIAN/conffiles"

# The shared libraries the module links (libc, libgcc), as dpkg-shlibdeps names them.
mkdir -p "$work/src/debian"
printf 'Source: redis-lock\n\nPackage: %s\nArchitecture: any\n' "$pkg" >"$work/src/debian/control"
shlibs=$(cd "$work/src" && dpkg-shlibdeps -O "$root$ext_dir/redis_lock.so" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')

cat >"$root/DEBIAN/control" <<EOF
Package: $pkg
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Pre-Depends: php-common (>= 2:69~)
Depends: php$ver-common, phpapi-$api${shlibs:+, $shlibs}
Provides: php-redis-lock
Section: php
Priority: optional
Description: native distributed locks on Redis for PHP $ver
 The redis_lock extension, written in Rust, gives PHP a Lock class with the
 API of the well-known blog class (new Lock(\$key, \$timeOut, \$lockOut),
 addLock(), releaseLock(\$token)): an atomic SET NX PX with 128-bit tokens, a
 token-checked release, waiting woken on release, a watchdog that renews the
 lease, fencing tokens, Redlock, Sentinel and Redis Cluster. The redis-lock
 command lists, inspects and force-releases the locks on a server.
EOF
(cd "$root" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"

mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
