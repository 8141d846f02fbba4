#!/usr/bin/env bash
# Usage: tools/nts-only.sh
#
# Fails, saying why, when the PHP that the build is for ($PHP_CONFIG, else php-config)
# is thread-safe (ZTS). The Makefile runs it before cargo builds the module. The same
# words are in the module's startup (src/php/mod.rs) and phpize's configure
# (phpize/config.m4); tools/test-zts.sh checks all three.
set -euo pipefail
php_config=${PHP_CONFIG:-php-config}
include_dir=$("$php_config" --include-dir) || { echo "nts-only: $php_config does not answer --include-dir" >&2; exit 1; }
# php_config.h says it for every build of PHP, whichever flag turned ZTS on.
if grep -q '^#define ZTS 1' "$include_dir/main/php_config.h"; then
    echo "$php_config is a thread-safe (ZTS) PHP." >&2
    echo "redis_lock does not support thread-safe (ZTS) PHP yet: under threads its locks would not exclude each other. Use a non-thread-safe (NTS) PHP: the CLI, php-fpm, or mod_php under Apache's prefork MPM." >&2
    exit 1
fi
