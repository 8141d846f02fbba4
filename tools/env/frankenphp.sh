#!/usr/bin/env bash
# Usage: tools/env/frankenphp.sh
#
# Builds FrankenPHP from its Go module (github.com/dunglas/frankenphp, the version
# tools/env/frankenphp/go.mod pins) with cgo against the project's thread-safe PHP
# (tools/env/php-src.sh zts: --enable-embed --enable-zts --disable-zend-signals
# --enable-zend-max-execution-timers) and prints the path of the server it makes.
# The load generator `load` is built beside it. See tools/env/frankenphp/ for why the
# server is a small net/http program on FrankenPHP's library rather than its
# Caddy binary: the Go module proxy here serves the library but not the Caddy
# module.
#
# Build tag nowatcher drops the one optional C library the library links (the
# file watcher); no Debian package is needed beyond gcc and the ZTS PHP.
#
# The build is cached beside the PHP builds, under $REDIS_LOCK_PHP_CACHE (default
# /var/tmp/redis-lock-php): the Go modules and Go's build cache in go/, the
# programs in a folder keyed by the ZTS PHP's prefix, the Go version and the text
# of tools/env/frankenphp/ and of this script. A clean root (tools/clean-root.sh)
# keeps that folder per suite, so a later run finds the build there.
#
# Go: $GO, else `go` on PATH, else /usr/local/go/bin/go; at least the version
# go.mod names. GOTOOLCHAIN=local: no other Go is fetched.
#
# Exit status 3 when there is nothing to build with here: no source for a ZTS PHP
# (tools/env/php-src.sh's 3), or no Go recent enough. Callers skip then.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { echo "frankenphp: $*" >&2; }

rc=0
prefix=$(tools/env/php-src.sh zts) || rc=$?
case $rc in
    0) ;;
    3) log "no ZTS PHP can be built here (tools/env/php-src.sh zts exited 3)"; exit 3 ;;
    *) log "building the ZTS PHP failed (tools/env/php-src.sh zts)"; exit 1 ;;
esac

go=${GO:-$(command -v go || true)}
[ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
[ -n "$go" ] || { log "no Go toolchain (set GO, or put go on PATH)"; exit 3; }
src=tools/env/frankenphp
need=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$src/go.mod")
have=$(GOTOOLCHAIN=local "$go" env GOVERSION) || { log "$go does not run"; exit 3; }
have=${have#go}
if [ "$(printf '%s\n' "$need" "$have" | sort -V | head -n 1)" != "$need" ]; then
    log "Go $have is older than the $need that $src/go.mod needs"
    exit 3
fi

cache=${REDIS_LOCK_PHP_CACHE:-/var/tmp/redis-lock-php}
tags=nowatcher
key=$( { echo "$prefix" "$have" "$tags"; cat tools/env/frankenphp.sh "$src/go.mod" "$src/go.sum" "$src"/*/*.go; } | sha256sum | cut -c1-12)
out=$cache/frankenphp-$(basename "$prefix")-$key
version=$(awk '$1 == "require" && $2 == "github.com/dunglas/frankenphp" {print $3}' "$src/go.mod")
mkdir -p "$cache"
exec 9>"$cache/.lock-frankenphp"
flock 9
if [ -x "$out/server" ] && [ -x "$out/load" ] && [ -f "$out/.complete" ]; then
    echo "$out/server"
    exit 0
fi

log "building FrankenPHP $version (Go $have, tags $tags) against $(cut -d' ' -f1-2 "$prefix/.complete") into $out"
start=$SECONDS
rm -rf "$out"
mkdir -p "$out"
buildlog=$out.log
# Modules and compiled packages kept for the next build; -modcacherw so that the
# cache can be removed like any folder.
if ! (
    cd "$src"
    export GOTOOLCHAIN=local GOFLAGS="-modcacherw -mod=readonly -buildvcs=false" CGO_ENABLED=1 \
        GOPATH="$cache/go" GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build"
    # FrankenPHP's compile-from-sources flags: PHP's headers and libphp, found at
    # run time through the rpath (the prefix is not on the loader's path).
    export CGO_CFLAGS="$("$prefix/bin/php-config" --includes)"
    export CGO_LDFLAGS="-L$prefix/lib -Wl,-rpath,$prefix/lib $("$prefix/bin/php-config" --libs)"
    "$go" build -tags "$tags" -trimpath -o "$out/" ./server ./load
) >"$buildlog" 2>&1; then
    log "the build failed; the end of $buildlog:"
    tail -n 30 "$buildlog" >&2
    exit 1
fi
echo "frankenphp $version, go $have, tags $tags, $(cat "$prefix/.complete")" >"$out/.complete"
log "built in $((SECONDS - start)) s"
echo "$out/server"
