#!/usr/bin/env bash
# The nemesis's two runs (tools/nemesis/run.php, judged by check.php):
#   suite.sh short   `make test-nemesis`: single (AOF) 20 s of all faults + 20 s of paused
#                    waiters, Redlock 30 s, single 20 s with MultiLocks among Lock
#                    holders, and single 20 s of the reuse workload (one caller-chosen
#                    token per worker) among mutex and sync holders behind proxies
#                    without RESP3 (--no-resp3); where the server has its own
#                    compare-and-delete (Valkey >= 9, Redis >= 8.4), 15 s more of
#                    one server without fencing on 8 keys; seed NEMESIS_SEED
#                    (default 3), about 2 min of wall time; exits 1 on a lease
#                    violation, a silent overlap, a bad bound, a stale entry, a
#                    crash, a key stuck after the faults, or a path a row expects
#                    that ran fewer times (check.php's rules)
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
#                    the same failovers with the clocks together, and one server,
#                    the Cluster and durable Sentinel without fencing on 8 keys:
#                    the rows that run the server's own compare-and-delete where
#                    it has one, and issue 58's sentinel2, plain and durable, with
#                    repl-diskless-sync-delay 0, where a durable run must make half
#                    its plain run's sections),
#                    NEMESIS_DURATION s each (default 30); the table goes to
#                    bench/results/nemesis.md (NEMESIS_MD); about 90 min
#   suite.sh threads `make test-zts`'s run: single (AOF), 20 s of every fault, 3 of 6
#                    workers as threads (NEMESIS_HARNESS, NEMESIS_ZTS_EXT)
# The extension is NEMESIS_EXT (default: this tree's target/release/libredis_lock.so).
# Histories stay in target/nemesis/{short,long}/ for check.php --verbose.
#
# Every row states what it must exercise (run.php --expect; check.php fails a run that
# ran a path fewer times): hand-overs on every topology but Redlock (which keeps no
# queue: its waiters poll), the majority's decisions on Redlock (acquisitions and
# releases), durable acknowledgements on durable rows, and, where the server under
# test has its own compare-and-delete (REDIS_LOCK_TEST_SERVER=valkey with Valkey >= 9,
# or Redis >= 8.4), compare-and-delete releases, renewals and kicks on the rows
# without fencing. The floors are per 20 s of run, scaled to its length.
set -euo pipefail
cd "$(dirname "$0")/../.."
PHP=${PHP:-php}
export NEMESIS_EXT=${NEMESIS_EXT:-$PWD/target/release/libredis_lock.so}
mode=${1:-short}
run() { "$PHP" -n -d extension=posix tools/nemesis/run.php --quiet "$@"; }

# Whether the server under test has its own compare-and-delete (DELIFEQ, DELEX).
server=${REDIS_LOCK_TEST_SERVER:-redis}
read -r major minor < <("$server-server" --version | sed -n 's/.* v=\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
cad=0
if { [ "$server" = valkey ] && [ "${major:-0}" -ge 9 ]; } || { [ "$server" = redis ] && [ "${major:-0}" -gt 8 ]; } \
    || { [ "$server" = redis ] && [ "${major:-0}" -eq 8 ] && [ "${minor:-0}" -ge 4 ]; }; then
    cad=1
fi

# The floors, per 20 s of run: about half the fewest a run reached on 2 loaded cores
# (Redis 7.0 and Valkey 9.1, bench/results/nemesis-valkey9.md; tools/nemesis/README.md,
# "Paths").
HANDED_OVER=10             # hand-overs, every topology but Redlock (fewest: 62)
QUORUM_ACQUISITIONS=40     # Redlock: acquisitions a majority took (fewest: 129 in 20 s)
QUORUM_RELEASES=20         # Redlock: releases a majority answered (fewest: 86 in 20 s)
DURABLE_ACKS=50            # durable rows: durable checks acknowledged (fewest: 143)
CAD_RELEASES=30            # rows without fencing, 8 keys, on a server with compare-and-delete (fewest: 58)
CAD_RENEWALS=20            # (fewest: 37)
CAD_KICKS=3                # (fewest: 11; durable Sentinel's rows, 8)

# expect_for TOPOLOGY OPTIONS DURATION [EXTRA]: the row's --expect (NAME=N,...): the
# floors above as the row calls for them, times DURATION/20, then EXTRA (NAME=N,...,
# the row's own, which win).
expect_for() {
    local t=$1 o=+$2+ d=${3%.*} extra=${4:-} e=() k v
    scale() { echo $(( $1 * d / 20 )); }
    case "$t" in
        redlock*) e+=("quorum_acquisitions=$(scale $QUORUM_ACQUISITIONS)" "quorum_releases=$(scale $QUORUM_RELEASES)") ;;
        *) e+=("handed_over=$(scale $HANDED_OVER)") ;;
    esac
    [[ $o == *+durable+* ]] && e+=("durable_acks=$(scale $DURABLE_ACKS)")
    if [ "$cad" = 1 ] && [[ $o == *+nofence+* ]]; then
        e+=("cad_releases=$(scale $CAD_RELEASES)" "cad_renewals=$(scale $CAD_RENEWALS)" "cad_kicks=$(scale $CAD_KICKS)")
    fi
    local IFS=,
    for kv in $extra; do
        k=${kv%%=*}
        e=("${e[@]/#$k=*/}")
        e+=("$kv")
    done
    local out=()
    for kv in "${e[@]}"; do [ -n "$kv" ] && out+=("$kv"); done
    echo "${out[*]}"
}

