#!/usr/bin/env bash
# The nemesis's two runs (tools/nemesis/run.php, judged by check.php):
#   suite.sh short   `make test-nemesis`: single (AOF) 20 s of all faults + 20 s of paused
#                    waiters, Redlock 30 s, single 20 s with MultiLocks among Lock
#                    holders, and single 20 s of the reuse workload (one caller-chosen
#                    token per worker) among mutex and sync holders behind proxies
#                    without RESP3 (--no-resp3); seed NEMESIS_SEED (default 3), about 2 min of
#                    wall time; exits 1 on a lease violation, a silent overlap, a bad
#                    bound, a stale entry, a crash or a key stuck after the faults
#                    (check.php's rules)
#   suite.sh long    `make nemesis`: NEMESIS_SEEDS (default 1 2 3 4; one server with
#                    AOF has seeds 1–20) × NEMESIS_RUNS (every
#                    topology with every fault, Sentinel also with wait_replicas 1,
#                    single with paused waiters among
#                    fenced mutex workers, single and cluster with 3 of the 6 workers
#                    as threads of the ZTS harness when `make test-zts` has built it,
#                    single, cluster and Redlock with MultiLocks among Lock holders,
#                    single, Redlock and cluster with the reuse workload, single
#                    with --resp3 and with --no-resp3, and the server clock faults:
#                    single and one Redlock node jumping forward, then back, and
#                    Sentinel failing over to a replica whose clock is ahead, beside
#                    the same failovers with the clocks together),
#                    NEMESIS_DURATION s each (default 30); the table goes to
#                    bench/results/nemesis.md (NEMESIS_MD); about 70 min
#   suite.sh threads `make test-zts`'s run: single (AOF), 20 s of every fault, 3 of 6
#                    workers as threads (NEMESIS_HARNESS, NEMESIS_ZTS_EXT)
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
    # MultiLocks over both keys among Lock holders of each (one server, AOF).
    run --seed "$seed" --topology single --duration 20 --workers 6 --workloads mutex,multi,sync,token \
        --out "$dir/single-multi-$seed.jsonl"
    # One token per worker for the whole run, reused section after section, behind
    # proxies that refuse HELLO 3 (waits on a subscriber connection of their own).
    run --seed "$seed" --topology single --duration 20 --workers 6 --workloads reuse,mutex,sync --no-resp3 \
        --out "$dir/single-reuse-no-resp3-$seed.jsonl"
    exec "$PHP" -n tools/nemesis/check.php "$dir"/*.jsonl
    ;;
long)
    dir=target/nemesis/long
    rm -rf "$dir" && mkdir -p "$dir"
    seeds=${NEMESIS_SEEDS:-1 2 3 4}
    duration=${NEMESIS_DURATION:-30}
    # Each run: topology[:faults[:workloads[:threads[:options]]]][@FROM-TO], options
    # being resp3 (--resp3), no-resp3 (--no-resp3), wait-replicas
    # (--wait-replicas 1), durable (--durable 1) or long-wait (--wait 5: with the
    # failover fault alone, elections the acquires must wait out); @FROM-TO: the seeds of that row, in place of NEMESIS_SEEDS.
    # One server with AOF has 20 seeds: the bar the table is held to.
    runs=${NEMESIS_RUNS:-single@1-20 single:pause-waiter:mutex,fair,sync,token single-nopersist redlock redlock-nopersist sentinel sentinel::::wait-replicas sentinel::::durable@1-8 cluster cluster:failover:::long-wait sentinel:failover:::long-wait single:::3 cluster:::3 single::mutex,multi,sync,token cluster::mutex,multi,sync,token redlock::mutex,multi,sync single::reuse,mutex,sync,fair single::::resp3 single::::no-resp3 redlock::reuse,mutex,sync cluster::reuse,mutex,sync,fair single-clock:clock-forward single-clock:clock-back redlock-clock:clock-forward redlock-clock:clock-back sentinel-clock sentinel-clock:failover}
    harness=${NEMESIS_HARNESS:-target/zts-harness/release/redis-lock-zts-harness}
    zts_ext=${NEMESIS_ZTS_EXT:-target/zts/release/libredis_lock.so}
    for r in $runs; do
        IFS=: read -r t f w th o <<< "${r%@*}"
        case "$o" in
        ''|resp3|no-resp3|wait-replicas|durable|long-wait) ;;
        *) echo "nemesis: $r: unknown option $o (resp3, no-resp3, wait-replicas, durable, long-wait)" >&2; exit 2 ;;
        esac
        case "$r" in
        *@*) [[ ${r##*@} =~ ^[0-9]+-[0-9]+$ ]] || { echo "nemesis: $r: seeds are @FROM-TO" >&2; exit 2; } ;;
        esac
    done
    for r in $runs; do
        row_seeds=$seeds
        if [[ $r == *@* ]]; then
            range=${r##*@}
            row_seeds=$(seq "${range%-*}" "${range#*-}")
            r=${r%@*}
        fi
        IFS=: read -r t f w th o <<< "$r"
        flag=${o:+--$o}
        [ "$o" = wait-replicas ] && flag="--wait-replicas 1"
        [ "$o" = durable ] && flag="--durable 1"
        [ "$o" = long-wait ] && flag="--wait 5"
        # Every field in the name (commas as +), so that no two rows share a file.
        name=$t${f:+-${f//,/+}}${w:+-${w//,/+}}${th:+-threads$th}${o:+-$o}
        if [ -n "$th" ] && { [ ! -f "$harness" ] || [ ! -f "$zts_ext" ]; }; then
            echo "nemesis: $r skipped: no ZTS harness ($harness) or ZTS module ($zts_ext); make test-zts builds them"
            continue
        fi
        for s in $row_seeds; do
            echo "nemesis: $r seed $s (${duration} s)"
            # shellcheck disable=SC2086
            NEMESIS_HARNESS=$harness NEMESIS_ZTS_EXT=$zts_ext run --seed "$s" --topology "$t" ${f:+--faults "$f"} ${w:+--workloads "$w"} \
                ${th:+--threads "$th"} $flag --duration "$duration" --workers 6 --out "$dir/$name-$s.jsonl"
        done
    done
    exec "$PHP" -n tools/nemesis/check.php --md "${NEMESIS_MD:-bench/results/nemesis.md}" "$dir"/*.jsonl
    ;;
threads)
    dir=target/nemesis/threads
    rm -rf "$dir" && mkdir -p "$dir"
    seed=${NEMESIS_SEED:-3}
    run --seed "$seed" --topology single --duration 20 --workers 6 --threads 3 --out "$dir/single-threads-$seed.jsonl"
    exec "$PHP" -n tools/nemesis/check.php "$dir"/*.jsonl
    ;;
*)
    echo "usage: $0 short|long|threads" >&2
    exit 2
    ;;
esac
