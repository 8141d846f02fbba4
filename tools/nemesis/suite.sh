#!/usr/bin/env bash
# The nemesis's two runs (tools/nemesis/run.php, judged by check.php):
#   suite.sh short   `make test-nemesis`: single (AOF) 20 s of all faults + 20 s of paused
#                    waiters, Redlock 30 s; seed NEMESIS_SEED (default 3),
#                    under 90 s of wall time; exits 1 on a silent overlap, a stale entry,
#                    a crash or a key stuck after the faults (check.php's rules)
#   suite.sh long    `make nemesis`: NEMESIS_SEEDS (default 1 2 3 4) × NEMESIS_RUNS (every
#                    topology with every fault, and single with paused waiters among
#                    fenced mutex workers), NEMESIS_DURATION s each (default 30); the
#                    table goes to bench/results/nemesis.md (NEMESIS_MD); about 14 min
# The extension is NEMESIS_EXT (default: this tree's target/release/libredis_lock.so).
# Histories stay in target/nemesis/{short,long}/ for check.php --verbose.
set -euo pipefail
cd "$(dirname "$0")/../.."
PHP=${PHP:-php}
export NEMESIS_EXT=${NEMESIS_EXT:-$PWD/target/release/libredis_lock.so}
mode=${1:-short}
run() { "$PHP" -n -d extension=posix tools/nemesis/run.php --quiet "$@"; }

case "$mode" in
short)
    dir=target/nemesis/short
    rm -rf "$dir" && mkdir -p "$dir"
    seed=${NEMESIS_SEED:-3}
    # One server with AOF: 20 s of every fault and workload, then 20 s of waiters
    # paused among workers that all take the mutex with fences (the fault that finds
    # stale hand-overs, where it finds them most), then Redlock.
    run --seed "$seed" --topology single --duration 20 --workers 6 --out "$dir/single-$seed.jsonl"
    run --seed "$seed" --topology single --duration 20 --workers 6 --faults pause-waiter \
        --workloads mutex,fair,sync,token --out "$dir/single-pw-$seed.jsonl"
    run --seed "$seed" --topology redlock --duration 30 --workers 4 --out "$dir/redlock-$seed.jsonl"
    exec "$PHP" -n tools/nemesis/check.php "$dir"/*.jsonl
    ;;
long)
    dir=target/nemesis/long
    rm -rf "$dir" && mkdir -p "$dir"
    seeds=${NEMESIS_SEEDS:-1 2 3 4}
    duration=${NEMESIS_DURATION:-30}
    # Each run: topology[:faults[:workloads]].
    runs=${NEMESIS_RUNS:-single single:pause-waiter:mutex,fair,sync,token single-nopersist redlock redlock-nopersist sentinel}
    for r in $runs; do
        IFS=: read -r t f w <<< "$r"
        name=$t${f:+-$f}
        for s in $seeds; do
            echo "nemesis: $r seed $s (${duration} s)"
            run --seed "$s" --topology "$t" ${f:+--faults "$f"} ${w:+--workloads "$w"} --duration "$duration" --workers 6 --out "$dir/$name-$s.jsonl"
        done
    done
    exec "$PHP" -n tools/nemesis/check.php --md "${NEMESIS_MD:-bench/results/nemesis.md}" "$dir"/*.jsonl
    ;;
*)
    echo "usage: $0 short|long" >&2
    exit 2
    ;;
esac
