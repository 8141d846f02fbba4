#!/usr/bin/env bash
# Usage: tools/package/install.sh install MODULE.so | tools/package/install.sh uninstall
#
# `make install` and `make uninstall`, for the PHP that php-config (or $PHP_CONFIG)
# describes. On Debian and Ubuntu:
#   - the module goes to `php-config --extension-dir` as redis_lock.so;
#   - redis_lock.ini, written by tools/package/ini.php from the module's directives,
#     goes to /etc/php/<ver>/mods-available/;
#   - `phpenmod` enables it for every SAPI installed (cli, fpm, apache2...);
#   - the operator's tool bin/redis-lock goes to `php-config --prefix`/bin (/usr/bin
#     on Debian), its #! line naming `php-config --php-binary`, the PHP that has the module.
# Elsewhere (the official docker images, a PHP built from source), the ini goes to
# `php-config --ini-dir` instead. uninstall undoes each step, and leaves no
# "disabled by the administrator" mark behind that would stop a later package
# install from enabling the module.
set -euo pipefail

php_config=${PHP_CONFIG:-php-config}
command -v "$php_config" >/dev/null || { echo "install: $php_config not found (install php-dev, or set PHP_CONFIG)" >&2; exit 1; }
ext_dir=$("$php_config" --extension-dir)
ver=$("$php_config" --version | cut -d. -f1,2)
so=$ext_dir/redis_lock.so
mods=/etc/php/$ver/mods-available
debian=0
if command -v phpenmod >/dev/null && [ -d "$mods" ]; then debian=1; fi
if ((debian)); then ini=$mods/redis_lock.ini; else ini=$("$php_config" --ini-dir)/20-redis_lock.ini; fi
php_bin=$("$php_config" --php-binary)
tool=$("$php_config" --prefix)/bin/redis-lock

# A package's files are the package manager's to change.
owner=$(dpkg-query -S "$so" 2>/dev/null | cut -d: -f1 || true)
if [ -n "$owner" ]; then
    echo "install: $so belongs to the package $owner; use apt-get to change it" >&2
    exit 1
fi
[ -w "$ext_dir" ] || { echo "install: cannot write to $ext_dir: run as root" >&2; exit 1; }

case "${1:-}" in
install)
    [ -f "${2:-}" ] || { echo "usage: $0 install MODULE.so" >&2; exit 2; }
    # Written before anything is installed: a module this PHP cannot load stops here.
    ini_file=$(mktemp)
    trap 'rm -f "$ini_file"' EXIT
    "$php_bin" -n -d extension="$(realpath "$2")" "$(dirname "$0")/ini.php" >"$ini_file"
    install -m 0644 "$2" "$so"
    echo "install: $so"
    # A link there is update-alternatives' (the .deb of another PHP version): not ours to replace.
    if [ -L "$tool" ]; then
        echo "install: $tool is a link ($(readlink -f "$tool")), left alone" >&2
    else
        # The #! names this PHP: with several installed, plain `php` may be one without the module.
        mkdir -p "$(dirname "$tool")"
        sed "1s|.*|#!$php_bin|" "$(dirname "$0")/../../bin/redis-lock" >"$tool.new"
        chmod 0755 "$tool.new"
        mv -f "$tool.new" "$tool"
        echo "install: $tool"
    fi
    if ((debian)); then
        install -m 0644 "$ini_file" "$ini"
        phpenmod -v "$ver" -s ALL redis_lock
        echo "install: $ini, enabled for PHP $ver: $(phpquery -S -v "$ver" | tr '\n' ' ')"
    else
        [ -n "$(dirname "$ini")" ] && [ "$(dirname "$ini")" != "." ] || {
            echo "install: this PHP scans no ini folder; add extension=redis_lock to your php.ini" >&2; exit 0; }
        mkdir -p "$(dirname "$ini")"
        install -m 0644 "$ini_file" "$ini"
        echo "install: $ini"
    fi
    ;;
uninstall)
    if ((debian)) && [ -f "$ini" ]; then
        # One SAPI at a time: phpdismod -p -s ALL forgets the state of the last SAPI only.
        for sapi in $(phpquery -S -v "$ver"); do phpdismod -p -v "$ver" -s "$sapi" redis_lock; done
    fi
    rm -f "$ini" "$so"
    # Only the tool this PHP's install wrote: a link, or one for another PHP, stays.
    if [ -f "$tool" ] && [ ! -L "$tool" ] && [ "$(head -n 1 "$tool")" = "#!$php_bin" ]; then
        rm -f "$tool"
        echo "uninstall: removed $so, $ini and $tool"
    else
        echo "uninstall: removed $so and $ini"
    fi
    ;;
*)
    echo "usage: $0 install MODULE.so | $0 uninstall" >&2
    exit 2
    ;;
esac
