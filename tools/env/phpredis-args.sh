#!/usr/bin/env bash
# Prints the php flags that load phpredis under `php -n` (for the bench and the
# demo): first the extensions that Debian's phpredis package depends on
# (igbinary, and msgpack on some releases), then redis itself.
set -euo pipefail
php_config=${PHP_CONFIG:-php-config}
ver=$("$php_config" --version | cut -d. -f1,2)
ext_dir=$("$php_config" --extension-dir)
deps=$(dpkg-query -W -f='${Depends}' "php$ver-redis" 2>/dev/null | tr ',' '\n' | sed -n "s/^ *php$ver-\([a-z0-9_]*\).*/\1/p")
for ext in $deps redis; do
    [ -f "$ext_dir/$ext.so" ] && printf -- '-d extension=%s ' "$ext"
done
echo
