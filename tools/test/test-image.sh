#!/usr/bin/env bash
# Usage: tools/test/test-image.sh [--own-prefix] [--zts]   (make test-image;
#        make test-all runs it with --own-prefix, and with --zts)
#
# The official `php` Docker images' install path, PIE's source build and PIE's
# prebuilt binary, on a non-thread-safe PHP built from Debian's source as the images
# build theirs (tools/env/php-src.sh nts, cached):
#
#   1. the steps docker-php-ext-install takes, on a clean export of the tree (the
#      files git knows, as they are now): phpize; ./configure
#      --enable-option-checking=fatal with no --enable flag; make; strip --strip-all
#      modules/*.so; make install; an `extension=redis_lock` ini in the scan
#      directory, as docker-php-ext-enable writes it. Then php -m, php --ri and a lock
#      cycle on a throwaway server. make install runs with cargo off PATH and CARGO
#      pointing nowhere: it must install what make built, never build;
#   2. PIE's source flow (phpize, ./configure --with-php-config=..., make, make
#      install) leaves modules/redis_lock.so after make, and make install alone
#      refuses, saying why, when make has not run;
#   3. make dist: the archive's name, rebuilt here from php-config, PHP_ZTS, uname -m
#      and the libc by PIE's rule, holds only redis_lock.so, which loads; the module
#      needs no glibc newer than Debian 12's 2.36; composer.json asks PIE for the
#      prebuilt binary first;
#   4. the Dockerfile in docs/install.md is the repository's Dockerfile, word for word.
#
# Inside a root made by tools/clean-root.sh, PHP is laid out as in the images, in
# /usr/local (tools/env/php-src.sh nts --image); elsewhere, and with --own-prefix, in a
# prefix of its own. With --zts, step 1 on the thread-safe PHP of the php:8.x-zts
# images and FrankenPHP (tools/env/php-src.sh zts, in its own prefix; tools/test/test-zts.sh
# checks its -zts archive). Exit status 0 with a "skipped" line when the mirror
# serves no PHP source for this release.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

if [ -z "${REDIS_LOCK_TEST_DSN:-}" ]; then
    exec tools/test/with-redis.sh "$0" "$@"
fi
variant=nts own=0
for arg in "$@"; do
    case $arg in
        --own-prefix) own=1 ;;
        --zts) variant=zts ;;
        *) echo "usage: $0 [--own-prefix] [--zts]" >&2; exit 2 ;;
    esac
done
layout=()
if [ -f /.redis-lock-clean-root ] && ((!own)) && [ "$variant" = nts ]; then
    layout=(--image)
fi

start=$SECONDS
prefix=$(tools/env/php-src.sh "$variant" "${layout[@]}")
case $? in
    0) ;;
    3) echo "skipped: the mirror serves no PHP source for this release (tools/env/php-src.sh)"; exit 0 ;;
    *) echo "not ok - building PHP from source (tools/env/php-src.sh $variant ${layout[*]})"; exit 1 ;;
esac
echo "# PHP from source in $prefix ($((SECONDS - start)) s, cached after the first build): $(cat "$prefix/.redis-lock-php" "$prefix/.complete" 2>/dev/null | head -n 1)"
php=$prefix/bin/php
php_config=$prefix/bin/php-config
export PATH=$prefix/bin:$PATH
ext_dir=$("$php_config" --extension-dir)
scan_dir=$("$php" --ini | sed -n 's/^Scan for additional .ini files in: *//p')
cargo_dir=$(dirname "$(command -v cargo)")
# PATH without cargo: make install must not need it.
no_cargo_path=$(tr ':' '\n' <<<"$PATH" | grep -vx "$cargo_dir" | paste -sd:)

. tools/test/tap.sh

work=$(mktemp -d /tmp/redis-lock-image.XXXXXX)
cleanup() { rm -rf "$work"; rm -f "$scan_dir/docker-php-ext-redis_lock.ini" "$ext_dir/redis_lock.so"; }
trap cleanup EXIT
# A clean export: what git tracks or would track, nothing built.
export_tree() {
    mkdir -p "$1"
    git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$1" -xf -
}
cycle='$l = new Lock("image:cycle", 1, 10, ["dsn" => getenv("REDIS_LOCK_TEST_DSN")]);
$t = $l->addLock(); if ($t === false || !$l->releaseLock($t)) { exit(1); } echo "cycle ok\n";'

