#!/usr/bin/env bash
# What `--anatomy` and `--explain-slow` cost (issue 36): metadata creates
# without and with the tracing, alternating (the order swapped every round),
# the median of the per-round ratios of the create rate printed against the
# targets:
#   - tmpfs, no xattr (about 100k creates/s here): with --anatomy <= 3 % slower;
#   - XFS on a loop device, 256-byte xattr (about 10k/s): <= 1 % slower;
#   - with QUICK=1, the quick suite with --explain-slow 100ms against
#     without (every cell's ops/s): <= 1 % slower.
#
#   bench/anatomy-overhead.sh                   (needs root, mkfs.xfs, losetup)
#   ROUNDS=9 FILES=100k QUICK=1 bench/anatomy-overhead.sh
source "$(dirname "$0")/lib.sh"
need mkfs.xfs losetup python3
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF, mounts)" >&2; exit 2; }
ROUNDS=${ROUNDS:-7}
FILES=${FILES:-50k}
build_fslab
make_work
tmp="$work/tmpfs"; mkdir -p "$tmp"; mount -t tmpfs -o size=2g fslab-bench "$tmp"; mnts+=("$tmp")
xfs="$work/xfs"; mkdir -p "$xfs"; mnts+=("$xfs")
attach_loop 2G
mkfs.xfs -q -f "$dev"
mount "$dev" "$xfs"

run() { # run NAME TARGET [flags]
    local name=$1 target=$2; shift 2
    "$FSLAB" meta --target "$target" --files "$FILES" --order seq \
        --quiet --no-telemetry --output "json:$work/$name.json" "$@"
}
rate() { json "$work/$1.json" 'd["cells"][0]["directions"][0]["iops"]'; }
# creates per CPU-second of fslab: what tracing costs fslab's thread, which
# other work on a shared machine disturbs less than the rate
per_cpu() { json "$work/$1.json" 'd["cells"][0]["directions"][0]["iops"] * 100 / d["cells"][0]["directions"][0]["cpu_percent"]'; }
# the median of per-round ratios, to 3 decimals (1 % is the target)
mratio() { python3 -c "import statistics,sys; a=sys.argv[1].split(); b=sys.argv[2].split(); print(f'{statistics.median(float(x)/float(y) for x,y in zip(a,b)):.3f}')" "$1" "$2"; }

compare() { # compare LABEL TARGET TARGET_PCT [meta flags]
    local label=$1 target=$2 pct=$3; shift 3
    local plain=() traced=() plain_cpu=() traced_cpu=()
    for r in $(seq 1 "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then
            run p$r "$target" "$@"; run t$r "$target" --anatomy "$@"
        else
            run t$r "$target" --anatomy "$@"; run p$r "$target" "$@"
        fi
        plain+=("$(rate p$r)"); traced+=("$(rate t$r)")
        plain_cpu+=("$(per_cpu p$r)"); traced_cpu+=("$(per_cpu t$r)")
        printf '%s round %d: without %8.0f creates/s, --anatomy %8.0f (%s)\n' "$label" "$r" "${plain[-1]}" "${traced[-1]}" \
            "$(ratio "${traced[-1]}" "${plain[-1]}")"
    done
    local m; m=$(mratio "${traced[*]}" "${plain[*]}")
    echo "$label: median creates/s without $(median "${plain[@]}"), with --anatomy $(median "${traced[@]}");" \
        "ratio $m (target >= $(python3 -c "print(1 - $pct / 100)")); per CPU-second $(mratio "${traced_cpu[*]}" "${plain_cpu[*]}")"
}

compare "tmpfs" "$tmp" 3
compare "xfs+xattr" "$xfs" 1 --xattr user.test:256

if [ "${QUICK:-0}" = 1 ]; then
    q="$work/quick"; mkdir -p "$q"
    quick() { (cd "$q" && "$FSLAB" run --quiet --no-telemetry --output "json:$work/$1.json" "${@:2}" >/dev/null); }
    # every cell's ops/s, in the order of the cells
    rates() { json "$work/$1.json" '" ".join(str(x["iops"]) for c in d["cells"] for x in c["directions"] if x["iops"])'; }
    ratios=()
    for r in 1 2 3; do
        if [ $((r % 2)) = 1 ]; then quick qp$r; quick qt$r --explain-slow 100ms; else quick qt$r --explain-slow 100ms; quick qp$r; fi
        per=$(python3 -c "import sys,statistics; a=sys.argv[1].split(); b=sys.argv[2].split(); print(f'{statistics.median(float(x)/float(y) for x,y in zip(a,b)):.3f}')" "$(rates qt$r)" "$(rates qp$r)")
        ratios+=("$per")
        echo "quick suite round $r: median over the cells' figures of ops/s with --explain-slow / without: $per"
    done
    echo "quick suite: median ratio $(median "${ratios[@]}") (target >= 0.99)"
fi