case "$mode" in
short)
    dir=target/nemesis/short
    rm -rf "$dir" && mkdir -p "$dir"
    seed=${NEMESIS_SEED:-3}
    # One server with AOF: 20 s of every fault and workload, then 20 s of waiters
    # paused among workers that all take the mutex with fences (the fault that finds
    # stale hand-overs, where it finds them most), then Redlock.
    run --seed "$seed" --topology single --duration 20 --workers 6 --expect "$(expect_for single '' 20)" --out "$dir/single-$seed.jsonl"
    run --seed "$seed" --topology single --duration 20 --workers 6 --faults pause-waiter \
        --workloads mutex,fair,sync,token --expect "$(expect_for single '' 20)" --out "$dir/single-pw-$seed.jsonl"
    run --seed "$seed" --topology redlock --duration 30 --workers 4 --expect "$(expect_for redlock '' 30)" --out "$dir/redlock-$seed.jsonl"
    # MultiLocks over both keys among Lock holders of each (one server, AOF).
    run --seed "$seed" --topology single --duration 20 --workers 6 --workloads mutex,multi,sync,token \
        --expect "$(expect_for single '' 20)" --out "$dir/single-multi-$seed.jsonl"
    # One token per worker for the whole run, reused section after section, behind
    # proxies that refuse HELLO 3 (waits on a subscriber connection of their own).
    run --seed "$seed" --topology single --duration 20 --workers 6 --workloads reuse,mutex,sync --no-resp3 \
        --expect "$(expect_for single '' 20)" --out "$dir/single-reuse-no-resp3-$seed.jsonl"
    # Where the server has its own compare-and-delete: 15 s without fencing, on 8 keys,
    # of holders that can take a lock alone (mutex, caller tokens, synchronized()), which
    # must run DELIFEQ (DELEX), SET IFEQ and the kick.
    if [ "$cad" = 1 ]; then
        run --seed "$seed" --topology single --duration 15 --workers 6 --workloads mutex,token,sync --fencing 0 --keys 8 \
            --expect "$(expect_for single nofence 15)" --out "$dir/single-cad-$seed.jsonl"
    elif [ -n "${REDIS_LOCK_UNTESTED:-}" ]; then
        # make test's list of what went untested (php-tests/_helper.inc, rl_untested()).
        echo "nemesis (short) on $server: the row without fencing that runs the server's own compare-and-delete under faults ($server ${major:-?}.${minor:-?} has none: Valkey 9 and Redis 8.4 do)" >>"$REDIS_LOCK_UNTESTED"
    fi
    exec "$PHP" -n tools/nemesis/check.php "$dir"/*.jsonl
    ;;
long)
    dir=target/nemesis/long
    rm -rf "$dir" && mkdir -p "$dir"
    seeds=${NEMESIS_SEEDS:-1 2 3 4}
    duration=${NEMESIS_DURATION:-30}
    # Each run: topology[:faults[:workloads[:threads[:options]]]][%NAME=N,...][@FROM-TO].
    # Options, joined by +: resp3 (--resp3), no-resp3 (--no-resp3), wait-replicas
    # (--wait-replicas 1), durable (--durable 1), long-wait (--wait 5: with the
    # failover fault alone, elections the acquires must wait out), nofence (--fencing 0),
    # keysN (--keys N) and syncdelayN (--sync-delay N). %NAME=N,...: the row's own
    # floors (per 20 s, as the defaults above, which they add to or replace; but
    # share_of_plain, the percentage of the plain row's sections (same topology,
    # faults and seeds) that a durable row must make over its seeds together).
    # @FROM-TO: the seeds of that row, in place of NEMESIS_SEEDS.
    # sentinel2 (issue 58: a master, two replicas, the stall and kill faults) runs plain
    # and durable with repl-diskless-sync-delay 0, the setting docs/sentinel.md asks of
    # a durable deployment: over seeds 1–3 durable must make half the plain row's
    # sections. With the servers' default (5 s) the set itself seldom has a replica in
    # sync under these faults, and a durable run fails the liveness rule (keys not
    # taken in the 3 s of quiet): docs/safety.md's availability table has those runs.
    # One server with AOF has 20 seeds: the bar the table is held to.
    runs=${NEMESIS_RUNS:-single@1-20 single:pause-waiter:mutex,fair,sync,token single-nopersist redlock redlock-nopersist sentinel sentinel::::wait-replicas sentinel::::durable@1-8 cluster cluster:failover:::long-wait sentinel:failover:::long-wait single:::3 cluster:::3 single::mutex,multi,sync,token cluster::mutex,multi,sync,token redlock::mutex,multi,sync single::reuse,mutex,sync,fair single::::resp3 single::::no-resp3 redlock::reuse,mutex,sync cluster::reuse,mutex,sync,fair single-clock:clock-forward single-clock:clock-back redlock-clock:clock-forward redlock-clock:clock-back sentinel-clock sentinel-clock:failover single::::nofence+keys8 single::mutex,token,sync::nofence+keys8%cad_releases=50,cad_renewals=40 single::reuse,mutex,sync,fair::nofence+keys8 cluster::::nofence+keys8 sentinel::::durable+nofence+keys8%cad_releases=12,cad_renewals=10 sentinel2::::syncdelay0@1-3 sentinel2::::durable+syncdelay0%share_of_plain=50@1-3}
    harness=${NEMESIS_HARNESS:-target/zts-harness/release/redis-lock-zts-harness}
    zts_ext=${NEMESIS_ZTS_EXT:-target/zts/release/libredis_lock.so}
    # row_flags OPTIONS: run.php's flags for a row's options (one a line).
    row_flags() {
        local x
        local IFS=+
        for x in $1; do
            case "$x" in
            resp3) echo --resp3 ;;
            no-resp3) echo --no-resp3 ;;
            wait-replicas) printf '%s\n' --wait-replicas 1 ;;
            durable) printf '%s\n' --durable 1 ;;
            long-wait) printf '%s\n' --wait 5 ;;
            nofence) printf '%s\n' --fencing 0 ;;
            keys[0-9]*) printf '%s\n' --keys "${x#keys}" ;;
            syncdelay[0-9]*) printf '%s\n' --sync-delay "${x#syncdelay}" ;;
            *) echo "nemesis: unknown option $x (resp3, no-resp3, wait-replicas, durable, long-wait, nofence, keysN, syncdelayN)" >&2; return 2 ;;
            esac
        done
    }
    for r in $runs; do
        base=${r%@*}
        IFS=: read -r t f w th o <<< "${base%%%*}"
        row_flags "$o" > /dev/null || { echo "nemesis: in row $r" >&2; exit 2; }
        case "$r" in
        *@*) [[ ${r##*@} =~ ^[0-9]+-[0-9]+$ ]] || { echo "nemesis: $r: seeds are @FROM-TO" >&2; exit 2; } ;;
        esac
        case "$base" in
        *%*) [[ ${base#*%} =~ ^[a-z_]+=[0-9]+(,[a-z_]+=[0-9]+)*$ ]] || { echo "nemesis: $r: floors are %NAME=N,..." >&2; exit 2; } ;;
        esac
    done
    for r in $runs; do
        row_seeds=$seeds
        if [[ $r == *@* ]]; then
            range=${r##*@}
            row_seeds=$(seq "${range%-*}" "${range#*-}")
            r=${r%@*}
        fi
        extra=
        if [[ $r == *%* ]]; then
            extra=${r#*%}
            r=${r%%%*}
        fi
        IFS=: read -r t f w th o <<< "$r"
        mapfile -t flags < <(row_flags "$o")
        # The row's own floors are per 20 s too; but share_of_plain, a percentage.
        scaled=
        IFS=, read -ra kvs <<< "$extra"
        for kv in "${kvs[@]}"; do
            case "$kv" in
            share_of_plain=*) scaled+=${scaled:+,}$kv ;;
            *) scaled+=${scaled:+,}${kv%%=*}=$(( ${kv#*=} * ${duration%.*} / 20 )) ;;
            esac
        done
        exp=$(expect_for "$t" "$o" "$duration" "$scaled")
        # Every field in the name (commas as +), so that no two rows share a file.
        name=$t${f:+-${f//,/+}}${w:+-${w//,/+}}${th:+-threads$th}${o:+-$o}
        if [ -n "$th" ] && { [ ! -f "$harness" ] || [ ! -f "$zts_ext" ]; }; then
            echo "nemesis: $r skipped: no ZTS harness ($harness) or ZTS module ($zts_ext); make test-zts builds them"
            continue
        fi
        for s in $row_seeds; do
            echo "nemesis: $r seed $s (${duration} s; expects $exp)"
            # shellcheck disable=SC2086
            NEMESIS_HARNESS=$harness NEMESIS_ZTS_EXT=$zts_ext run --seed "$s" --topology "$t" ${f:+--faults "$f"} ${w:+--workloads "$w"} \
                ${th:+--threads "$th"} "${flags[@]}" --expect "$exp" --duration "$duration" --workers 6 --out "$dir/$name-$s.jsonl"
        done
    done
    exec "$PHP" -n tools/nemesis/check.php --md "${NEMESIS_MD:-bench/results/nemesis.md}" "$dir"/*.jsonl
    ;;
threads)
    dir=target/nemesis/threads
    rm -rf "$dir" && mkdir -p "$dir"
    seed=${NEMESIS_SEED:-3}
    run --seed "$seed" --topology single --duration 20 --workers 6 --threads 3 --expect "$(expect_for single '' 20)" \
        --out "$dir/single-threads-$seed.jsonl"
    exec "$PHP" -n tools/nemesis/check.php "$dir"/*.jsonl
    ;;
*)
    echo "usage: $0 short|long|threads" >&2
    exit 2
    ;;
esac