echo "# 1. docker-php-ext-install's steps"
rm -f "$scan_dir/docker-php-ext-redis_lock.ini" "$ext_dir/redis_lock.so"
src=$work/image/redis-lock
export_tree "$src"
ext=$src/$(php -n -r 'echo json_decode(file_get_contents("composer.json"), true)["php-ext"]["build-path"];')
steps=$SECONDS
check "phpize" bash -c "cd '$ext' && phpize"
check "./configure --enable-option-checking=fatal" bash -c "cd '$ext' && ./configure --enable-option-checking=fatal"
check "make -j$(nproc)" make -C "$ext" -j"$(nproc)"
check "strip --strip-all modules/*.so" bash -c "cd '$ext' && strip --strip-all modules/*.so"
check "make install, cargo off PATH and CARGO pointing nowhere" \
    env PATH="$no_cargo_path" make -C "$ext" -j"$(nproc)" install CARGO=/nonexistent/cargo
check "the module is in the extension dir ($ext_dir)" test -f "$ext_dir/redis_lock.so"
check "extension=redis_lock in $scan_dir" bash -c "echo extension=redis_lock > '$scan_dir/docker-php-ext-redis_lock.ini'"
steps=$((SECONDS - steps))
expect_output "php -m lists redis_lock" "^redis_lock$" php -m
check "php -m says nothing else (no warning)" bash -c "! php -m 2>&1 | grep -qiE 'warning|error'"
expect_output "php --ri redis_lock" "redis_lock support => enabled" php --ri redis_lock
expect_output "a lock cycle" "^cycle ok$" php -r "$cycle"
check "make clean (the last step)" make -C "$ext" clean
echo "# the steps took $steps s from an empty build folder (cargo's build included)"

if [ "$variant" = zts ]; then
    # PIE's source flow takes the same steps, and tools/test/test-zts.sh checks the -zts
    # archive that make dist writes: one more cargo build would add nothing.
    echo "# 2 and 3 (PIE's source flow, make dist) are checked on the NTS PHP here, and the -zts archive by tools/test/test-zts.sh"
    finish
    exit
fi

echo "# 2. PIE's source build"
src=$work/pie/redis-lock
export_tree "$src"
ext=$src/phpize
check "phpize" bash -c "cd '$ext' && phpize"
check "./configure --with-php-config=$php_config" bash -c "cd '$ext' && ./configure --with-php-config='$php_config'"
expect_fail_output "make install before make refuses, and says why" "run make before make install" \
    env PATH="$no_cargo_path" make -C "$ext" install CARGO=/nonexistent/cargo
check "make" make -C "$ext" -j"$(nproc)"
check "make leaves modules/redis_lock.so" test -f "$ext/modules/redis_lock.so"
check "make install with cargo off PATH" env PATH="$no_cargo_path" make -C "$ext" install CARGO=/nonexistent/cargo
expect_output "it loads" "redis_lock support => enabled" php --ri redis_lock

echo "# 3. make dist: PIE's prebuilt binary"
check "make dist" make -C "$src" dist PHP_CONFIG="$php_config" PHP="$php"
# PIE's rule (PrePackagedBinaryAssetName), rebuilt here from the platform.
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$src/Cargo.toml" | head -n 1)
minor=$(php-config --version | cut -d. -f1,2)
case "$(uname -m)" in x86_64) arch=x86_64 ;; aarch64) arch=arm64 ;; *) arch=x86 ;; esac
libc=glibc; ldd --version 2>&1 | grep -qi musl && libc=musl
zts=$(php -n -r 'echo PHP_ZTS ? "-zts" : "";')
debug=$(php -n -r 'echo PHP_DEBUG ? "-debug" : "";')
asset=$src/target/dist/php_redis_lock-${version}_php${minor}-${arch}-linux-${libc}${debug}${zts}.tgz
check "the archive is named by PIE's rule: $(basename "$asset")" test -f "$asset"
check "it holds redis_lock.so at its root, and nothing else" \
    bash -c "contents=\$(tar tzf '$asset'); echo \"\$contents\"; [ \"\$contents\" = redis_lock.so ]"
mkdir -p "$work/unpacked"
tar -C "$work/unpacked" -xzf "$asset" 2>/dev/null
expect_output "the unpacked module loads" "redis_lock support => enabled" \
    php -n -d extension="$work/unpacked/redis_lock.so" --ri redis_lock
echo "# the archive is $(stat -c %s "$asset") bytes"
needs=$(objdump -T "$work/unpacked/redis_lock.so" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
check "it needs glibc $needs at most, no newer than Debian 12's 2.36" \
    test "$(printf '%s\n2.36\n' "$needs" | sort -V | tail -n 1)" = 2.36
expect_output "composer.json asks PIE for the prebuilt binary, then the source" '^pre-packaged-binary,composer-default$' \
    php -n -r 'echo implode(",", json_decode(file_get_contents("composer.json"), true)["php-ext"]["download-url-method"] ?? []);'

echo "# 4. the Dockerfile"
check "docs/install.md shows the repository's Dockerfile, word for word" bash -c \
    "diff <(sed -n '/^\`\`\`dockerfile\$/,/^\`\`\`\$/p' docs/install.md | sed '1d;\$d') Dockerfile"

finish
