#!/usr/bin/env bash
# Usage: tools/nemesis/plant.sh [BUG...]   (make nemesis-plant)
#
# Shows that the nemesis's checker can fail: builds this tree with one bug planted
# (a copy of the sources in target/planted/BUG, its own cargo target dir, cached),
# runs the nemesis on one server with AOF against it, and expects check.php to turn
# the run red. Exits 0 when every planted bug was caught, 1 when one went unseen.
#
# The bugs (all of them by default):
#   release-any-token  the release script skips its token check: a holder whose
#                      lease ran out deletes the next holder's hold, and a third
#                      enters while the second's lease lasts (a lease violation)
#   release-says-yes   the release script answers "released" when the key holds
#                      another token (and leaves it): a holder whose lease ran out
#                      under its work, and whose lock someone else took, is never
#                      told (a silent overlap)
#   bound-past-lease   the client's lease bound is 200 ms past the lease: it promises
#                      what the lease cannot keep (a promise longer than the lease)
#
# Seeds and lengths: NEMESIS_SEED (default 3), NEMESIS_DURATION (default 20 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
PHP=${PHP:-php}
seed=${NEMESIS_SEED:-3}
duration=${NEMESIS_DURATION:-20}
bugs=("$@")
[ ${#bugs[@]} -gt 0 ] || bugs=(release-any-token release-says-yes bound-past-lease)

# plant BUG DIR: the bug written into the copy in DIR; fails if the code it changes
# is no longer there (the plant must be updated with the code).
plant() {
    local bug=$1 dir=$2 file before after
    case "$bug" in
        release-any-token)
            file=src/kinds/lock/release.lua
            before="if holder ~= token and token ~= '' then"
            after="if false then" ;;
        release-says-yes)
            file=src/kinds/lock/release.lua
            before=$'    return 0\nend\n-- Forced, in read mode'
            after=$'    return 1\nend\n-- Forced, in read mode' ;;
        bound-past-lease)
            file=src/clock.rs
            before="sent.add(lease.saturating_sub(drift(lease)))"
            after="sent.add(lease + std::time::Duration::from_millis(200))" ;;
        *) echo "plant: unknown bug $bug" >&2; exit 2 ;;
    esac
    BEFORE=$before AFTER=$after "$PHP" -n -r '
        $f = $argv[1]; $s = file_get_contents($f); $b = getenv("BEFORE");
        if (substr_count($s, $b) < 1) { fwrite(STDERR, "plant: \"$b\" is not in $f any more: update tools/nemesis/plant.sh\n"); exit(2); }
        file_put_contents($f, str_replace($b, getenv("AFTER"), $s));' "$dir/$file"
}

missed=0
for bug in "${bugs[@]}"; do
    dir=target/planted/$bug
    rm -rf "$dir" && mkdir -p "$dir"
    tar --exclude=target --exclude=.git -cf - . | tar -C "$dir" -xf -
    plant "$bug" "$dir"
    echo "== plant: $bug, built in $dir"
    (cd "$dir" && cargo build --release --quiet --target-dir "$root/target/planted-target")
    ext=$dir/libredis_lock.so
    cp "$root/target/planted-target/release/libredis_lock.so" "$ext"
    out=target/nemesis/planted/$bug-$seed.jsonl
    mkdir -p "$(dirname "$out")"
    NEMESIS_EXT=$root/$ext "$PHP" -n -d extension=posix tools/nemesis/run.php --quiet --seed "$seed" \
        --topology single --duration "$duration" --workers 6 --out "$out"
    if "$PHP" -n tools/nemesis/check.php "$out" > "$out.check" 2>&1; then
        echo "plant: $bug went UNSEEN: the checker passed the run ($out.check)"
        missed=1
    else
        echo "plant: $bug caught: $(grep -m1 '^#### ' "$out.check" | sed 's/^#### //')"
    fi
done
exit "$missed"
