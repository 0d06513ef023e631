#!/usr/bin/env bash
# fslab meta vs bonnie++ -n (and a bare syscall loop) on the same filesystems,
# in one run: a tmpfs and an ext4 loop filesystem. Prints per-phase ratios.
#
#   bench/meta-vs-bonnie.sh [N:MAX:MIN:DIRS]     (default 100:256:256:10; needs root)
#
# Targets (issue 4): fslab >= 1.0x bonnie++ on each of the six phases, and
# >= 0.9x the bare loop (bench/meta_loop.c) for create and random stat.
# bonnie++ prints +++++ for phases under 0.5 s: those phases are then rerun
# with 4x the files so that both tools report a rate. Ratios are the median
# of the per-round ratios over ROUNDS (default 9) alternating rounds, with
# the 95 % confidence interval of their geometric mean: on tmpfs both tools
# run at the kernel's limit (the bare loop), and identical fslab binaries
# run back to back differ by up to 2 % per phase, so a ratio whose interval
# holds 1.0 is parity, not a difference.
ROUNDS=${ROUNDS:-9}  # before lib.sh, whose default is 3
source "$(dirname "$0")/lib.sh"
need bonnie++ gcc python3 mkfs.ext4 losetup
[ "$(id -u)" = 0 ] || { echo "bench: needs root (mounts)" >&2; exit 2; }
spec=${1:-100:256:256:10}
build_fslab
make_work
gcc -O2 -o "$work/meta_loop" "$here/meta_loop.c"

mkdir -p "$work/tmpfs" "$work/ext4"
mount -t tmpfs -o size=8g,nr_inodes=4m tmpfs "$work/tmpfs"; mnts+=("$work/tmpfs")
attach_loop 8G
mkfs.ext4 -q -F -I 512 "$dev"
mount "$dev" "$work/ext4"; mnts+=("$work/ext4")

phases=(seq-create seq-stat seq-delete random-create random-stat random-delete)

compare() {  # compare FS SPEC: ROUNDS alternating rounds, medians per phase
    local fs=$1 s=$2 d="$work/$1"
    IFS=: read -r n max min dirs <<<"$s"
    rm -f "$work"/r*.csv "$work"/r*.json "$work"/r*.bare
    for i in $(seq "$ROUNDS"); do
        # which tool goes first alternates from round to round
        run_bonnie() { bonnie++ -d "$d" -s0 -n "$s" -r 0 -u root -q 2>/dev/null | tail -1 > "$work/r$i.csv"; }
        run_fslab() { "$FSLAB" meta --target "$d" --bonnie "$s" --quiet --output "json:$work/r$i.json"; }
        if ((i % 2)); then run_bonnie; run_fslab; else run_fslab; run_bonnie; fi
        "$work/meta_loop" "$d" $((n * 1024)) "${dirs:-1}" "${max:-0}" > "$work/r$i.bare"
    done
    python3 - "$work" "$ROUNDS" "$fs" "$s" <<'PY'
import json, math, statistics, sys
work, rounds, fs, spec = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
# two-sided 95 % Student t quantiles by degrees of freedom
T95 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13]

def ci(ratios):
    """95 % confidence interval of the geometric mean of per-round ratios:
    says whether a ratio near 1.0 is a difference or the machine's noise."""
    logs = [math.log(r) for r in ratios]
    if len(logs) < 2:
        return ""
    m, s = statistics.mean(logs), statistics.stdev(logs)
    h = T95[min(len(logs) - 2, len(T95) - 1)] * s / math.sqrt(len(logs))
    return f" [95% CI {math.exp(m - h):.2f}-{math.exp(m + h):.2f}]"
names = ["seq-create", "seq-stat", "seq-delete", "random-create", "random-stat", "random-delete"]
bare_key = {"seq-create": "create_per_sec", "random-stat": "random_stat_per_sec"}
todo = []
for i, ph in enumerate(names):
    f, b, bare = [], [], []
    for r in range(1, rounds + 1):
        csv = open(f"{work}/r{r}.csv").read().strip().split(",")
        meta = json.load(open(f"{work}/r{r}.json"))["cells"][0]["directions"]
        f.append(next(d for d in meta if d["phase"] == ph)["iops"])
        if not csv[26 + 2 * i].startswith("+"):
            b.append(int(csv[26 + 2 * i]))
        if ph in bare_key:
            bare.append(float(dict(l.split() for l in open(f"{work}/r{r}.bare"))[bare_key[ph]]))
    fm = statistics.median(f)
    line = f"  {fs:5} -n {spec:16} {ph:14} fslab {fm:9.0f}/s"
    if len(b) < rounds:
        line += "  bonnie++ +++++ (< 0.5 s)"
        todo.append(ph)
    else:
        # the median of the per-round ratios: each compares runs seconds apart
        bm = statistics.median(b)
        rs = [x / y for x, y in zip(f, b)]
        line += f"  bonnie++ {bm:9.0f}/s  RATIO fslab/bonnie++ = {statistics.median(rs):.2f}{ci(rs)}"
    if bare:
        rs = [x / y for x, y in zip(f, bare)]
        line += f"  bare {statistics.median(bare):9.0f}/s  RATIO fslab/bare = {statistics.median(rs):.2f}{ci(rs)}"
    print(line)
open(f"{work}/todo", "w").write(" ".join(todo))
PY
}

for fs in tmpfs ext4; do
    echo "== $fs ($ROUNDS rounds; rates are medians, ratios medians of per-round ratios)"
    compare "$fs" "$spec"
    if [ -s "$work/todo" ]; then
        IFS=: read -r n rest <<<"$spec"
        echo "   bonnie++ phases under 0.5 s ($(cat "$work/todo")): again with $((n * 4)) x 1024 files"
        compare "$fs" "$((n * 4)):$rest"
    fi
done
