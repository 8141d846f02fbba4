#!/usr/bin/env bash
# Usage: tools/package/dist.sh MODULE OUTDIR   (make dist)
#
# Writes the archive that PIE's pre-packaged-binary download method looks for, for
# the PHP that php-config ($PHP_CONFIG) describes:
#
#   php_redis_lock-<version>_php<M.m>-<arch>-linux-<libc>[-debug][-zts].tgz
#
# (PIE's PrePackagedBinaryAssetName, lower case), holding the stripped module as
# redis_lock.so at its root. <version> is the crate's (Cargo.toml), which is the
# release tag PIE resolves; <arch> is x86_64 or arm64, <libc> glibc or musl. Published
# binaries are built on Debian 12, whose glibc (2.36) is the oldest one supported:
# the module must need no newer GLIBC_ symbol version, or it would not load there.
# Prints the archive's path.
set -euo pipefail
cd "$(dirname "$0")/../.."
module=${1:?usage: $0 MODULE OUTDIR}
out=${2:?usage: $0 MODULE OUTDIR}
php_config=${PHP_CONFIG:-php-config}
php=$("$php_config" --php-binary)

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
minor=$("$php_config" --version | cut -d. -f1,2)
case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch=x86 ;;   # what PIE calls every other architecture
esac
if ldd --version 2>&1 | grep -qi musl; then libc=musl; else libc=glibc; fi
debug=$("$php" -n -r 'echo PHP_DEBUG ? "-debug" : "";')
zts=$("$php" -n -r 'echo PHP_ZTS ? "-zts" : "";')
name=$(echo "php_redis_lock-${version}_php${minor}-${arch}-linux-${libc}${debug}${zts}" | tr '[:upper:]' '[:lower:]')

if [ "$libc" = glibc ]; then
    needs=$(objdump -T "$module" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
    if [ "$(printf '%s\n2.36\n' "$needs" | sort -V | tail -n 1)" != 2.36 ]; then
        echo "dist: $module needs glibc $needs, newer than Debian 12's 2.36: build the published binaries on Debian 12" >&2
        exit 1
    fi
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$module" "$stage/redis_lock.so"
strip --strip-all "$stage/redis_lock.so"
mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tgz" redis_lock.so
echo "$out/$name.tgz"
