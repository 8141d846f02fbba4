#!/usr/bin/env bash
# Installs what `make` needs and is missing: Debian packages (as root) and cargo-php.
set -euo pipefail
packages=(php8.2-cli php8.2-dev php8.2-redis redis-server redis-tools redis-sentinel)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "deps: installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        echo "deps: run as root, or install: apt-get install ${missing[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# A package install may start a system redis-server; the tests never use it.
command -v cargo >/dev/null || { echo "deps: cargo (Rust) is required" >&2; exit 1; }
if ! cargo php --version >/dev/null 2>&1; then
    echo "deps: installing cargo-php"
    cargo install cargo-php --version 0.2.2 --locked --quiet
fi
