#!/usr/bin/env bash
# Prints the IDE stub for the extension at $1 (a build of this crate).
set -euo pipefail
ext=$(realpath "$1")
cargo php stubs --stdout "$ext" | php -n -d extension="$ext" "$(dirname "$0")/stubs.php"
