#!/usr/bin/env bash
# The cost of MPI mode: the same work as N MPI ranks of 1 job (mpirun, a build
# with --features mpi) and as N jobs of one process (N = cores by default:
# ranks waiting in a collective poll for it and would take an oversubscribed
# machine's cores from the ranks still working), alternating round by
# round on one tmpfs; prints medians and ratios per phase. There is no MPI
# peer in Debian (IOR and mdtest are not packaged), so the baseline is fslab's
# own threads: the ratio is what the barriers, the exact merge and the rank
# processes cost.
#
#   bench/mpi-vs-threads.sh            (needs root for the tmpfs, mpirun, libopenmpi-dev)
#   ROUNDS=5 N=4 bench/mpi-vs-threads.sh
#
# Expectation: ratios within noise of 1.0 (the merge happens after the timed phase).
source "$(dirname "$0")/lib.sh"
need mpirun python3
N=${N:-$(nproc)}
[ "$(id -u)" = 0 ] || { echo "bench: needs root (tmpfs mount)" >&2; exit 2; }
(cd "$root" && cargo build --release -q --features mpi --target-dir target/mpi)
MPI_FSLAB="$root/target/mpi/release/fslab"
make_work
mkdir -p "$work/t"
mount -t tmpfs -o size=4g,nr_inodes=2m tmpfs "$work/t"; mnts+=("$work/t")

run_pair() {  # run_pair LABEL KEYS ARGS...: ROUNDS of (threads, ranks)
    local label=$1 keys=$2; shift 2
    rm -f "$work"/th*.json "$work"/rk*.json
    for i in $(seq "$ROUNDS"); do
        "$MPI_FSLAB" "$@" --jobs "$N" --target "$work/t" --quiet --output "json:$work/th$i.json"
        mpirun --allow-run-as-root --oversubscribe -np "$N" "$MPI_FSLAB" "$@" --jobs 1 --target "$work/t" \
            --quiet --output "json:$work/rk$i.json"
    done
    python3 - "$work" "$ROUNDS" "$label" "$keys" <<'PY'
import json, statistics, sys
work, rounds, label, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def rates(prefix):
    out = {}
    for i in range(1, rounds + 1):
        for d in json.load(open(f"{work}/{prefix}{i}.json"))["cells"][0]["directions"]:
            out.setdefault(d.get("phase") or d["dir"], []).append(d[key])
    return {k: statistics.median(v) for k, v in out.items()}
th, rk = rates("th"), rates("rk")
for k in th:
    print(f"  {label:5} {k:14} threads {th[k]:12.0f}  ranks {rk[k]:12.0f}  RATIO ranks/threads = {rk[k] / th[k]:.2f}")
PY
}

echo "== meta: $N x 100000 files in 10 directories, tmpfs, $ROUNDS rounds (ops/s, medians)"
run_pair meta iops meta --files 100k --dirs 10
echo "== io: $N x 256 MiB sequential 1 MiB writes, tmpfs, $ROUNDS rounds (MB/s, medians)"
run_pair io mb_s io --rw write --bs 1m --size 256m
