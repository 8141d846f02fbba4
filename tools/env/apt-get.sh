#!/usr/bin/env bash
# Usage: tools/env/apt-get.sh ARGS...   (as apt-get ARGS...)
#
# apt-get on this machine, waiting (up to 10 minutes) while another apt holds its
# locks. CI makes a clean root beside the host's build, and a machine without
# debootstrap installs it with its own apt just as the host's `make` may install
# packages. apt-get waits for dpkg's lock when told to (DPkg::Lock::Timeout), but
# `update` fails at once on the lists' lock. Any other failure is returned as it is,
# with apt's message.
out=
rc=1
for _ in $(seq 120); do
    out=$(apt-get -o DPkg::Lock::Timeout=600 "$@" 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ]; then
        [ -z "$out" ] || printf '%s\n' "$out"
        exit 0
    fi
    grep -q 'Could not get lock\|Unable to lock directory\|Unable to acquire the dpkg frontend lock' <<<"$out" || break
    sleep 5
done
printf '%s\n' "$out" >&2
exit "$rc"
